// npm run bench: kubeward proxy against nginx stream and HAProxy (as kubespray configures them) and
// a direct connection, interleaved over rounds on this machine. Writes bench/results/<date>.json
// and <date>.md (medians and ratios) and prints the tables. Options: --help.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createTestCa } from '../testkit/certs.ts';
import { freePorts } from '../testkit/wait-for.ts';
import { measureAgain, mediansOf, peerOrder, PEERS, type Peer, type Sample } from './bench-stats.ts';
import { SCENARIOS, type FailoverSample } from './failover-analysis.ts';
import { measureBulk, measureIdle, measureWrk, pacedScript, runWrk, type LoadSettings } from './measure-perf.ts';
import { askedRelay, NGINX_STREAM_MODULE } from './peer-configs.ts';
import { ProcessGroup, daemonStdoutDir } from './process-group.ts';
import { wholeNumber } from './flag-values.ts';
import { readTreeMemory } from './proc-stats.ts';
import { renderResults, type BenchResults } from './render-table.ts';
import { measureModesAtRest, modesSkipReason, type ModeMemory } from './measure-modes.ts';
import { buildShipped } from '../scripts/build.ts';
import { runFailoverRound, type BackendCert, type FailoverSettings } from './run-failover.ts';
import { startBackend, startProxy, type PeerEnv } from './start-peer.ts';
import { freeResultBase } from './result-name.ts';

const MiB = 2 ** 20;

const HELP = `usage: npm run bench -- [--rounds N] [--duration S] [--idle-connections N] [--failover-rounds N]
  [--failover-window S] [--skip-perf] [--skip-modes] [--skip-failover] [--kubeward-arg ARG]... [--nginx-listen PARAM]...
  [--max-steal PCT] [--out DIR] [--daemon-stdout DIR]
kubeward runs as shipped: npm run build first, then bin/kubeward.js (the build with its V8 settings).
It is measured as one process against nginx with one worker, and with --workers 2 against nginx's
two workers (kubespray's setting). Keep-alive is measured at saturation and paced (64 connections,
10 ms on average between a connection's requests). --kubeward-arg adds a flag to every kubeward proxy started.
--nginx-listen adds a parameter to the nginx peers' listen directive: reuseport measures nginx with
the kernel's spread of connections over its workers, as kubeward --workers 2 has it (the figures
then compare against that nginx, not kubespray's; the results say so).
--max-steal (default 3): a peer's round is measured again, up to 3 times, when the hypervisor took
more than PCT % of the machine's CPU time during its keep-alive loads (/proc/stat's steal); the
steal of every load is in the results. 100 never measures again.
--daemon-stdout DIR keeps the standard output of every process the bench starts in DIR (NAME.N.out;
discarded otherwise): with KUBEWARD_V8_FLAGS="... --trace-gc" it holds each collection of the proxy.

docs/benchmark.md says what each figure measures; docs/design/p99-measurement.md why the paced p99
is the latency figure.
--skip-modes leaves out watch, routes and agent at rest (they need root: network namespaces).
Every daemon and peer runs with the environment kubeward's shipped units give it (bench/daemon-env.ts):
PATH and nothing else, so NODE_EXTRA_CA_CERTS, NODE_OPTIONS, SSL_CERT_* and the like in your shell
do not reach them; KUBEWARD_V8_FLAGS is passed on to measure other V8 settings.`;

// --soak DURATION is its own harness (bench/soak/), with its own options.
if (process.argv.includes('--soak') || process.argv.some((a) => a.startsWith('--soak='))) {
  await import('./soak/soak-main.ts');
  await new Promise(() => undefined); // soak-main exits the process
}

