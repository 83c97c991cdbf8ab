// deploy/monitoring: the alert rules pass `promtool check rules` and their unit test
// (`promtool test rules`), and every metric the rules and the Grafana dashboard name is exported by
// a running kubeward: proxy, watch, routes (in a network namespace of its own, root) and the
// operator with deorbit, routegc and flight (real kube-apiserver) are started as processes and
// their live /metrics read.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import YAML from 'yaml';
import { createKubeApi } from '../../src/clients/kube/kube-api.ts';
import { loadKubeConfig } from '../../src/clients/kube/load-kube-config.ts';
import { installCrd } from '../../testkit/kube/kube-objects.ts';
import { kubeApiserverMissing, startKubeApiserver, type KubeTestServer } from '../../testkit/kube/kube-test-server.ts';
import { noteTierSkip } from '../../testkit/test-tiers.ts';
import { KubewardProcess } from '../../testkit/kubeward-process.ts';
import { waitFor } from '../../testkit/wait-for.ts';

const run = promisify(execFile);
const MON = join(import.meta.dirname, '../../deploy/monitoring');
const RULES = join(MON, 'kubeward-alerts.rules.yaml');
const DASHBOARD = join(MON, 'kubeward-dashboard.json');
const promtool = process.env.PROMTOOL ?? 'promtool';
const promtoolMissing = await run(promtool, ['--version']).then(
  () => false as const,
  () => `no promtool: install Debian's prometheus package, or take only the tool: apt-get download prometheus && dpkg-deb -x prometheus_*.deb x && cp x/usr/bin/promtool /usr/local/bin/ (or set PROMTOOL)`,
);
const isRoot = process.getuid?.() === 0;
const nftMissing = await run('nft', ['--version']).then(
  () => false,
  () => true,
);
// Without root (or nft) the live check below leaves the routes daemon out: say so.
noteTierSkip('root', isRoot && !nftMissing ? false : 'the routes daemon joins the live /metrics check only as root with nft (run the tests as root, as CI does)');

/** An HTTP GET from inside a network namespace (Node's fetch; no curl needed); fails unless 2xx. */
function getInNetns(ns: string, url: string): Promise<{ stdout: string }> {
  const script = 'const r = await fetch(process.argv[1], { signal: AbortSignal.timeout(3000) }); if (!r.ok) process.exit(1); process.stdout.write(await r.text());';
  return run('ip', ['netns', 'exec', ns, process.execPath, '--input-type=module', '-e', script, url]);
}

/** Metric names in a PromQL text: kubeward_* identifiers, histogram series mapped to their family. */
export function metricNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(/\bkubeward_[a-z0-9_]+\b/g)) names.add(m[0].replace(/_(bucket|sum|count)$/, ''));
  return names;
}

async function expressions(): Promise<{ where: string; expr: string }[]> {
  const out: { where: string; expr: string }[] = [];
  const rules = await readFile(RULES, 'utf8');
  for (const m of rules.matchAll(/^\s+- alert: (\S+)[\s\S]*?^\s+expr: (.+)$/gm)) out.push({ where: `rule ${m[1]}`, expr: m[2]! });
  const dash = JSON.parse(await readFile(DASHBOARD, 'utf8')) as { panels: { title: string; targets?: { expr: string }[] }[]; templating: { list: { name: string; query?: unknown }[] } };
  for (const p of dash.panels) for (const t of p.targets ?? []) out.push({ where: `panel "${p.title}"`, expr: t.expr });
  for (const v of dash.templating.list) if (typeof v.query === 'string' && v.query.includes('kubeward_')) out.push({ where: `variable ${v.name}`, expr: v.query });
  return out;
}

test('the alert rules pass promtool check rules and their rule unit test', { skip: promtoolMissing }, async () => {
  const check = await run(promtool, ['check', 'rules', RULES]);
  assert.match(check.stdout, /SUCCESS: 15 rules found/);
  const unit = await run(promtool, ['test', 'rules', join(MON, 'kubeward-alerts.test.yaml')], { cwd: MON });
  assert.match(unit.stdout, /SUCCESS/);
});

