// The bench's memory figures 1 and 2 for each peer, interleaved in one run (the way run-bench.ts
// takes them): the proxy's memory at rest two seconds after its start (RSS and private anonymous,
// over its process tree), then the RSS per idle connection while N are held (measureIdle). For
// comparing data paths (--relay handle and native) without the rest of the bench. Run after
// npm run build, under the bench lock.
// Usage: node bench/rest-memory.ts [--rounds N] [--idle N] [--peer nginx|kubeward|LABEL=/path/to/bin/kubeward.js[@--flag ...]]...
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { interleavePeers, startPeerProxy } from './interleaved-peers.ts';
import { measureIdle } from './measure-perf.ts';
import { readTreeMemory } from './proc-stats.ts';

const { values: opt } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    idle: { type: 'string', default: '5000' },
    peer: { type: 'string', multiple: true, default: ['kubeward', 'nginx'] },
  },
});
const MiB = 1024 * 1024;

await interleavePeers(
  { name: 'rest', peers: opt.peer, rounds: Number(opt.rounds), paced: { durationS: 1, connections: 64, threads: 2 }, thinkMs: 10 },
  async (turn) => {
    const proxy = await startPeerProxy(turn);
    const pid = proxy.process.pid!;
    try {
      await new Promise((r) => setTimeout(r, 2000));
      const rest = readTreeMemory(pid);
      const idle = await measureIdle(proxy.port, turn.backend.port, pid, Number(opt.idle));
      console.log(
        JSON.stringify({
          peer: turn.spec.label,
          round: turn.round,
          restRssMiB: Number((rest.rssBytes / MiB).toFixed(1)),
          restAnonMiB: Number((rest.anonBytes / MiB).toFixed(1)),
          idleKiBPerConn: Number((idle.bytesPerConnection / 1024).toFixed(2)),
          load: loadavg()[0]!.toFixed(2),
          at: new Date().toISOString().slice(11, 19),
        }),
      );
    } finally {
      await turn.env.group.stop(proxy.process);
    }
  },
);
