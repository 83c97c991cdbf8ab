// kubeward's other daemons at rest, as shipped (bin/kubeward.js runs the build): watch, routes and
// the agent (proxy + watch + routes), each alone in a network namespace of its own with an HTTPS
// apiserver stand-in on its loopback (routes writes nftables rules there, never on the machine).
// Memory is read from /proc/<pid>/smaps_rollup once the daemon is ready and has settled. Every
// process here runs with the shipped units' environment (daemon-env.ts), as env.group starts them.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from '../testkit/wait-for.ts';
import { median } from './bench-stats.ts';
import { shippedDaemonEnv } from './daemon-env.ts';
import { readRollup } from './proc-stats.ts';
import type { ProcessGroup } from './process-group.ts';

const run = promisify(execFile);
const MiB = 2 ** 20;
export const DAEMON_MODES = ['watch', 'routes', 'agent'] as const;
export type DaemonMode = (typeof DAEMON_MODES)[number];

export interface ModeMemory {
  mode: DaemonMode;
  rssMB: number;
  anonMB: number;
  pssMB: number;
}

export interface ModesEnv {
  group: ProcessGroup;
  dir: string;
  nodeBin: string;
  /** bin/kubeward.js */
  kubewardMain: string;
  /** testkit/apiserver-standin-main.ts */
  standinMain: string;
  cert: { caFile: string; certFile: string; keyFile: string };
}

/** Why the modes cannot be measured here, or undefined (namespaces need root, routes needs nft). */
export async function modesSkipReason(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'needs root (network namespaces)';
  try {
    await run('sh', ['-c', 'command -v nft && command -v ip']);
  } catch {
    return 'needs nft and ip (Debian: nftables iproute2)';
  }
  return undefined;
}

/** Each mode measured `rounds` times (a fresh namespace and process each time); medians. */
export async function measureModesAtRest(env: ModesEnv, rounds: number, say: (s: string) => void): Promise<ModeMemory[]> {
  const out: ModeMemory[] = [];
  for (const mode of DAEMON_MODES) {
    const samples: Array<Omit<ModeMemory, 'mode'>> = [];
    for (let r = 1; r <= rounds; r++) samples.push(await measureOnce(env, mode, r));
    const m = { mode, rssMB: median(samples.map((s) => s.rssMB))!, anonMB: median(samples.map((s) => s.anonMB))!, pssMB: median(samples.map((s) => s.pssMB))! };
    say(`at rest ${mode}: RSS ${m.rssMB.toFixed(1)} MiB, private ${m.anonMB.toFixed(1)} MiB, PSS ${m.pssMB.toFixed(1)} MiB (median of ${rounds})`);
    out.push(m);
  }
  return out;
}

const ADMIN = '127.0.0.1:9456';

/** The config of one mode, as an agent file (an agent with one section is that mode's keys) or flags. */
function configFor(mode: DaemonMode, env: ModesEnv, stateDir: string): string {
  const watch = ['watch:', '  healthUrl: https://127.0.0.1:6443/readyz', `  caFile: ${env.cert.caFile}`, '  vip: [10.0.0.100]', `  stateDir: ${stateDir}`];
  const routes = ['routes:', '  provider: azure', `  stateDir: ${stateDir}`];
  const proxy = ['proxy:', '  listen: ["127.0.0.1:16443"]', '  upstream: ["127.0.0.1:6443"]', `  caFile: ${env.cert.caFile}`];
  return [`adminAddress: ${ADMIN}`, 'logLevel: warn', ...(mode === 'agent' ? [...proxy, ...watch, ...routes] : mode === 'watch' ? watch : routes), ''].join(
    '\n',
  );
}

async function measureOnce(env: ModesEnv, mode: DaemonMode, round: number): Promise<Omit<ModeMemory, 'mode'>> {
  const ns = `kwb-${process.pid}-${mode}-${round}`;
  await run('ip', ['netns', 'add', ns]);
  let standin: ChildProcess | undefined;
  try {
    await run('ip', ['netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up']);
    standin = spawn(
      'ip',
      ['netns', 'exec', ns, env.nodeBin, env.standinMain, '--cert', env.cert.certFile, '--key', env.cert.keyFile, '--host', '127.0.0.1', '--port', '6443'],
      { stdio: ['pipe', 'pipe', 'ignore'], env: shippedDaemonEnv(process.env) },
    );
    await new Promise<void>((resolve, reject) => {
      standin!.once('exit', (code) => reject(new Error(`apiserver stand-in exited ${code}`)));
      standin!.stdout!.once('data', () => resolve());
    });
    const stateDir = join(env.dir, `state-${ns}`);
    const file = join(env.dir, `${ns}.yaml`);
    await writeFile(file, configFor(mode, env, stateDir));
    // A one-section config file runs the mode alone through its own command: `kubeward watch --config`
    // takes the same keys without the section. For watch and routes, run the mode itself.
    const args = mode === 'agent' ? ['agent', '--config', file] : [mode, '--config', await sectionFile(env, file, mode)];
    const proc = env.group.start(`kubeward-${mode}-${round}`, 'ip', ['netns', 'exec', ns, env.nodeBin, env.kubewardMain, ...args]);
    try {
      await waitFor(
        async () => {
          if (proc.child.exitCode !== null) throw new Error(`kubeward ${mode} exited: ${proc.stderrTail().slice(-600)}`);
          const r = await run('ip', ['netns', 'exec', ns, 'curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', `http://${ADMIN}/readyz`]).catch(() => ({
            stdout: '',
          }));
          return r.stdout === '200';
        },
        { timeoutMs: 30_000, intervalMs: 200, what: `kubeward ${mode} ready in ${ns}` },
      );
      await new Promise((r) => setTimeout(r, 3000)); // settle: first checks, heartbeats, resyncs
      const m = readRollup(proc.pid);
      if (!m) throw new Error(`kubeward ${mode} is gone`);
      return { rssMB: m.rssBytes / MiB, anonMB: m.anonBytes / MiB, pssMB: m.pssBytes / MiB };
    } finally {
      await env.group.stop(proc, 10_000);
    }
  } finally {
    standin?.kill('SIGTERM');
    await run('ip', ['netns', 'del', ns]).catch(() => undefined);
  }
}

/** The mode's keys without the agent's section (watch and routes run as themselves). */
async function sectionFile(env: ModesEnv, agentFile: string, mode: DaemonMode): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  const lines = (await readFile(agentFile, 'utf8')).split('\n');
  const own = lines.filter((l) => !/^(proxy|watch|routes):$/.test(l)).map((l) => l.replace(/^ {2}/, ''));
  const file = agentFile.replace(/\.yaml$/, `-${mode}.yaml`);
  await writeFile(file, own.join('\n'));
  return file;
}
