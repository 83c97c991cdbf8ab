// npm run bench:operator -- [--sizes 100,500,1000] [--duration 150] [--interval 30s] [--out bench/results]
//
// Runs `kubeward operator` (routegc and flight, both dry run) as a process against the OpenStack
// emulator (in this process; one bulk request makes the N tenants) and one real kube-apiserver that
// is the management cluster and every workload cluster, at each size in turn, and writes
// bench/results/operator-<date>.json. Bounded: each size runs --duration seconds after its set-up
// (240 s per size are allowed for set-up and stop), and a watchdog ends everything after
// sizes × (duration + 240) s + 2 min; Ctrl-C and SIGTERM clean up the same way.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { cpus, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createKubeApi, type KubeApi } from '../../src/clients/kube/kube-api.ts';
import { loadKubeConfig } from '../../src/clients/kube/load-kube-config.ts';
import { ensureNamespace, installCrd } from '../../testkit/kube/kube-objects.ts';
import { kubeApiserverMissing, startKubeApiserver, type KubeTestServer } from '../../testkit/kube/kube-test-server.ts';
import type { KubewardProcess } from '../../testkit/kubeward-process.ts';
import { buildShipped } from '../../scripts/build.ts';
import { bulkTenants, createManagedClusters } from '../../testkit/operator-fleet.ts';
import { OpenStackEmulator } from '../../testkit/openstack/openstack-emulator.ts';
import { readCpuSeconds, readTreeUsage } from '../proc-stats.ts';
import { checkBenchOptions, type RawBenchOptions } from './bench-options.ts';
import { checkTargets, renderTable, renderTargets, type SizeResult } from './operator-report.ts';
import { freeResultBase } from '../result-name.ts';
import { adminTokenFixture } from '../../testkit/admin-token.ts';
import {
  apiRequestDelta,
  cycleStarts,
  firstCycles,
  lateness,
  parsePrometheus,
  percentile,
  steadyValue,
  sumOf,
  type OsRequest,
  type PromSample,
  valueAt,
} from './operator-stats.ts';

const ROOT = join(import.meta.dirname, '../..');
const SETUP_CAP_MS = 240_000;
/** CPU of the operator, kube-apiserver, etcd and the emulator is read this often (the start's CPU). */
const CPU_SAMPLE_MS = 500;
const SAMPLE_MS = 5000;
const MiB = 1024 * 1024;
/** The operator of the size being run, for the watchdog. */
let current: KubewardProcess | undefined;
/** Loaded once KUBEWARD_BIN is settled: testkit/kubeward-process.ts reads it when it loads. */
let Kubeward: typeof KubewardProcess;

function usage(message: string): never {
  process.stderr.write(`bench:operator: ${message}\n`);
  process.exit(2);
}

const HELP = `Usage: npm run bench:operator -- [--sizes 100,500,1000] [--duration 150] [--interval 30s]
       [--out bench/results] [--concurrency 16]
Runs kubeward operator (routegc and flight, dry run) against the OpenStack emulator and a real
kube-apiserver at each size; see docs/benchmark.md ("The operator at scale").
The operator runs as shipped: npm run build first, then bin/kubeward.js (the build with the V8
settings it ships with).
Every cluster's kubeconfig has a CA of its own bytes (the same certificate), so the operator keeps
an agent, a TLS context and sockets per cluster, as with a real fleet.`;