const { values: opt } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    'idle-connections': { type: 'string', default: '5000' },
    'failover-rounds': { type: 'string', default: '3' },
    'failover-window': { type: 'string', default: '15' },
    'skip-perf': { type: 'boolean', default: false },
    'skip-failover': { type: 'boolean', default: false },
    'skip-modes': { type: 'boolean', default: false },
    'kubeward-arg': { type: 'string', multiple: true, default: [] },
    'nginx-listen': { type: 'string', multiple: true, default: [] },
    'max-steal': { type: 'string', default: '3' },
    out: { type: 'string' },
    'daemon-stdout': { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (opt.help) {
  process.stdout.write(`${HELP}\n`);
  process.exit(0);
}

const repo = resolve(dirname(new URL(import.meta.url).pathname), '..');
const rounds = positive('rounds', opt.rounds);
const maxSteal = Number(opt['max-steal']);
if (!/^\d+(\.\d+)?$/.test(opt['max-steal']) || maxSteal > 100) {
  process.stderr.write(`bench: --max-steal ${JSON.stringify(opt['max-steal'])}: expected a percentage from 0 to 100\n`);
  process.exit(2);
}
const load: LoadSettings = { durationS: positive('duration', opt.duration), connections: 64, threads: 2 };
/** 100 MB takes a fraction of a second on loopback: several downloads per round steady the figure. */
const BULK_TIMES = 5;
/**
 * The paced keep-alive load: each of the 64 connections waits 10 ms on average (0 to 20, at
 * random) after a response, about 6,000 requests/s, which every peer serves with CPU to spare. At saturation (the unpaced load) a p99 on
 * two cores shared by wrk, the backend and the proxy mostly measures the scheduler's queueing;
 * paced, it measures the latency the proxy adds. An apiserver's load balancer runs far below
 * saturation, so this is the p99 a cluster sees.
 */
const PACED_THINK_MS = 10;
const idleConnections = positive('idle-connections', opt['idle-connections']);
const failover: FailoverSettings = {
  windowMs: positive('failover-window', opt['failover-window']) * 1000,
  warmupMs: 3000,
  intervalMs: 20,
  timeoutMs: 3000,
  hangTimeoutMs: 1000,
};

function positive(name: string, text: string): number {
  const n = wholeNumber(text, 1, Number.MAX_SAFE_INTEGER);
  if (n === undefined) {
    process.stderr.write(`bench: --${name} must be a positive integer, got "${text}"\n${HELP}\n`);
    process.exit(2);
  }
  return n;
}

function checkTools(): void {
  const missing = ['wrk', 'curl', 'nginx', 'haproxy', 'ss'].filter((t) => {
    try {
      execFileSync('sh', ['-c', `command -v ${t}`], { stdio: 'ignore' });
      return false;
    } catch {
      return true;
    }
  });
  if (!existsSync(NGINX_STREAM_MODULE)) missing.push(`${NGINX_STREAM_MODULE} (Debian: libnginx-mod-stream)`);
  if (missing.length > 0) {
    process.stderr.write(`bench: missing ${missing.join(', ')}; Debian: apt-get install wrk curl nginx-light libnginx-mod-stream haproxy iproute2\n`);
    process.exit(2);
  }
}

function say(text: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
}

function machine(): Record<string, string | number> {
  const version = (cmd: string, args: string[]): string => {
    try {
      return (
        execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
          .split('\n')[0]
          ?.trim() ?? ''
      );
    } catch (err) {
      return (
        String((err as { stderr?: string }).stderr ?? err)
          .split('\n')[0]
          ?.trim() ?? ''
      );
    }
  };
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    node: process.version,
    nginx: version('sh', ['-c', 'nginx -v 2>&1']),
    haproxy: version('haproxy', ['-v']),
    wrk: version('sh', ['-c', 'wrk -v 2>&1 | head -1']),
    kubewardCommit: version('git', ['-C', repo, 'rev-parse', '--short', 'HEAD']),
    kubewardProxyDirty: version('git', ['-C', repo, 'status', '--porcelain', '--', 'src/proxy']) === '' ? 'no' : 'yes',
  };
}

