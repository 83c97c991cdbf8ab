// Runs the YAML parser's process (yaml-to-json.ts) on a config file's text: the daemon itself never
// loads yaml (docs/footprint.md). The same Node binary, no flags, the text on stdin, one JSON line back.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { decodeYamlValue } from './yaml-json.ts';

/** From the sources, the .ts next to this file; in the build (dist/chunks/*.js), dist/yaml-to-json.js. */
const PARSER = fileURLToPath(import.meta.url.endsWith('.ts') ? new URL('./yaml-to-json.ts', import.meta.url) : new URL('../yaml-to-json.js', import.meta.url));
const TIMEOUT_MS = 30_000;

export type YamlResult = { data: unknown } | { error: string };

/** The parse of text in a child process (the same Node binary), or the parser's message; throws only when the parser could not run. */
export function parseYamlInChildProcess(text: string): Promise<YamlResult> {
  return new Promise((resolve, reject) => {
    // stderr inherited: yaml's own warnings (an unknown tag) reach the daemon's stderr, as before.
    const child = spawn(process.execPath, [PARSER], { stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS);
    child.stdout.setEncoding('utf8').on('data', (s: string) => (out += s));
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`the YAML parser (${process.execPath} ${PARSER}) did not start: ${e.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      try {
        const r = JSON.parse(out) as { data?: unknown; error?: unknown };
        if (typeof r.error === 'string') return resolve({ error: r.error });
        if ('data' in r) return resolve({ data: decodeYamlValue(r.data) });
      } catch {
        // below: no answer
      }
      const why = signal ? `killed by ${signal}${signal === 'SIGKILL' ? ' (timeout or memory)' : ''}` : `exit ${code}`;
      reject(new Error(`the YAML parser (${PARSER}) gave no answer (${why})`));
    });
    // A parser that died before reading all of stdin: the close handler reports it.
    child.stdin.on('error', () => undefined);
    child.stdin.end(text);
  });
}
