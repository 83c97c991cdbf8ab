// The keep-alive p99 of every peer under each placement (shared, pinned: bench/placement.ts) and
// with the open-loop generator (bench/openloop.c), peers and placements interleaved in one run:
// per round every peer once (order rotated), and within a peer's turn both placements on the same
// process (order reversed every other round). Prints per-round tables (each peer's spread and the
// kubeward/nginx ratio's) and writes the samples as JSON. For docs/proxy-performance.md,
// "Measuring the p99 apart from the scheduler (session 6)". Run after npm run build, under the bench lock.
// Usage: node bench/placement-ab.ts [--rounds N] [--duration S] [--placement shared|pinned|both]
//   [--no-wrk] [--spin] [--rates 6000,500] [--min-requests N] [--arrivals poisson|even] [--peers kubeward,nginx,haproxy,direct] [--out FILE]
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createTestCa } from '../testkit/certs.ts';
import { freePort } from '../testkit/wait-for.ts';
import { mediansOf, PEERS, peerOrder, type Peer, type Sample } from './bench-stats.ts';
import { measureVariant, variantMetrics, type VariantSettings } from './isolation.ts';
import { pacedScript, type LoadSettings } from './measure-perf.ts';
import { buildOpenloop, openloopMissing, parseArrivals, parseRates, type Arrivals } from './openloop.ts';
import { parsePlacements, type Placement } from './placement.ts';
import { ProcessGroup } from './process-group.ts';
import { renderSpreadTable } from './round-spread.ts';
import { startBackend, startProxy, type PeerEnv } from './start-peer.ts';

const { values: opt } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '4' },
    placement: { type: 'string', default: 'both' },
    'no-wrk': { type: 'boolean', default: false },
    rates: { type: 'string', default: '6000,500' },
    // A low rate's window lasts until it has this many requests (a p99 over 1 % of them).
    'min-requests': { type: 'string', default: '4000' },
    arrivals: { type: 'string', default: 'poisson' },
    peers: { type: 'string', default: 'kubeward,nginx,haproxy,direct' },
    out: { type: 'string' },
    // A window in which other processes used more than this much of one CPU is marked and left out of the ranges.
    'quiet-max': { type: 'string', default: '10' },
    // A SCHED_IDLE busy loop on each CPU for the whole run, so no vCPU halts between requests (a
    // cross-CPU wake-up of a halted vCPU goes through the hypervisor: docs/proxy-performance.md).
    // Any runnable task preempts it at once; every peer runs with it alike. CPU busy shares then read 100 %.
    spin: { type: 'boolean', default: false },
    // Print the tables of earlier runs' JSON files instead of measuring.
    report: { type: 'string', multiple: true, default: [] },
  },
});
const repo = new URL('..', import.meta.url).pathname;
const rounds = Number(opt.rounds);
const durationS = Number(opt.duration);
const placements = parsePlacements(opt.placement);
const peers = opt.peers.split(',') as Peer[];
for (const p of peers) if (!(PEERS as readonly string[]).includes(p)) throw new Error(`--peers: ${p} is not one of ${PEERS.join(', ')}`);
const rates = parseRates(opt.rates);
const arrivals = parseArrivals(opt.arrivals);

const quietMax = Number(opt['quiet-max']);

