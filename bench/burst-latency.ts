// The paced keep-alive latency of each peer before and after a burst of idle connections, in the
// bench's order (idle connections held and closed, then the saturated load, then paced), peers
// interleaved in one run. For finding what a burst leaves behind (docs/proxy-performance.md, "The
// paced p99 after a burst of connections"). Run after npm run build, under the bench lock.
// Usage: node bench/burst-latency.ts [--rounds N] [--before N] [--after N] [--idle N]
//   [--peer nginx|kubeward|nginx-2|kubeward-2|LABEL=[--node-flag ...] /path/to/bin/kubeward.js[@--flag ...]]...
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { interleavePeers, startPeerProxy, type PeerTurn } from './interleaved-peers.ts';
import { measureIdle, measureWrk, runWrk, type LoadSettings } from './measure-perf.ts';

const { values: opt } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    before: { type: 'string', default: '2' },
    after: { type: 'string', default: '3' },
    idle: { type: 'string', default: '5000' },
    duration: { type: 'string', default: '4' },
    peer: { type: 'string', multiple: true, default: ['kubeward', 'nginx'] },
  },
});
const load: LoadSettings = { durationS: Number(opt.duration), connections: 64, threads: 2 };

function timeWait(): number {
  const out = execFileSync('ss', ['-s'], { encoding: 'utf8' });
  return Number(/timewait (\d+)/.exec(out)?.[1] ?? NaN);
}

function line(label: string, phase: string, r: Awaited<ReturnType<typeof measureWrk>>): void {
  const w = r.wrk;
  console.log(
    JSON.stringify({
      peer: label,
      phase,
      p50us: Math.round(w.p50Ms * 1000),
      p99us: Math.round(w.p99Ms * 1000),
      rps: Math.round(w.requestsPerSec),
      cpuUsPerReq: r.cpuUsPerRequest === undefined ? undefined : Number(r.cpuUsPerRequest.toFixed(2)),
      timewait: timeWait(),
      load: loadavg()[0]!.toFixed(2),
      at: new Date().toISOString().slice(11, 19),
    }),
  );
}

async function measure(turn: PeerTurn): Promise<void> {
  const { env, spec, backend, paced } = turn;
  const proxy = await startPeerProxy(turn);
  const pid = proxy.process.pid;
  const url = `http://127.0.0.1:${proxy.port}/`;
  try {
    await runWrk(url, { ...load, durationS: 1 });
    for (let i = 0; i < Number(opt.before); i++) line(spec.label, `before ${i + 1}`, await measureWrk(url, pid, paced));
    await measureIdle(proxy.port, backend.port, pid, Number(opt.idle));
    line(spec.label, 'saturated after burst', await measureWrk(url, pid, load));
    for (let i = 0; i < Number(opt.after); i++) line(spec.label, `after ${i + 1}`, await measureWrk(url, pid, paced));
  } finally {
    await env.group.stop(proxy.process);
  }
}

await interleavePeers({ name: 'burst', peers: opt.peer, rounds: Number(opt.rounds), paced: load, thinkMs: 10 }, measure);
