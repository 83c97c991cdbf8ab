// kubeward agent as a real process: proxy and watch in one process against HTTPS apiserver
// stand-ins (one admin listener, one registry, the watcher on the proxy's checks, proxy failover,
// ordered shutdown), config errors naming the section, and a mode's dependencies left unloaded.
// Runs the sources, or the build with KUBEWARD_BIN=dist (testkit/kubeward-process.ts).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTestCa, type CertPair, type TestCa } from '../testkit/certs.ts';
import { ApiserverStandin } from '../testkit/apiserver-standin.ts';
import { KUBEWARD_BIN, KubewardProcess, envWithoutOpenStack, runKubeward } from '../testkit/kubeward-process.ts';
import { waitFor } from '../testkit/wait-for.ts';
import { adminTokenFixture } from '../testkit/admin-token.ts';

/** /status needs the admin token. */
const ADMIN_TOKEN = adminTokenFixture();

const ROOT = fileURLToPath(new URL('..', import.meta.url));
let ca: TestCa;
let serverCert: CertPair;
let dir: string;
const procs: KubewardProcess[] = [];
const standins: ApiserverStandin[] = [];

before(async () => {
  ca = await createTestCa('kw-agent-ca');
  serverCert = await ca.issueServer('apiserver', ['DNS:localhost', 'IP:127.0.0.1']);
  dir = await mkdtemp(join(tmpdir(), 'kw-agent-'));
});
after(async () => {
  await Promise.all(procs.map((p) => p.stop()));
  await Promise.all(standins.map((s) => s.close()));
  await rm(dir, { recursive: true, force: true });
  await ca.close();
});

async function standin(name: string): Promise<ApiserverStandin> {
  const s = new ApiserverStandin({ cert: serverCert.cert, key: serverCert.key, name });
  await s.open();
  standins.push(s);
  return s;
}

function agent(configFile: string, env?: NodeJS.ProcessEnv): KubewardProcess {
  const p = new KubewardProcess(['agent', '--config', configFile], env ? { env } : {});
  procs.push(p);
  return p;
}

/** GET path through the proxy's listen address; resolves with the status and the body. */
function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, ca: ca.cert, servername: 'localhost', agent: false, timeout: 3000 }, (res) => {
      let body = '';
      res
        .setEncoding('utf8')
        .on('data', (d: string) => (body += d))
        .on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req
      .on('timeout', () => req.destroy(new Error('timeout')))
      .on('error', reject)
      .end();
  });
}

/**
 * Writes an agent config file in the test's directory: the proxy listens on a free port in front of
 * the stand-ins, the watch probes the first one; both trust the test CA. Extra lines go at the end
 * of their section (two spaces in).
 */
async function agentConfig(
  name: string,
  o: { admin: string; upstreams: ApiserverStandin[]; vip: string; stateDir: string; proxy?: string[]; watch?: string[] },
): Promise<string> {
  const file = join(dir, name);
  await writeFile(
    file,
    [
      `adminAddress: ${o.admin}`,
      `adminTokenFile: ${ADMIN_TOKEN.path}`,
      'proxy:',
      '  listen: ["127.0.0.1:0"]',
      `  upstream: [${o.upstreams.map((u) => `"127.0.0.1:${u.port}"`).join(', ')}]`,
      `  caFile: ${ca.certFile}`,
      ...(o.proxy ?? []).map((l) => `  ${l}`),
      'watch:',
      `  healthUrl: https://127.0.0.1:${o.upstreams[0]!.port}/readyz`,
      `  caFile: ${ca.certFile}`,
      `  vip: [${o.vip}]`,
      `  stateDir: ${o.stateDir}`,
      ...(o.watch ?? []).map((l) => `  ${l}`),
      '',
    ].join('\n'),
  );
  return file;
}

const admin = async (port: number, path: string) => {
  const r = await fetch(`http://127.0.0.1:${port}${path}`, { headers: ADMIN_TOKEN.headers });
  return { status: r.status, text: await r.text() };
};