async function measurePeer(
  env: PeerEnv,
  peer: Peer,
  round: number,
  backend: { port: number; checkPort: number; pid: number },
  paced: LoadSettings,
): Promise<Sample> {
  const metrics: Record<string, number> = {};
  const proxy =
    peer === 'direct'
      ? undefined
      : await startProxy(env, peer, { upstreamPorts: [backend.port], tlsUpstreams: false, haproxyCheckPort: backend.checkPort }, `r${round}`);
  const pid = proxy?.process.pid;
  try {
    const port = proxy?.port ?? backend.port;
    const url = `http://127.0.0.1:${port}/`;
    if (pid !== undefined) {
      // Memory first, on the fresh process: after load a heap's high-water mark would hide the cost.
      // A moment to settle first (kubeward's first checks, nginx's workers forked).
      await new Promise((r) => setTimeout(r, 2000));
      const rest = readTreeMemory(pid);
      Object.assign(metrics, { restRssMB: rest.rssBytes / MiB, restAnonMB: rest.anonBytes / MiB, restPssMB: rest.pssBytes / MiB });
      const idle = await measureIdle(port, backend.port, pid, idleConnections);
      metrics.idleKBPerConn = idle.bytesPerConnection / 1024;
    }
    await runWrk(url, { ...load, durationS: 1 }); // warm-up: JIT, buffers, worker start
    const ka = await measureWrk(url, pid, load);
    Object.assign(metrics, { kaRps: ka.wrk.requestsPerSec, kaP50Ms: ka.wrk.p50Ms, kaP99Ms: ka.wrk.p99Ms, kaErrors: ka.wrk.socketErrors + ka.wrk.badResponses });
    if (ka.stealPct !== undefined) metrics.kaStealPct = ka.stealPct;
    if (ka.cpuUsPerRequest !== undefined) metrics.kaCpuUsPerReq = ka.cpuUsPerRequest;
    if (ka.peakMemory)
      Object.assign(metrics, { loadRssMB: ka.peakMemory.rssBytes / MiB, loadAnonMB: ka.peakMemory.anonBytes / MiB, loadPssMB: ka.peakMemory.pssBytes / MiB });
    const kp = await measureWrk(url, pid, paced);
    Object.assign(metrics, { kpRps: kp.wrk.requestsPerSec, kpP50Ms: kp.wrk.p50Ms, kpP99Ms: kp.wrk.p99Ms, kpErrors: kp.wrk.socketErrors + kp.wrk.badResponses });
    if (kp.stealPct !== undefined) metrics.kpStealPct = kp.stealPct;
    if (kp.cpuUsPerRequest !== undefined) metrics.kpCpuUsPerReq = kp.cpuUsPerRequest;
    // The same warm-up for the new-connection path (accept, connect, half-close): it runs other code
    // than keep-alive, and a 3 s window that starts cold measures the JIT's tier-up, not steady state.
    await runWrk(url, { ...load, durationS: 1 }, ['Connection: close']);
    const nc = await measureWrk(url, pid, load, ['Connection: close']);
    Object.assign(metrics, { ncRps: nc.wrk.requestsPerSec, ncErrors: nc.wrk.socketErrors + nc.wrk.badResponses });
    if (nc.cpuUsPerRequest !== undefined) metrics.ncCpuUsPerConn = nc.cpuUsPerRequest;
    metrics.bulkMBps = await measureBulk(`${url}files/100m.bin`, BULK_TIMES);
    say(
      `round ${round} ${peer}: ${Object.entries(metrics)
        .map(([k, v]) => `${k}=${v.toFixed(2)}`)
        .join(' ')}`,
    );
    return { peer, round, metrics };
  } finally {
    if (proxy) await env.group.stop(proxy.process);
  }
}

/** Attempts at one peer's round when the host keeps taking CPU time (--max-steal). */
const STEAL_ATTEMPTS = 3;

/** One peer's round (measure), again while the host took more than --max-steal during its keep-alive loads (measureAgain). */
async function measureQuiet(what: string, measure: () => Promise<Sample>): Promise<Sample> {
  for (let attempt = 1; ; attempt++) {
    const sample = await measure();
    sample.metrics.attempts = attempt;
    const steal = [sample.metrics.kaStealPct, sample.metrics.kpStealPct];
    if (!measureAgain(steal, maxSteal, attempt, STEAL_ATTEMPTS)) return sample;
    say(
      `${what}: measured again: the host took ${steal.map((p) => `${(p ?? 0).toFixed(1)} %`).join(' and ')} of the CPU time during the keep-alive loads (--max-steal ${maxSteal})`,
    );
  }
}

