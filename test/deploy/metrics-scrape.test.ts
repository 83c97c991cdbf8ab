// The authenticated metrics listener against a real kube-apiserver (RBAC): a scraper's service
// account token with "get" on /metrics (deploy/monitoring/rbac.yaml's ClusterRole) gets 200, a token
// without the grant 403, a forged or missing token 401; kubeward's own identity is a service account
// bound to system:auth-delegator. Bad TLS material and a missing kubeconfig exit 2 naming the flag;
// a credential file of kubeward's that is missing is a 503 (local fault), not a crash.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { createKubeApi, type KubeApi } from '../../src/clients/kube/kube-api.ts';
import { loadKubeConfig } from '../../src/clients/kube/load-kube-config.ts';
import { createTestCa, type CertPair, type TestCa } from '../../testkit/certs.ts';
import { ensureNamespace } from '../../testkit/kube/kube-objects.ts';
import { kubeApiserverMissing, startKubeApiserver, type KubeTestServer } from '../../testkit/kube/kube-test-server.ts';
import { KubewardProcess, runKubeward } from '../../testkit/kubeward-process.ts';
import { freePort, waitFor } from '../../testkit/wait-for.ts';
import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';

const RBAC = join(import.meta.dirname, '../../deploy/monitoring/rbac.yaml');
/** Debian's prometheus binary (.ci/run installs it without the service), or PROMETHEUS. */
const PROMETHEUS = process.env.PROMETHEUS ?? 'prometheus';
const prometheusMissing = await promisify(execFile)(PROMETHEUS, ['--version']).then(
  () => false as const,
  () => `no prometheus binary: apt-get download prometheus && dpkg-deb -x prometheus_*.deb x && cp x/usr/bin/prometheus /usr/local/bin/ (or set PROMETHEUS)`,
);

/** GET /metrics over TLS, trusting the test CA; status and body. */
function scrape(port: number, ca: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path: '/metrics', ca, servername: 'localhost', headers: token === undefined ? {} : { authorization: `Bearer ${token}` }, timeout: 10_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

async function serviceAccountToken(api: KubeApi, namespace: string, name: string): Promise<string> {
  await api.client.request('POST', `/api/v1/namespaces/${namespace}/serviceaccounts`, { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } } });
  const r = await api.client.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  return r.status.token;
}

function kubeconfigFor(server: string, caFile: string, user: Record<string, unknown>): string {
  return YAML.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server, 'certificate-authority': caFile } }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  });
}