test('every controller and the targets have alerts, and each rule and dashboard query names a metric', async () => {
  const rules = await readFile(RULES, 'utf8');
  const alerts = [
    'KubewardTargetDown',
    'KubewardProxyUpstreamsAllDown',
    'KubewardProxyFailOpen',
    'KubewardProxyUpstreamFlapping',
    'KubewardWatchHeartbeatStale',
    'KubewardRouteSyncFailing',
    'KubewardControllerHoldingBack',
    'KubewardRouteLimitNear',
    'KubewardOperatorNoLeader',
    'KubewardControllerReconcileErrors',
    'KubewardDeorbitRefusing',
    'KubewardFlightFailing',
    'KubewardFlightHoldingBack',
  ];
  for (const a of alerts) assert.match(rules, new RegExp(`alert: ${a}\\b`));
  // One metric family per controller at least: operator (leader), deorbit, flight, routegc.
  for (const family of ['kubeward_leader', 'kubeward_deorbit_', 'kubeward_flight_', 'kubeward_routegc_']) assert.ok(rules.includes(family), family);
  for (const e of await expressions()) {
    // The target-down rule is about Prometheus's own `up`, not a kubeward metric.
    if (e.where === 'rule KubewardTargetDown') assert.match(e.expr, /^up\{job=~"\.\*kubeward\.\*"\} == 0$/);
    else assert.ok(metricNames(e.expr).size > 0, `${e.where} names no kubeward metric: ${e.expr}`);
  }
});

test('each alert has a runbook_url to a page under docs/runbooks/ with its four sections', async () => {
  const rules = YAML.parse(await readFile(RULES, 'utf8')) as { groups: { rules: { alert: string; annotations: Record<string, string> }[] }[] };
  const all = rules.groups.flatMap((g) => g.rules);
  assert.equal(all.length, 15);
  for (const r of all) {
    const m = /^https:\/\/github\.com\/kubeward\/kubeward\/blob\/main\/(docs\/runbooks\/[a-z0-9-]+\.md)$/.exec(r.annotations.runbook_url ?? '');
    assert.ok(m, `${r.alert}: runbook_url ${r.annotations.runbook_url}`);
    const page = await readFile(join(import.meta.dirname, '../..', m[1]!), 'utf8');
    assert.match(page, new RegExp(`^# ${r.alert}\n`), `${m[1]} is the page of ${r.alert}`);
    for (const section of ['Symptom', 'Meaning', 'What to check', 'How to fix']) assert.match(page, new RegExp(`^## ${section}$`, 'm'), `${m[1]}: ${section}`);
  }
});

test('the PrometheusRule holds the same groups as the rules file (scripts/gen-prometheusrule.mjs)', async () => {
  const rules = YAML.parse(await readFile(RULES, 'utf8')) as { groups: unknown };
  const pr = YAML.parse(await readFile(join(MON, 'kubeward-prometheusrule.yaml'), 'utf8')) as { apiVersion: string; kind: string; spec: { groups: unknown } };
  assert.equal(pr.apiVersion, 'monitoring.coreos.com/v1');
  assert.equal(pr.kind, 'PrometheusRule');
  assert.deepEqual(pr.spec.groups, rules.groups);
});

/** A manifest as far as these checks read it. */
interface Manifest {
  kind: string;
  metadata: { name: string };
  rules?: unknown;
  roleRef?: { name: string };
  spec?: { podMetricsEndpoints?: Endpoint[]; endpoints?: Endpoint[] };
}
interface Endpoint {
  scheme: string;
  path: string;
  authorization: { credentials: unknown };
}

