// The frame the bench's A/B scripts (burst-latency.ts, paced-sched.ts, workers-spread.ts) share:
// one nginx backend, the paced wrk script, and rounds in which every peer is measured once, the
// order of peers reversed every other round so neither side always runs first. Each peer's proxy
// is started fresh for its turn (startPeerProxy) and stopped by the script's measure.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../testkit/wait-for.ts';
import { pacedScript, type LoadSettings } from './measure-perf.ts';
import { parsePeer, type PeerSpec } from './peer-spec.ts';
import { ProcessGroup } from './process-group.ts';
import { startBackend, startProxy, type PeerEnv, type StartedProxy } from './start-peer.ts';

const repo = new URL('..', import.meta.url).pathname;

export interface PeerTurn {
  env: PeerEnv;
  spec: PeerSpec;
  round: number;
  backend: { port: number; pid: number };
  /** The paced load, its Lua script written. */
  paced: LoadSettings;
}

export interface InterleaveOptions {
  /** Prefix of the temporary directory (kw-<name>-). */
  name: string;
  /** --peer values (peer-spec.ts). */
  peers: readonly string[];
  rounds: number;
  /** The paced load without its script; thinkMs is pacedScript's mean wait. */
  paced: Omit<LoadSettings, 'script'>;
  thinkMs: number;
}

export async function interleavePeers(o: InterleaveOptions, measure: (turn: PeerTurn) => Promise<void>): Promise<void> {
  const peers = o.peers.map((p) => parsePeer(p, repo));
  const group = new ProcessGroup();
  process.on('exit', () => group.killAllNow());
  const dir = await mkdtemp(join(tmpdir(), `kw-${o.name}-`));
  try {
    const env: PeerEnv = { group, dir, kubewardMain: join(repo, 'bin/kubeward.js'), nodeBin: process.execPath, kubewardExtraArgs: [] };
    const port = await freePort();
    const backend = await startBackend(env, { port, name: 'perf', readyzDownFlag: join(dir, 'never') });
    const paced: LoadSettings = { ...o.paced, script: join(dir, 'paced.lua') };
    await writeFile(paced.script!, pacedScript(o.thinkMs));
    for (let round = 1; round <= o.rounds; round++) {
      const order = round % 2 === 1 ? peers : [...peers].reverse();
      for (const spec of order) await measure({ env, spec, round, backend: { port, pid: backend.pid }, paced });
    }
  } finally {
    await group.stopAll();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The turn's proxy in front of the backend, as its peer spec says (build, Node flags, proxy flags). */
export function startPeerProxy(turn: PeerTurn): Promise<StartedProxy> {
  const { env, spec, round, backend } = turn;
  return startProxy(
    { ...env, kubewardMain: spec.main, kubewardNodeArgs: spec.nodeArgs, kubewardExtraArgs: spec.extraArgs },
    spec.peer,
    { upstreamPorts: [backend.port], tlsUpstreams: false },
    `${spec.label}-r${round}`,
  );
}