describe('authenticated /metrics with a real kube-apiserver', { skip: kubeApiserverMissing() }, () => {
  let kube: KubeTestServer;
  let api: KubeApi;
  let dir: string;
  let ca: TestCa;
  let serving: CertPair;
  const tokens: Record<'reader' | 'nobody' | 'kubeward', string> = { reader: '', nobody: '', kubeward: '' };
  const procs: KubewardProcess[] = [];
  let kubewardConfig: string;

  const baseArgs = () => ['proxy', '--listen', '127.0.0.1:0', '--upstream', '127.0.0.1:9', '--health-check', 'tcp', '--admin-address', 'off'];
  const metricsArgs = (kubeconfig: string, cert = serving, address = '127.0.0.1:0') => [
    '--metrics-address',
    address,
    '--metrics-tls-cert-file',
    cert.certFile,
    '--metrics-tls-key-file',
    cert.keyFile,
    '--metrics-kubeconfig',
    kubeconfig,
  ];
  const start = async (args: string[]): Promise<{ p: KubewardProcess; port: number }> => {
    const p = new KubewardProcess(args);
    procs.push(p);
    const line = await p.waitForLog(/^metrics listener ready$/, { timeoutMs: 30_000 });
    return { p, port: Number(/:(\d+)$/.exec(String(line.address))![1]) };
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kw-metrics-'));
    kube = await startKubeApiserver();
    api = createKubeApi(loadKubeConfig({ kind: 'file', path: kube.kubeconfigPath }));
    await ensureNamespace(api, 'monitoring');
    await ensureNamespace(api, 'kubeward-system');
    // The shipped RBAC: the reader ClusterRole and the auth-delegator binding (its subjects are the
    // operator's and the DaemonSet's service accounts; "kubeward-node-agents" stands for kubeward here).
    for (const doc of YAML.parseAllDocuments(await readFile(RBAC, 'utf8')).map((d) => d.toJS() as { kind: string; metadata: { name: string } })) {
      if (doc.kind === 'ClusterRole') await api.client.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterroles', { body: doc });
      if (doc.kind === 'ClusterRoleBinding' && doc.metadata.name === 'kubeward-metrics-auth-delegator')
        await api.client.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', { body: doc });
    }
    await api.client.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      body: {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'test-reader' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kubeward-metrics-reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: 'monitoring' }],
      },
    });
    tokens.reader = await serviceAccountToken(api, 'monitoring', 'reader');
    tokens.nobody = await serviceAccountToken(api, 'monitoring', 'nobody');
    tokens.kubeward = await serviceAccountToken(api, 'kubeward-system', 'kubeward-node-agents');
    kubewardConfig = join(dir, 'kubeward.kubeconfig');
    await writeFile(kubewardConfig, kubeconfigFor(`https://127.0.0.1:${kube.port}`, kube.caFile, { token: tokens.kubeward }));
    ca = await createTestCa('kw-metrics-ca');
    serving = await ca.issueServer('metrics', ['DNS:localhost', 'IP:127.0.0.1']);
  });

  after(async () => {
    for (const p of procs) await p.stop();
    await kube?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
    await ca?.close();
  });

  test('a token with the RBAC grant gets 200 and the metrics; one without gets 403; forged or missing 401', async () => {
    const { p, port } = await start([...baseArgs(), ...metricsArgs(kubewardConfig)]);
    const ok = await scrape(port, ca.cert, tokens.reader);
    assert.equal(ok.status, 200, ok.body);
    assert.match(ok.body, /^kubeward_build_info\{version="[^"]+",commit="[^"]*",node_version="v24\.[^"]+",relay="(native|handle|socket)"[^}]*\} 1$/m);
    const denied = await scrape(port, ca.cert, tokens.nobody);
    assert.equal(denied.status, 403);
    assert.match(denied.body, /system:serviceaccount:monitoring:nobody may not get \/metrics/);
    // kubeward's own identity may review tokens but not read metrics: reviewing is not reading.
    assert.equal((await scrape(port, ca.cert, tokens.kubeward)).status, 403);
    assert.equal((await scrape(port, ca.cert, tokens.reader.slice(0, -4) + 'AAAA')).status, 401);
    assert.equal((await scrape(port, ca.cert)).status, 401);
    assert.ok(!p.stderr.includes(tokens.reader) && !p.stderr.includes(tokens.nobody), 'no token in the log');
    assert.equal(p.child.exitCode, null);
  });

  test('with --workers 2 the metrics listener stays with the primary (the workers do not try to bind it)', async () => {
    // A fixed port: with port 0 each worker would bind a port of its own and no conflict could show.
    const fixed = await freePort();
    const args = ['proxy', '--listen', '127.0.0.1:0', '--upstream', '127.0.0.1:9', '--health-check', 'tcp', '--admin-address', '127.0.0.1:0', '--workers', '2'];
    const { p, port } = await start([...args, ...metricsArgs(kubewardConfig, serving, `127.0.0.1:${fixed}`)]);
    assert.equal(port, fixed);
    const admin = await p.adminPort();
    // /readyz names workers that are not listening yet; a worker that fails to start never listens.
    await waitFor(async () => !/proxy workers not listening yet/.test(await (await fetch(`http://127.0.0.1:${admin}/readyz`)).text()), {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: `the worker listening (log: ${p.stderr.slice(-1000)})`,
    });
    assert.equal((await scrape(port, ca.cert, tokens.reader)).status, 200);
    assert.equal(p.logs.filter((l) => l.msg === 'proxy worker exited; starting another').length, 0, p.stderr.slice(-2000));
  });

  test('bad TLS material, a missing kubeconfig or the flag without TLS is exit 2 naming the flag', async () => {
    const other = await ca.issueServer('other', ['IP:127.0.0.1']);
    const mismatched = { ...serving, keyFile: other.keyFile };
    const cases: { args: string[]; flag: RegExp }[] = [
      { args: metricsArgs(kubewardConfig, mismatched), flag: /--metrics-tls-key-file .* cannot be used with the certificate/ },
      { args: metricsArgs(kubewardConfig, { ...serving, certFile: join(dir, 'missing.crt') }), flag: /--metrics-tls-cert-file .*missing\.crt: cannot read it/ },
      { args: metricsArgs(kubewardConfig, { ...serving, certFile: serving.keyFile }), flag: /--metrics-tls-cert-file .* holds no PEM certificate/ },
      { args: metricsArgs(join(dir, 'none.kubeconfig')), flag: /--metrics-kubeconfig .*none\.kubeconfig: no such file/ },
      { args: ['--metrics-address', '127.0.0.1:0'], flag: /--metrics-address needs --metrics-tls-cert-file and --metrics-tls-key-file/ },
    ];
    for (const c of cases) {
      const r = await runKubeward([...baseArgs(), ...c.args]);
      assert.equal(r.code, 2, `${c.args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, c.flag);
      assert.equal(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /BEGIN| {4}at /, 'no key material, no stack trace');
    }
  });

  test("kubeward's own token file missing is a 503 local fault, logged once; the process keeps running and recovers when it appears", async () => {
    const tokenFile = join(dir, 'kubeward.token');
    const config = join(dir, 'token-file.kubeconfig');
    // The form client-node gives the in-cluster service account token (a file kubelet writes).
    await writeFile(config, kubeconfigFor(`https://127.0.0.1:${kube.port}`, kube.caFile, { 'auth-provider': { name: 'tokenFile', config: { tokenFile } } }));
    const { p, port } = await start([...baseArgs(), ...metricsArgs(config)]);
    const r = await scrape(port, ca.cert, tokens.reader);
    assert.equal(r.status, 503, r.body);
    assert.match(r.body, /cannot check the token with the apiserver/);
    assert.ok(!r.body.includes(tokens.reader));
    assert.equal((await scrape(port, ca.cert, tokens.reader)).status, 503, 'not cached: asked again');
    assert.equal(p.logs.filter((l) => /local fault/.test(l.msg)).length, 1, 'logged once');
    assert.equal(p.child.exitCode, null, 'still running');
    await writeFile(tokenFile, tokens.kubeward, { mode: 0o600 });
    const back = await scrape(port, ca.cert, tokens.reader);
    assert.equal(back.status, 200, back.body);
    await p.waitForLog(/^metrics scrapes are authorized again$/);
  });

  test('a real Prometheus scrapes kubeward with the scraper token: the target is up; with a token without the grant it is down with 403', { skip: prometheusMissing }, async (t) => {
    const { port } = await start([...baseArgs(), ...metricsArgs(kubewardConfig)]);
    const pdir = await mkdtemp(join(dir, 'prom-'));
    await writeFile(join(pdir, 'reader.token'), tokens.reader, { mode: 0o600 });
    await writeFile(join(pdir, 'nobody.token'), tokens.nobody, { mode: 0o600 });
    await writeFile(join(pdir, 'ca.crt'), ca.cert);
    const job = (name: string, tokenFile: string) => ({
      job_name: name,
      scheme: 'https',
      scrape_interval: '1s',
      scrape_timeout: '1s',
      authorization: { type: 'Bearer', credentials_file: join(pdir, tokenFile) },
      tls_config: { ca_file: join(pdir, 'ca.crt'), server_name: 'localhost' },
      static_configs: [{ targets: [`127.0.0.1:${port}`] }],
    });
    await writeFile(join(pdir, 'prometheus.yml'), YAML.stringify({ scrape_configs: [job('kubeward-node', 'reader.token'), job('kubeward-no-grant', 'nobody.token')] }));
    // Prometheus has no "port 0 and tell me": a free port, taken just before it starts.
    const web = await freePort();
    const prom = spawn(PROMETHEUS, [`--config.file=${join(pdir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(pdir, 'data')}`, `--web.listen-address=127.0.0.1:${web}`], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let promLog = '';
    prom.stderr!.setEncoding('utf8').on('data', (d: string) => (promLog = (promLog + d).slice(-4000)));
    t.after(() => void prom.kill('SIGKILL'));
    type Target = { labels: { job: string }; health: string; lastError: string };
    const targets = async (): Promise<Target[]> => {
      const r = await fetch(`http://127.0.0.1:${web}/api/v1/targets`).catch(() => undefined);
      return r?.ok ? ((await r.json()) as { data: { activeTargets: Target[] } }).data.activeTargets : [];
    };
    const settled = await waitFor(
      async () => {
        const ts = await targets();
        return ts.length === 2 && ts.every((x) => x.health !== 'unknown') ? ts : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 500, what: `both targets scraped (prometheus log: ${promLog.slice(-500)})` },
    );
    const byJob = Object.fromEntries(settled.map((x) => [x.labels.job, x]));
    assert.equal(byJob['kubeward-node']!.health, 'up', byJob['kubeward-node']!.lastError);
    assert.equal(byJob['kubeward-no-grant']!.health, 'down');
    assert.match(byJob['kubeward-no-grant']!.lastError, /403/);
    const q = await fetch(`http://127.0.0.1:${web}/api/v1/query?query=${encodeURIComponent('kubeward_build_info{job="kubeward-node"}')}`);
    const result = ((await q.json()) as { data: { result: { metric: Record<string, string> }[] } }).data.result;
    assert.equal(result.length, 1, 'kubeward_build_info stored by Prometheus');
    assert.match(result[0]!.metric.node_version!, /^v24\./);
  });
});