test('the PodMonitor and ServiceMonitor scrape over TLS with the scraper token that rbac.yaml grants /metrics', async () => {
  const docs = async (f: string) => YAML.parseAllDocuments(await readFile(join(MON, f), 'utf8')).map((d) => d.toJS() as Manifest);
  const pod = (await docs('podmonitor.yaml')).find((d) => d.kind === 'PodMonitor')!;
  const sm = (await docs('servicemonitor.yaml')).find((d) => d.kind === 'ServiceMonitor')!;
  const rbac = await docs('rbac.yaml');
  const token = rbac.find((d) => d.kind === 'Secret')!;
  const role = rbac.find((d) => d.kind === 'ClusterRole' && d.metadata.name === 'kubeward-metrics-reader')!;
  assert.deepEqual(role.rules, [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
  for (const ep of [pod.spec!.podMetricsEndpoints![0]!, sm.spec!.endpoints![0]!]) {
    assert.equal(ep.scheme, 'https');
    assert.equal(ep.path, '/metrics');
    assert.deepEqual(ep.authorization.credentials, { name: token.metadata.name, key: 'token' });
  }
  const delegator = rbac.find((d) => d.kind === 'ClusterRoleBinding' && d.roleRef?.name === 'system:auth-delegator');
  assert.ok(delegator, 'kubeward may create TokenReviews and SubjectAccessReviews');
});

describe('metrics named by the rules and the dashboard against live /metrics', { skip: kubeApiserverMissing() }, () => {
  let kube: KubeTestServer;
  let dir: string;
  let netns: string | undefined;
  const procs: KubewardProcess[] = [];
  const exported = new Map<string, Set<string>>();

  const scrape = async (mode: string, url: string, inNetns?: string): Promise<void> => {
    const text = inNetns ? (await getInNetns(inNetns, url)).stdout : await (await fetch(url)).text();
    exported.set(mode, new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!)));
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kw-mon-'));
    kube = await startKubeApiserver();
    const api = createKubeApi(loadKubeConfig({ kind: 'file', path: kube.kubeconfigPath }));
    await installCrd(api, await readFile(join(import.meta.dirname, '../../deploy/operator/base/managedcluster-crd.yaml'), 'utf8'));

    // Info-level logs: each daemon binds port 0 and its "admin listener ready" line gives the port.
    const start = (args: string[], prefix?: string[]) => {
      const p = new KubewardProcess(args, prefix ? { prefix } : {});
      procs.push(p);
      return p;
    };
    const proxy = start(['proxy', '--listen', '127.0.0.1:0', '--upstream', `127.0.0.1:${kube.port}`, '--ca-file', kube.caFile, '--admin-address', '127.0.0.1:0']);
    const watch = start(['watch', '--vip', '192.0.2.10', '--health-url', `https://127.0.0.1:${kube.port}/readyz`, '--ca-file', kube.caFile, '--state-dir', join(dir, 'routes'), '--admin-address', '127.0.0.1:0']);
    const operator = start(['operator', '--kubeconfig', kube.kubeconfigPath, '--controllers', 'deorbit,routegc,flight', '--lease-namespace', 'default', '--admin-address', '127.0.0.1:0']);
    const ports = { proxy: await proxy.adminPort({ timeoutMs: 30_000 }), watch: await watch.adminPort({ timeoutMs: 30_000 }), operator: await operator.adminPort({ timeoutMs: 60_000 }) };
    if (isRoot && !nftMissing) {
      netns = `kwm-${process.pid}`;
      await run('ip', ['netns', 'add', netns]);
      await run('ip', ['-n', netns, 'link', 'set', 'lo', 'up']);
      start(['routes', '--provider', 'azure', '--state-dir', join(dir, 'routes'), '--admin-address', '127.0.0.1:9451'], ['ip', 'netns', 'exec', netns]);
    }
    const ready = async (url: string, ns?: string) =>
      ns
        ? getInNetns(ns, url).then(() => true, () => false)
        : fetch(url).then((r) => r.ok, () => false);
    await waitFor(() => ready(`http://127.0.0.1:${ports.proxy}/readyz`), { timeoutMs: 30_000, intervalMs: 200, what: 'proxy ready' });
    await waitFor(() => ready(`http://127.0.0.1:${ports.watch}/readyz`), { timeoutMs: 30_000, intervalMs: 200, what: 'watch ready' });
    await waitFor(() => ready(`http://127.0.0.1:${ports.operator}/readyz`), { timeoutMs: 60_000, intervalMs: 200, what: 'operator ready' });
    if (netns) await waitFor(() => ready('http://127.0.0.1:9451/healthz', netns), { timeoutMs: 30_000, intervalMs: 200, what: 'routes up' });
    await scrape('proxy', `http://127.0.0.1:${ports.proxy}/metrics`);
    await scrape('watch', `http://127.0.0.1:${ports.watch}/metrics`);
    await scrape('operator', `http://127.0.0.1:${ports.operator}/metrics`);
    if (netns) await scrape('routes', 'http://127.0.0.1:9451/metrics', netns);
  });

  after(async () => {
    for (const p of procs) await p.stop();
    if (netns) await run('ip', ['netns', 'del', netns]).catch(() => undefined);
    await kube?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('each metric in the rules and the dashboard is exported by a running mode', async (t) => {
    assert.deepEqual([...exported.keys()].sort(), isRoot && !nftMissing ? ['operator', 'proxy', 'routes', 'watch'] : ['operator', 'proxy', 'watch']);
    for (const [mode, names] of exported) {
      assert.ok(names.has('kubeward_process_start_time_seconds'), `${mode}: /metrics was read`);
      assert.ok(names.has('kubeward_build_info'), `${mode}: kubeward_build_info`);
    }
    assert.ok(exported.get('operator')!.has('kubeward_leader'), 'the operator exports kubeward_leader');
    const all = new Set([...exported.values()].flatMap((s) => [...s]));
    const missing: string[] = [];
    for (const e of await expressions()) {
      for (const name of metricNames(e.expr)) {
        if (all.has(name)) continue;
        // kubeward_routes_* can be checked only where routes ran (root, nft).
        if (name.startsWith('kubeward_routes_') && !exported.has('routes')) {
          t.diagnostic(`${name} not checked: routes runs only as root with nft`);
          continue;
        }
        missing.push(`${name} (${e.where})`);
      }
    }
    assert.deepEqual(missing, [], `named but not exported by any running mode:\n${missing.join('\n')}`);
  });
});