function parseOptions() {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      options: {
        sizes: { type: 'string', default: '100,500,1000' },
        duration: { type: 'string', default: '150' },
        interval: { type: 'string', default: '30s' },
        out: { type: 'string', default: join(ROOT, 'bench/results') },
        concurrency: { type: 'string', default: '16' },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (err) {
    usage(`${(err as Error).message.split('\n')[0]} (see --help)`);
  }
  if (values.help) {
    process.stdout.write(HELP + '\n');
    process.exit(0);
  }
  const checked = checkBenchOptions(values as unknown as RawBenchOptions);
  if ('error' in checked) usage(checked.error);
  return checked;
}

/** A PID start.sh wrote into its state directory (kube-apiserver.pid, etcd.pid). */
function statePid(kube: KubeTestServer, name: string): number | undefined {
  try {
    return Number(readFileSync(join(kube.stateDir, `${name}.pid`), 'utf8').trim()) || undefined;
  } catch {
    return undefined;
  }
}

type CpuSeries = Record<'operator' | 'kubeApiserver' | 'etcd' | 'emulator', { atMs: number; value: number }[]>;

/** Appends one reading of each process's CPU seconds (the emulator runs in this process). */
function sampleCpu(series: CpuSeries, pids: { operator: number; kubeApiserver?: number; etcd?: number }): void {
  const atMs = Date.now();
  const push = (k: keyof CpuSeries, value: number | undefined) => value !== undefined && series[k].push({ atMs, value });
  push('operator', readCpuSeconds(pids.operator));
  push('kubeApiserver', pids.kubeApiserver === undefined ? undefined : readCpuSeconds(pids.kubeApiserver));
  push('etcd', pids.etcd === undefined ? undefined : readCpuSeconds(pids.etcd));
  const own = process.cpuUsage();
  push('emulator', (own.user + own.system) / 1e6);
}

/** CPU each process used from its first reading until atMs (undefined when atMs is past the readings). */
function cpuUntil(series: CpuSeries, atMs: number | undefined): SizeResult['startCpuS'] {
  if (atMs === undefined) return undefined;
  const used = (s: { atMs: number; value: number }[]) => {
    const v = valueAt(s, atMs);
    return v === undefined ? undefined : v - s[0]!.value;
  };
  return { operator: used(series.operator), kubeApiserver: used(series.kubeApiserver), etcd: used(series.etcd), emulator: used(series.emulator) };
}

/** The apiserver's own /metrics, with the admin token start.sh made. */
function apiserverMetrics(kube: KubeTestServer): Promise<PromSample[]> {
  const token = readFileSync(kube.tokenFile, 'utf8').trim();
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: kube.port, path: '/metrics', ca: readFileSync(kube.caFile), headers: { authorization: `Bearer ${token}` }, timeout: 30_000 },
      (res) => {
        let text = '';
        res
          .setEncoding('utf8')
          .on('data', (d: string) => (text += d))
          .on('end', () => (res.statusCode === 200 ? resolve(parsePrometheus(text)) : reject(new Error(`apiserver /metrics: ${res.statusCode}`))));
      },
    );
    req.on('timeout', () => req.destroy(new Error('apiserver /metrics timed out')));
    req.on('error', reject).end();
  });
}

/** "GET network /routers/{id}": ids and queries folded, for the per-call breakdown. */
function requestKind(service: string, method: string, path: string): string {
  const p = path
    .split('?')[0]!
    .replace(/\/[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}/g, '/{id}')
    .replace(/\/[0-9a-f]{32}/g, '/{id}');
  return `${method} ${service} ${p}`;
}

/** Events in these namespaces by type and reason (the ManagedClusters' and, in namespace default, the Nodes'). */
async function eventReasons(api: KubeApi, namespaces: string[]): Promise<Record<string, { objects: number; count: number }>> {
  const out: Record<string, { objects: number; count: number }> = {};
  for (const ns of namespaces) {
    const list = await api.events.list(ns).catch(() => ({ items: [] }));
    for (const e of list.items) {
      const k = `${e.type ?? ''} ${e.reason ?? ''}`;
      const r = (out[k] ??= { objects: 0, count: 0 });
      r.objects++;
      r.count += e.count ?? 1;
    }
  }
  return out;
}

