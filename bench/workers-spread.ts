// How each peer spreads client connections over its processes, and what that costs: per round and
// peer (order reversed every other round), the count of a wrk run's 64 connections held by each
// process (from ss), the paced keep-alive p50/p99 with CPU per request, and the CPU per new
// connection (wrk with `Connection: close`). For comparing ways of sharing the listen addresses
// between `--workers` (docs/proxy-performance.md, "Workers sharing one listening socket"). Run after
// npm run build, under the bench lock.
// Usage: node bench/workers-spread.ts [--rounds N] [--duration S]
//   [--peer nginx|nginx-2|kubeward|kubeward-2|haproxy|LABEL=[--node-flag ...] /path/to/bin/kubeward.js[@--flag ...]]...
import { execFile } from 'node:child_process';
import { loadavg } from 'node:os';
import { parseArgs, promisify } from 'node:util';
import { interleavePeers, startPeerProxy, type PeerTurn } from './interleaved-peers.ts';
import { measureWrk, runWrk, type LoadSettings } from './measure-perf.ts';

const run = promisify(execFile);
const { values: opt } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    duration: { type: 'string', default: '4' },
    spreads: { type: 'string', default: '4' },
    peer: { type: 'string', multiple: true, default: ['kubeward-2', 'nginx-2'] },
  },
});
const load: LoadSettings = { durationS: Number(opt.duration), connections: 64, threads: 2 };

/** Established connections on the proxy's listen port, counted per process that holds them, largest first. */
async function perProcess(port: number): Promise<number[]> {
  const { stdout } = await run('ss', ['-tnpH', 'state', 'established', `( sport = :${port} )`]);
  const counts = new Map<string, number>();
  for (const m of stdout.matchAll(/pid=(\d+)/g)) counts.set(m[1]!, (counts.get(m[1]!) ?? 0) + 1);
  return [...counts.values()].sort((a, b) => b - a);
}

/** One paced wrk run of 64 connections, counted per process once they are all open. */
async function spread(port: number, paced: LoadSettings): Promise<string> {
  const url = `http://127.0.0.1:${port}/`;
  const wrk = runWrk(url, { ...paced, durationS: 2 });
  let counts: number[] = [];
  for (let i = 0; i < 40; i++) {
    await new Promise((r) => setTimeout(r, 50));
    counts = await perProcess(port);
    if (counts.reduce((a, b) => a + b, 0) >= load.connections) break;
  }
  await wrk;
  return counts.join('/');
}

async function measure(turn: PeerTurn): Promise<void> {
  const { env, spec, round, paced } = turn;
  const proxy = await startPeerProxy(turn);
  const pid = proxy.process.pid;
  const url = `http://127.0.0.1:${proxy.port}/`;
  try {
    await runWrk(url, { ...load, durationS: 1 });
    const spreads: string[] = [];
    for (let i = 0; i < Number(opt.spreads); i++) spreads.push(await spread(proxy.port, paced));
    const p = await measureWrk(url, pid, paced);
    await runWrk(url, { ...load, durationS: 1 }, ['Connection: close']);
    const nc = await measureWrk(url, pid, load, ['Connection: close']);
    console.log(
      JSON.stringify({
        peer: spec.label,
        round,
        spreads,
        pacedP50us: Math.round(p.wrk.p50Ms * 1000),
        pacedP99us: Math.round(p.wrk.p99Ms * 1000),
        pacedCpuUsPerReq: p.cpuUsPerRequest?.toFixed(2),
        newConnPerSec: Math.round(nc.wrk.requestsPerSec),
        newConnCpuUs: nc.cpuUsPerRequest?.toFixed(1),
        load: loadavg()[0]!.toFixed(2),
        at: new Date().toISOString().slice(11, 19),
      }),
    );
  } finally {
    await env.group.stop(proxy.process);
  }
}

await interleavePeers({ name: 'spread', peers: opt.peer, rounds: Number(opt.rounds), paced: load, thinkMs: 10 }, measure);
