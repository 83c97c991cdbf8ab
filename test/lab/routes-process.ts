// Runs `kubeward routes` inside a lab namespace, reads its /status and /metrics through that
// namespace's helper (the admin listener is on the namespace's own loopback), and stops it.
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../../testkit/wait-for.ts';
import { kubewardArgv } from '../../testkit/kubeward-process.ts';
import { stopChild, type LabNet } from './lab-net.ts';
import type { NsAgent } from './ns-agent.ts';
import { adminTokenFixture } from '../../testkit/admin-token.ts';

/** /status needs the admin token. */
const ADMIN_TOKEN = adminTokenFixture();

const ADMIN = '127.0.0.1:9451';

export interface RoutesStatus {
  generation: number;
  lastSync?: { ok: boolean; error?: string };
  drift: { repairs: number };
  vips: { vip: string; file: string; up: boolean; reason: string; heartbeatAgeMs?: number; rules: string[] }[];
  conflictingRoutes: { vip: string; removed: boolean; route: { dst: string } }[];
  badStateFiles: string[];
  foreignTables: string[];
  withoutStateFile: 'up' | 'down';
  metadata?: { lastGood?: { vips: string[] }; lastError?: string; failures: number };
  downPeers?: {
    redirects: { vip: string; to: string }[];
    unserved: { vip: string; reason: string }[];
    checks: { peers: { peer: string; healthy: boolean; detail?: string }[] };
  };
}

/** A fresh state directory for one test (the lab's processes share the host's file system). */
export async function makeStateDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kwl-state-'));
  // kubeward watch's heartbeats go next to the state directory (<dir>-heartbeat), never into it.
  t.after(() => Promise.all([rm(dir, { recursive: true, force: true }), rm(`${dir}-heartbeat`, { recursive: true, force: true })]).then(() => undefined));
  return dir;
}

export class RoutesProcess {
  readonly child: ChildProcess;
  readonly logs: string[] = [];
  readonly #agent: NsAgent;
  /** What the last /status request got (an HTTP status or a connection error), for failure messages. */
  lastStatusAnswer = '';

  /** env: variables for the daemon only (set with env(1) inside the namespace). */
  constructor(net: LabNet, ns: string, agent: NsAgent, args: string[], env: Record<string, string> = {}) {
    this.#agent = agent;
    const prefix = Object.keys(env).length ? ['env', ...Object.entries(env).map(([k, v]) => `${k}=${v}`)] : [];
    const argv = [...prefix, ...kubewardArgv(['routes', ...ADMIN_TOKEN.args, '--admin-address', ADMIN, '--log-format', 'json', ...args])];
    this.child = net.spawn(ns, argv);
    this.child.stdout!.resume();
    createInterface({ input: this.child.stderr! }).on('line', (l) => this.logs.push(l));
  }

  /** Starts it and waits until its first sync succeeded. */
  static async start(net: LabNet, ns: string, agent: NsAgent, args: string[], env: Record<string, string> = {}): Promise<RoutesProcess> {
    const p = new RoutesProcess(net, ns, agent, args, env);
    const exited = new Promise<never>((_, reject) =>
      p.child.once('exit', (code) => reject(new Error(`kubeward routes ${args.join(' ')} exited ${code}: ${p.logs.slice(-3).join(' | ')}`))),
    );
    exited.catch(() => {});
    const ready = waitFor(async () => (await p.status())?.lastSync?.ok, { timeoutMs: 15_000, intervalMs: 100, what: `kubeward routes in ${ns} ready` }).catch(
      (err: Error) => {
        // The daemon's own words say why it never became ready (a sync that keeps failing, a listener that never bound).
        throw new Error(
          `${err.message}; last /status answer: ${p.lastStatusAnswer || '(none)'}; its last log lines: ${p.logs.slice(-5).join(' | ') || '(none)'}`,
        );
      },
    );
    ready.catch(() => {}); // when the process exits first, the race has already failed the test
    await Promise.race([ready, exited]);
    return p;
  }

  async status(): Promise<RoutesStatus | undefined> {
    if (this.child.exitCode !== null) throw new Error(`kubeward routes exited ${this.child.exitCode}: ${this.logs.slice(-5).join('\n')}`);
    const r = await this.#agent.httpGet(`http://${ADMIN}/status`, 1000, ADMIN_TOKEN.headers);
    this.lastStatusAnswer = 'status' in r ? `HTTP ${r.status}` : r.error;
    return 'status' in r && r.status === 200 ? (JSON.parse(r.body) as RoutesStatus) : undefined;
  }

  async metric(name: string): Promise<number | undefined> {
    const r = await this.#agent.httpGet(`http://${ADMIN}/metrics`, 1000);
    if (!('status' in r)) return undefined;
    const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(r.body);
    return m ? Number(m[1]) : undefined;
  }

  /** Sends the signal and waits for the exit code. */
  stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    return stopChild(this.child, signal, 10_000);
  }
}