async function runSize(n: number, o: ReturnType<typeof parseOptions>, kube: KubeTestServer, api: KubeApi, kubeconfigText: string): Promise<SizeResult> {
  const ns = `opbench-n${n}`;
  const perProject = new Map<string, OsRequest[]>();
  const osByKind: Record<string, number> = {};
  let counting = false;
  let osTotal = 0;
  const emu = new OpenStackEmulator({
    onRequest: (e, m) => {
      if (!counting) return;
      osTotal++;
      const k = requestKind(e.service, e.method, e.path);
      osByKind[k] = (osByKind[k] ?? 0) + 1;
      if (m.projectId) {
        const list = perProject.get(m.projectId) ?? [];
        perProject.set(m.projectId, list);
        list.push({ atMs: m.atMs, method: e.method, path: e.path });
      }
    },
  });
  await emu.start();
  let proc: KubewardProcess | undefined;
  try {
    const t0 = Date.now();
    const projects = await bulkTenants(emu, `c${n}`, n);
    await ensureNamespace(api, ns);
    await createManagedClusters(
      api,
      ns,
      kubeconfigText,
      projects.map((project) => ({ emu, project })),
      o.concurrency,
      { ownTlsIdentity: true },
    );
    process.stderr.write(`N=${n}: ${n} tenants and ManagedClusters made in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);

    const before = await apiserverMetrics(kube);
    const adminToken = adminTokenFixture();
    counting = true;
    const startMs = Date.now();
    proc = current = new Kubeward([
      'operator',
      '--kubeconfig',
      kube.kubeconfigPath,
      '--namespace',
      ns,
      '--controllers',
      'routegc,flight',
      '--identity',
      `opbench-${n}`,
      '--lease-namespace',
      ns,
      '--routegc-dry-run',
      '--flight-dry-run',
      '--routegc-interval',
      `${o.intervalMs}ms`,
      '--flight-interval',
      `${o.intervalMs}ms`,
      ...adminToken.args,
      '--admin-address',
      '127.0.0.1:0',
      '--log-level',
      'warn',
    ]);
    const cpuSeries: CpuSeries = { operator: [], kubeApiserver: [], etcd: [], emulator: [] };
    const pids = { operator: proc.pid, kubeApiserver: statePid(kube, 'kube-apiserver'), etcd: statePid(kube, 'etcd') };
    sampleCpu(cpuSeries, pids);
    const cpuTimer = setInterval(() => sampleCpu(cpuSeries, pids), CPU_SAMPLE_MS).unref();
    // Port 0: the operator logs the port it bound at any log level.
    const admin = `http://127.0.0.1:${await proc.adminPort({ timeoutMs: 60_000 })}`;
    const samples: { atMs: number; rss: number; cpu: number; heap?: number; lagMax?: number; lagP99?: number }[] = [];
    const endAt = startMs + o.durationS * 1000;
    while (Date.now() < endAt && proc.child.exitCode === null) {
      await new Promise((r) => setTimeout(r, Math.min(SAMPLE_MS, Math.max(0, endAt - Date.now()))));
      const u = readTreeUsage(proc.pid);
      const s: (typeof samples)[number] = { atMs: Date.now(), rss: u.rssBytes, cpu: u.cpuSeconds };
      try {
        const m = parsePrometheus(await (await fetch(`${admin}/metrics`, { signal: AbortSignal.timeout(4000) })).text());
        Object.assign(s, {
          heap: sumOf(m, 'kubeward_nodejs_heap_size_used_bytes'),
          lagMax: sumOf(m, 'kubeward_nodejs_eventloop_lag_max_seconds'),
          lagP99: sumOf(m, 'kubeward_nodejs_eventloop_lag_p99_seconds'),
        });
      } catch {
        // not listening yet, or too busy to answer within 4 s: the /proc figures still count
      }
      samples.push(s);
    }
    clearInterval(cpuTimer);
    if (proc.child.exitCode !== null) throw new Error(`the operator exited early (${proc.child.exitCode}): ${proc.stderr.slice(-800)}`);
    const after = await apiserverMetrics(kube);
    counting = false;
    const eventsByReason = await eventReasons(api, [ns, 'default']);
    const operatorStatus: unknown = await fetch(`${admin}/status`, { headers: adminToken.headers, signal: AbortSignal.timeout(4000) }).then(
      (r) => r.json(),
      () => undefined,
    );
    const stopMs = Date.now();
    await proc.stop();

    const byCluster = projects.map((p) => cycleStarts(perProject.get(p.projectId) ?? []));
    const first = firstCycles(byCluster, startMs, ['routegc', 'flight']);
    const late = byCluster.flatMap((c) => [...lateness(c.routegc, o.intervalMs, stopMs), ...lateness(c.flight, o.intervalMs, stopMs)]);
    const cycles = { routegc: byCluster.reduce((s, c) => s + c.routegc.length, 0), flight: byCluster.reduce((s, c) => s + c.flight.length, 0) };
    const kubeCounts = apiRequestDelta(before, after);
    const allCycles = cycles.routegc + cycles.flight;
    const lastCpu = samples.at(-1)?.cpu;
    const minutes = (stopMs - startMs) / 60_000;
    const steadyFrom = first.allMs === undefined ? undefined : samples.find((s) => s.atMs >= startMs + first.allMs!);
    const steadyMinutes = steadyFrom ? (samples.at(-1)!.atMs - steadyFrom.atMs) / 60_000 : 0;
    const lag = samples.filter((s) => s.lagMax !== undefined);
    // Start-up (loading modules, the informer's first list, every first cycle) blocks the loop once; steady state is what follows.
    const steadyLag = steadyFrom ? lag.filter((s) => s.atMs > steadyFrom.atMs) : [];
    const statusWrites = Object.entries(kubeCounts.byResource)
      .filter(([k]) => /^managedclusters\/status (PUT|PATCH|UPDATE)/.test(k))
      .reduce((s, [, v]) => s + v, 0);
    const warnLogs = proc.logs.filter((l) => l.level === 40).length;
    const errorLogs = proc.logs.filter((l) => l.level >= 50).length;
    if (warnLogs + errorLogs)
      process.stderr.write(
        `N=${n}: the operator logged ${warnLogs} warnings and ${errorLogs} errors, first: ${JSON.stringify(proc.logs.find((l) => l.level >= 40)).slice(0, 600)}\n`,
      );
    return {
      n,
      durationS: Math.round((stopMs - startMs) / 1000),
      rssMiB: (steadyValue(samples.map((s) => ({ atMs: s.atMs, value: s.rss }))) ?? NaN) / MiB,
      rssPeakMiB: Math.max(...samples.map((s) => s.rss)) / MiB,
      heapUsedMiB: (steadyValue(samples.filter((s) => s.heap !== undefined).map((s) => ({ atMs: s.atMs, value: s.heap! }))) ?? NaN) / MiB,
      cpuSPerMin: lastCpu === undefined ? undefined : lastCpu / minutes,
      cpuSPerMinSteady: steadyFrom && steadyMinutes > 0.25 ? (lastCpu! - steadyFrom.cpu) / steadyMinutes : undefined,
      firstCycleAllS: first.allMs === undefined ? undefined : first.allMs / 1000,
      firstCycleP50S: first.p50Ms === undefined ? undefined : first.p50Ms / 1000,
      startCpuS: cpuUntil(cpuSeries, first.allMs === undefined ? undefined : startMs + first.allMs),
      firstCycleDone: first.done,
      cycles,
      latenessP50S: late.length ? percentile(late, 50)! / 1000 : undefined,
      latenessP99S: late.length ? percentile(late, 99)! / 1000 : undefined,
      latenessMaxS: late.length ? Math.max(...late) / 1000 : undefined,
      eventLoopMaxMs: lag.length ? Math.max(...lag.map((s) => s.lagMax!)) * 1000 : undefined,
      eventLoopP99Ms: lag.length ? Math.max(...lag.map((s) => s.lagP99!)) * 1000 : undefined,
      eventLoopMaxSteadyMs: steadyLag.length ? Math.max(...steadyLag.map((s) => s.lagMax!)) * 1000 : undefined,
      osRequestsPerClusterCycle: allCycles ? osTotal / allCycles : undefined,
      kubeRequestsPerClusterCycle: allCycles ? kubeCounts.total / allCycles : undefined,
      statusWrites,
      statusConflicts: kubeCounts.statusConflicts,
      kubeByResource: kubeCounts.byResource,
      osByKind,
      eventsByReason,
      ...{ warnLogs, errorLogs, operatorStatus, samples: samples.map((x) => ({ ...x, atMs: x.atMs - startMs })) },
    };
  } finally {
    await proc?.stop();
    await emu.close();
  }
}

function machine() {
  const git = (args: string[]) => {
    try {
      return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
    } catch {
      return 'unknown';
    }
  };
  const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    node: process.version,
    loadAvgAtStart: load,
    kubewardCommit: git(['rev-parse', '--short', 'HEAD']),
    dirty: git(['status', '--porcelain', 'src']) ? 'yes' : 'no',
  };
}