function say(text: string): void {
  process.stderr.write(`[placement ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
}

async function main(): Promise<void> {
  const group = new ProcessGroup();
  process.on('exit', () => group.killAllNow());
  const dir = await mkdtemp(join(tmpdir(), 'kw-placement-'));
  const startedAt = new Date();
  const samples: Sample[] = [];
  try {
    const missing = rates.length > 0 ? await openloopMissing() : undefined;
    if (missing) throw new Error(`open loop: ${missing}`);
    const env: PeerEnv = { group, dir, kubewardMain: join(repo, 'bin/kubeward.js'), nodeBin: process.execPath, kubewardExtraArgs: [] };
    const port = await freePort();
    // A TLS port beside the plain one for HAProxy's check-ssl, as npm run bench has (without it HAProxy marks the server down).
    const checkPort = await freePort();
    const ca = await createTestCa('kubeward-bench-ca', dir);
    const server = await ca.issueServer('backend', ['IP:127.0.0.1', 'DNS:localhost']);
    const tls = { caFile: ca.certFile, ca: ca.cert, certFile: server.certFile, keyFile: server.keyFile };
    const backend = await startBackend(env, { port, checkPort, tls, name: 'perf', readyzDownFlag: join(dir, 'never') });
    if (opt.spin) {
      for (const cpu of cpus().keys()) group.start(`spin-${cpu}`, 'chrt', ['-i', '0', 'taskset', '-c', String(cpu), 'sh', '-c', 'while :; do :; done']);
    }
    const saturated: LoadSettings = { durationS, connections: 64, threads: 2 };
    const paced: LoadSettings = { ...saturated, script: join(dir, 'paced.lua') };
    await writeFile(paced.script!, pacedScript(10));
    const settings: VariantSettings = {
      wrk: !opt['no-wrk'],
      saturated,
      paced,
      openloopRates: rates,
      openloopBin: rates.length > 0 ? await buildOpenloop(dir) : undefined,
      openloopConnections: 64,
      openloopDurationS: durationS,
      openloopMinRequests: Number(opt['min-requests']),
      arrivals,
    };
    for (let round = 1; round <= rounds; round++) {
      for (const peer of peerOrder(peers, round - 1)) {
        const proxy =
          peer === 'direct' ? undefined : await startProxy(env, peer, { upstreamPorts: [port], tlsUpstreams: false, haproxyCheckPort: checkPort }, `r${round}`);
        try {
          await new Promise((r) => setTimeout(r, 1000)); // kubeward's first checks, nginx's workers forked
          const metrics: Record<string, number> = { load1: loadavg()[0]! };
          const order = round % 2 === 1 ? placements : [...placements].reverse();
          for (const placement of order) {
            const got = await measureVariant(
              { port: proxy?.port ?? port, proxyPid: proxy?.process.pid, backendPid: backend.pid },
              placement,
              settings,
              round * 7919,
            );
            Object.assign(metrics, got);
          }
          samples.push({ peer, round, metrics });
          say(
            `round ${round} ${peer}: ${Object.entries(metrics)
              .filter(([k]) => /P99Ms|Busy|Foreign|load1|kaRps/.test(k))
              .map(([k, v]) => `${k}=${v.toFixed(2)}`)
              .join(' ')}`,
          );
        } finally {
          if (proxy) await group.stop(proxy.process);
        }
      }
    }
  } finally {
    await group.stopAll();
    await rm(dir, { recursive: true, force: true });
  }
  process.stdout.write(`${renderRun(samples, placements, rates, arrivals, peers)}\n`);
  const out = opt.out ?? join(repo, `bench/results/${startedAt.toISOString().slice(0, 16).replace(':', '')}-placement.json`);
  await writeFile(
    out,
    `${JSON.stringify({ date: startedAt.toISOString(), settings: { rounds, durationS, placements, rates, arrivals, peers, wrk: !opt['no-wrk'], minRequests: Number(opt['min-requests']), spin: opt.spin }, medians: mediansOf(samples), samples }, null, 2)}\n`,
  );
  process.stdout.write(`written: ${out}\n`);
}

function renderRun(samples: readonly Sample[], placements: readonly Placement[], rates: readonly number[], arrivals: Arrivals, peers: readonly Peer[]): string {
  const wrk = samples.some((s) => Object.keys(s.metrics).some((k) => k.includes(':ka')));
  const rows = [
    { key: 'load1', label: 'load average (1 min) at the turn start', digits: 2 },
    ...variantMetrics(placements, {
      wrk,
      openloopRates: rates,
      arrivals,
      openloopConnections: 64,
    }),
  ];
  const ratios: Array<[Peer, Peer]> = [];
  if (peers.includes('kubeward') && peers.includes('nginx')) ratios.push(['kubeward', 'nginx']);
  if (peers.includes('kubeward-2') && peers.includes('nginx-2')) ratios.push(['kubeward-2', 'nginx-2']);
  return renderSpreadTable(samples, rows, peers, ratios, quietMax);
}

async function report(files: readonly string[]): Promise<void> {
  for (const file of files) {
    const run = JSON.parse(await readFile(file, 'utf8')) as {
      date: string;
      settings: { placements: Placement[]; rates: number[]; arrivals: Arrivals; peers: Peer[] };
      samples: Sample[];
    };
    const s = run.settings;
    process.stdout.write(`${file} (${run.date}; * = other processes used more than ${quietMax} % of one CPU in that window)\n\n`);
    process.stdout.write(`${renderRun(run.samples, s.placements, s.rates, s.arrivals, s.peers)}\n\n`);
  }
}

(opt.report.length > 0 ? report(opt.report) : main()).catch((err: unknown) => {
  process.stderr.write(`placement-ab failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
