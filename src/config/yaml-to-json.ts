// The YAML parser as a process of its own: reads a config file's text on stdin, writes one JSON
// line to stdout, {"data": ...} or {"error": "<reason and position>"}, and exits. readConfigFile
// (yaml-process.ts) runs it so that a daemon never loads yaml: an ES module is never unloaded, and
// yaml's code and the garbage of one parse were 0.6 MiB of watch's private memory at rest
// (docs/footprint.md). Run with no flags by the same Node binary; the build ships it as dist/yaml-to-json.js.
import { parse } from 'yaml';
import { describeError } from '../base/errors.ts';
import { encodeYamlValue } from './yaml-json.ts';

/** The answer line for one config text: the data, or the reason and position of the parse error. */
function answer(text: string): string {
  try {
    return JSON.stringify({ data: encodeYamlValue(parse(text)) });
  } catch (err) {
    // Reason and position only, never the quoted line (it may hold a secret).
    return JSON.stringify({ error: describeError(err).split('\n')[0] });
  }
}

async function main(): Promise<void> {
  let text = '';
  process.stdin.setEncoding('utf8');
  for await (const chunk of process.stdin) text += chunk as string;
  process.stdout.write(answer(text) + '\n');
}

await main();