async function main(): Promise<void> {
  const o = parseOptions();
  const missing = kubeApiserverMissing();
  if (missing) usage(missing);
  const boundMs = o.sizes.length * (o.durationS * 1000 + SETUP_CAP_MS) + 120_000;
  process.stderr.write(
    `bench:operator: sizes ${o.sizes.join(', ')}, ${o.durationS} s each at ${o.intervalMs / 1000} s intervals; ends by itself within ${Math.round(boundMs / 60_000)} min\n`,
  );
  process.stderr.write('bench:operator: building dist/ (npm run build): the bench measures what ships\n');
  await buildShipped();
  process.env.KUBEWARD_BIN = 'dist';
  ({ KubewardProcess: Kubeward } = await import('../../testkit/kubeward-process.ts'));
  const date = new Date();
  const m = machine();
  const kube = await startKubeApiserver(); // bounded: start.sh gets 90 s
  // Over time, Ctrl-C or SIGTERM: the operator is killed by pid and the apiserver stopped, then exit.
  const abort = (why: string, code: number) => {
    process.stderr.write(`bench:operator: ${why}; stopping\n`);
    current?.child.kill('SIGKILL');
    void kube.stop().finally(() => process.exit(code));
  };
  const watchdog = setTimeout(() => abort('over its time bound', 1), boundMs);
  watchdog.unref();
  process.once('SIGINT', () => abort('interrupted', 130));
  process.once('SIGTERM', () => abort('terminated', 143));
  const results: SizeResult[] = [];
  try {
    const api = createKubeApi(loadKubeConfig({ kind: 'file', path: kube.kubeconfigPath }));
    await installCrd(api, readFileSync(join(ROOT, 'deploy/operator/base/managedcluster-crd.yaml'), 'utf8'));
    const kubeconfigText = readFileSync(kube.kubeconfigPath, 'utf8');
    for (const n of o.sizes) {
      results.push(await runSize(n, o, kube, api, kubeconfigText));
      process.stderr.write(`N=${n}: done\n`);
    }
  } finally {
    await kube.stop();
    clearTimeout(watchdog);
  }
  mkdirSync(o.out, { recursive: true });
  // Never over an earlier run's result of the same day (docs link to them): operator-<date>-2 and so on.
  const file = join(o.out, `${freeResultBase(o.out, `operator-${date.toISOString().slice(0, 10)}`, ['.json'])}.json`);
  const targets = checkTargets(results);
  writeFileSync(
    file,
    JSON.stringify(
      {
        date: date.toISOString(),
        machine: m,
        settings: {
          tls: 'a TLS identity per cluster',
          runs: 'bin/kubeward.js (dist/, shipped V8 flags)',
          v8Flags: process.env.KUBEWARD_V8_FLAGS,
          sizes: o.sizes,
          durationS: o.durationS,
          intervalMs: o.intervalMs,
          controllers: 'routegc,flight',
          dryRun: true,
          serversPerCluster: 3,
        },
        results,
        targets,
      },
      null,
      2,
    ) + '\n',
  );
  process.stdout.write(`${renderTable(results)}\n${renderTargets(targets)}\nwritten: ${file}\n`);
}

void main().catch((err: unknown) => {
  process.stderr.write(`bench:operator: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