async function main(group: ProcessGroup): Promise<void> {
  checkTools();
  const startedAt = new Date();
  const dir = await mkdtemp(join(tmpdir(), 'kw-bench-'));
  process.once('SIGINT', () => {
    say('interrupted: stopping every process started');
    void group
      .stopAll()
      .then(() => rm(dir, { recursive: true, force: true }))
      .finally(() => process.exit(130));
  });
  say('building dist/ (npm run build): the bench measures what ships');
  const native = await buildShipped();
  if (!native.ok) say(`the native relay was not built (${native.why}): kubeward cannot run its default data path here`);
  const env: PeerEnv = {
    group,
    dir,
    kubewardMain: join(repo, 'bin/kubeward.js'),
    nodeBin: process.execPath,
    kubewardExtraArgs: opt['kubeward-arg'],
    nginxListenParams: opt['nginx-listen'],
  };
  try {
    const ca = await createTestCa('kubeward-bench-ca', dir);
    const server = await ca.issueServer('backend', ['IP:127.0.0.1', 'DNS:localhost']);
    const cert: BackendCert = { caFile: ca.certFile, ca: ca.cert, certFile: server.certFile, keyFile: server.keyFile };
    const samples: Sample[] = [];
    if (!opt['skip-perf']) {
      const filesDir = join(dir, 'files');
      await mkdir(filesDir);
      await writeFile(join(filesDir, '100m.bin'), '');
      await truncate(join(filesDir, '100m.bin'), 100 * 1e6); // sparse: served from memory, no disk in the measurement
      const [port, checkPort] = await freePorts(2);
      const ports = { port: port!, checkPort: checkPort! };
      const backendProc = await startBackend(env, {
        port: ports.port,
        checkPort: ports.checkPort,
        name: 'perf',
        tls: cert,
        filesDir,
        readyzDownFlag: join(dir, 'never'),
      });
      const backend = { ...ports, pid: backendProc.pid };
      const paced: LoadSettings = { ...load, script: join(dir, 'paced.lua') };
      await writeFile(paced.script!, pacedScript(PACED_THINK_MS));
      for (let round = 1; round <= rounds; round++) {
        for (const peer of peerOrder(PEERS, round - 1))
          samples.push(await measureQuiet(`round ${round} ${peer}`, () => measurePeer(env, peer, round, backend, paced)));
      }
    }
    let modes: ModeMemory[] = [];
    if (!opt['skip-modes']) {
      const skip = await modesSkipReason();
      if (skip) say(`watch, routes and agent at rest: skipped (${skip})`);
      else
        modes = await measureModesAtRest(
          {
            group,
            dir,
            nodeBin: process.execPath,
            kubewardMain: env.kubewardMain,
            standinMain: join(repo, 'testkit/apiserver-standin-main.ts'),
            cert: { caFile: ca.certFile, certFile: server.certFile, keyFile: server.keyFile },
          },
          rounds,
          say,
        );
    }
    const failovers: FailoverSample[] = [];
    if (!opt['skip-failover']) {
      const n = positive('failover-rounds', opt['failover-rounds']);
      for (let round = 1; round <= n; round++) {
        for (const scenario of peerOrder(SCENARIOS, round - 1)) {
          const got = await runFailoverRound(env, scenario, round, failover, cert);
          say(`failover ${scenario} round ${round}: ${got.map((g) => `${g.peer} failed=${g.failed} slow=${g.slow} stop=${g.stopMs}`).join('; ')}`);
          failovers.push(...got);
        }
      }
    }
    await report(startedAt, samples, failovers, modes);
  } finally {
    await group.stopAll();
    await rm(dir, { recursive: true, force: true });
  }
}

async function report(startedAt: Date, samples: Sample[], failovers: FailoverSample[], modes: ModeMemory[]): Promise<void> {
  const date = startedAt.toISOString().slice(0, 10);
  const medians = mediansOf(samples);
  const m = machine();
  const settings = {
    rounds,
    load,
    idleConnections,
    failover,
    bulk: `${BULK_TIMES} x 100 MB per round with curl (MB = 10^6 bytes)`,
    kubewardExtraArgs: opt['kubeward-arg'],
    // Every kubeward started was checked to run this path (start-peer.ts).
    kubewardRelay: askedRelay(opt['kubeward-arg']),
    maxStealPct: maxSteal,
    nginxListenParams: opt['nginx-listen'],
  };
  const outDir = opt.out ?? join(repo, 'bench/results');
  await mkdir(outDir, { recursive: true });
  // Never over an earlier run's result of the same day (docs link to them): <date>-2 and so on.
  const base = freeResultBase(outDir, date, ['.json', '.md']);
  const results: BenchResults = { date: startedAt.toISOString(), machine: m, settings, medians, samples, modes, failovers };
  await writeFile(join(outDir, `${base}.json`), `${JSON.stringify(results, null, 2)}\n`);
  const md = `${renderResults(results)}\n`;
  await writeFile(join(outDir, `${base}.md`), md);
  process.stdout.write(`${md}\nwritten: ${join(outDir, `${base}.json`)} and ${base}.md\n`);
}

const stdoutDir = opt['daemon-stdout'] === undefined ? undefined : daemonStdoutDir(opt['daemon-stdout']);
if (stdoutDir && 'why' in stdoutDir) {
  process.stderr.write(`bench: --daemon-stdout ${JSON.stringify(opt['daemon-stdout'])}: ${stdoutDir.why}\n`);
  process.exit(2);
}
const group = new ProcessGroup(undefined, { stdoutDir: stdoutDir?.dir });
process.on('exit', () => group.killAllNow());
main(group).catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