test('proxy and watch in one process: the watcher uses the proxy checks, one admin listener and registry, failover, ordered shutdown', async () => {
  const [a, b] = [await standin('a'), await standin('b')];
  const stateDir = await mkdtemp(join(dir, 'state-'));
  // Port 0 everywhere: the agent binds, then logs the ports (no window for another process to take them).
  const configFile = await agentConfig('agent.yaml', {
    admin: '127.0.0.1:0',
    upstreams: [a, b],
    vip: '10.0.0.100',
    stateDir,
    proxy: ['interval: 1s', 'timeout: 500ms', 'fall: 1', 'shutdownGrace: 1s'],
    watch: ['interval: 100ms', 'fall: 1', 'heartbeat: 300ms'],
  });
  const p = agent(configFile);
  const [listen, adminPort] = [await p.listenPort(), await p.adminPort()];
  const shared = await p.waitForLog(/the watcher uses the proxy's checks/);
  assert.equal(shared.upstream, `127.0.0.1:${a.port}`);
  await waitFor(() => existsSync(join(stateDir, '10.0.0.100.up')), { what: '10.0.0.100.up', timeoutMs: 20_000 });

  // One admin listener: ready when both are, a status entry per mode, both modes' metrics.
  await waitFor(async () => (await admin(adminPort, '/readyz')).status === 200, { what: 'agent /readyz 200', timeoutMs: 15_000 });
  const status = JSON.parse((await admin(adminPort, '/status')).text) as Record<string, unknown>;
  assert.deepEqual(Object.keys(status).sort(), ['proxy', 'watch']);
  const metrics = (await admin(adminPort, '/metrics')).text;
  assert.match(metrics, /^kubeward_proxy_\w+/m);
  assert.match(metrics, /^kubeward_watch_\w+/m);

  // One prober: the proxy checks a once a second; a watcher probing on its own every 100 ms
  // would add about ten requests a second.
  // The window ends after four more requests at a (about 3 s of the proxy's checks alone, far
  // less with a second prober), polled rather than slept, so a slow machine widens the window.
  const before = a.requests;
  const windowStart = Date.now();
  await waitFor(() => a.requests - before >= 4, { what: 'four more requests at standin a', timeoutMs: 20_000 });
  const perSecond = (a.requests - before) / ((Date.now() - windowStart) / 1000);
  assert.ok(perSecond < 3, `standin a got ${perSecond.toFixed(1)} requests/s; the watcher should not probe it besides the proxy`);

  // a fails its readyz: the proxy takes it out (clients reach b), and the watcher, on the same
  // check, publishes down.
  a.setReadyz('fail');
  await waitFor(() => existsSync(join(stateDir, '10.0.0.100.down')), { what: '10.0.0.100.down', timeoutMs: 20_000 });
  for (let i = 0; i < 4; i++) {
    const r = await get(listen, '/version');
    assert.equal(r.status, 200);
    assert.equal((JSON.parse(r.body) as { server: string }).server, 'b', 'with a down, connections go to b');
  }

  // SIGTERM: one shutdown in order (watch first, then the proxy, then the admin listener).
  a.setReadyz('ok');
  p.signal('SIGTERM');
  const { code } = await p.exited;
  assert.equal(code, 0);
  const order = p.logs.find((l) => l.msg === 'shutting down' && l.agentMode === undefined);
  assert.deepEqual(order?.steps, ['watch: its shutdown steps', 'proxy: its shutdown steps', 'admin listener']);
  assert.deepEqual(
    (await readdir(stateDir)).filter((n) => n.startsWith('10.0.0.100.')),
    ['10.0.0.100.down'],
    'the watcher published down on exit',
  );
});

test('a killed apiserver: the proxy fails over, and the watcher takes the refused check as down at once', async () => {
  const [a, b] = [await standin('e'), await standin('f')];
  const stateDir = await mkdtemp(join(dir, 'state-'));
  const configFile = await agentConfig('agent-kill.yaml', {
    admin: '"off"',
    upstreams: [a, b],
    vip: '10.0.0.102',
    stateDir,
    proxy: ['interval: 300ms'],
    watch: ['interval: 100ms', 'fall: 100'],
  });
  const p = agent(configFile);
  const listen = await p.listenPort();
  await p.waitForLog(/the watcher uses the proxy's checks/);
  await waitFor(() => existsSync(join(stateDir, '10.0.0.102.up')), { what: '10.0.0.102.up', timeoutMs: 20_000 });
  await a.close();
  // fall 100 would take 100 failed checks; a refusal is down at once, through the proxy's check.
  const down = await p.waitForLog(/apiserver is down/, { timeoutMs: 20_000 });
  assert.match(String(down.reason), /connection refused/);
  for (let i = 0; i < 3; i++) {
    const r = await get(listen, '/version');
    assert.equal((JSON.parse(r.body) as { server: string }).server, 'f', 'with e gone, connections go to f');
  }
  await p.stop();
});

test('a watch whose probe differs from the proxy check probes on its own, and says why', async () => {
  const a = await standin('c');
  const stateDir = await mkdtemp(join(dir, 'state-'));
  const tokenFile = join(dir, 'token');
  await writeFile(tokenFile, 'abc\n');
  const configFile = await agentConfig('agent-own-probe.yaml', {
    admin: '"off"',
    upstreams: [a],
    vip: '10.0.0.101',
    stateDir,
    watch: [`tokenFile: ${tokenFile}`, 'interval: 200ms'],
  });
  const p = agent(configFile);
  const own = await p.waitForLog(/the watcher probes the local apiserver itself/);
  assert.match(String(own.reason), /authenticates differently/);
  await waitFor(() => existsSync(join(stateDir, '10.0.0.101.up')), { what: '10.0.0.101.up', timeoutMs: 20_000 });
  await p.stop();
});

test('config errors exit 2 with a line naming the section and key', async () => {
  const cases: Array<[string, RegExp]> = [
    ['logLevel: info\n', /no mode section; give at least one of proxy, watch, routes/],
    [
      'watch:\n  vip: [10.0.0.1]\n  insecureSkipTlsVerify: true\n  handoverSocket: /run/kubeward-handover/agent/listeners.sock\n',
      /watch\.handoverSocket: the agent hands over all its listeners at once; set handoverSocket at the top level/,
    ],
    [
      'proxy:\n  listen: ["127.0.0.1:1"]\n  upstream: ["127.0.0.1:2"]\n  healthCheck: tcp\n  workers: 2\n',
      /proxy\.workers: the agent runs the proxy in its own process/,
    ],
    ['watch:\n  vip: [10.0.0.1]\n  insecureSkipTlsVerify: true\n  intervall: 1s\n', /unknown key "watch\.intervall"/],
    ['watch:\n  vip: [10.0.0.1]\n  insecureSkipTlsVerify: true\n  interval: soon\n', /key "watch\.interval": "soon" is not a duration/],
    ['watch:\n  vip: [10.0.0.1]\n', /config section watch: --ca-file FILE/],
  ];
  for (const [yaml, expected] of cases) {
    const file = join(dir, `bad-${cases.findIndex((c) => c[0] === yaml)}.yaml`);
    await writeFile(file, yaml);
    const r = await runKubeward(['agent', '--config', file, '--admin-address', 'off']);
    assert.equal(r.code, 2, `${yaml}: ${r.stderr}`);
    // Every section is checked before anything starts: the one plain line says what to fix.
    const plain = r.stderr.split('\n').filter((l) => l.startsWith('kubeward agent: '));
    assert.equal(plain.length, 1, r.stderr);
    assert.match(plain[0]!, expected);
  }
});

/** Files of the modules a child loaded: source paths, or the inputs of the built chunks it loaded. */
async function loadedInputs(urlsFile: string): Promise<string[]> {
  const urls = (await readFile(urlsFile, 'utf8')).split('\n').filter((u) => u.startsWith('file:'));
  const paths = urls.map((u) => fileURLToPath(u));
  if (KUBEWARD_BIN === 'src') return paths.map((p) => p.slice(ROOT.length));
  const meta = JSON.parse(await readFile(join(ROOT, 'dist', 'meta.json'), 'utf8')) as { outputs: Record<string, { inputs: Record<string, unknown> }> };
  return paths.flatMap((p) => Object.keys(meta.outputs[p.slice(ROOT.length)]?.inputs ?? {}));
}

test('a proxy run from flags with tcp checks loads no yaml and no TLS; the build, none of the built-ins it replaces (docs/footprint.md)', async () => {
  const up = await standin('f');
  const urlsFile = join(dir, 'loaded-modules-proxy-flags.txt');
  const hook = join(ROOT, 'testkit', 'record-loaded-modules.ts');
  const p = new KubewardProcess(['proxy', '--listen', '127.0.0.1:0', '--upstream', `127.0.0.1:${up.port}`, '--health-check', 'tcp', '--admin-address', 'off'], {
    env: envWithoutOpenStack({ NODE_OPTIONS: `--import ${hook}`, KUBEWARD_LOADED_MODULES_FILE: urlsFile }),
  });
  procs.push(p);
  await p.waitForLog(/frontend listening/);
  const inputs = await loadedInputs(urlsFile);
  assert.ok(
    inputs.some((i) => i.includes('src/proxy/start-proxy.ts')),
    `the proxy was loaded: ${inputs.length} inputs`,
  );
  // yaml is read only with a config file; TLS only for readyz checks or TLS material.
  assert.deepEqual(
    inputs.filter((i) => /node_modules\/yaml\//.test(i)),
    [],
    'yaml loaded without a config file',
  );
  const builtins = (await readFile(urlsFile, 'utf8')).split('\n').filter((u) => u.startsWith('node:'));
  assert.ok(builtins.includes('node:net'), `built-ins are recorded: ${builtins.join(' ')}`);
  // In the build only (scripts/build.ts): sonic-boom's assert and pino's worker_threads replaced.
  // No https or perf_hooks: the metrics are our own (src/admin/metrics.ts), without a Pushgateway.
  const unwanted = KUBEWARD_BIN === 'dist' ? /^node:(tls|https|assert|worker_threads|perf_hooks)$/ : /^node:tls$/;
  assert.deepEqual(
    builtins.filter((b) => unwanted.test(b)),
    [],
    'loaded although a proxy with tcp checks never uses it',
  );
  await p.stop();
});

test("a mode's dependencies stay unloaded when another mode runs: a proxy without discovery loads neither the Kubernetes client nor watch or routes", async () => {
  const up = await standin('d');
  const configFile = join(dir, 'agent-proxy-only.yaml');
  await writeFile(configFile, `adminAddress: "off"\nproxy:\n  listen: ["127.0.0.1:0"]\n  upstream: ["127.0.0.1:${up.port}"]\n  caFile: ${ca.certFile}\n`);
  const urlsFile = join(dir, 'loaded-modules.txt');
  const hook = join(ROOT, 'testkit', 'record-loaded-modules.ts');
  const p = agent(configFile, envWithoutOpenStack({ NODE_OPTIONS: `--import ${hook}`, KUBEWARD_LOADED_MODULES_FILE: urlsFile }));
  await p.waitForLog(/frontend listening/);
  const inputs = await loadedInputs(urlsFile);
  assert.ok(
    inputs.some((i) => i.includes('src/proxy/start-proxy.ts')),
    `the proxy was loaded: ${inputs.length} inputs`,
  );
  const unexpected = inputs.filter((i) =>
    /node_modules\/@kubernetes\/client-node\/|src\/(watch|routes|controllers|clients)\/|src\/cli\/(watch|routes|operator)\.ts/.test(i),
  );
  assert.deepEqual(unexpected, [], 'loaded although no mode here needs it');
  await p.stop();
});
