// Local faults are not upstream failures, over real TCP: a token file that disappears or goes bad
// leaves the upstreams up and their connections open (reason local, in /readyz, /status and a
// metric); at a low fd limit a flood of clients meets the connection cap, not EMFILE, and the
// healthy connections and checks carry on; with the fd limit pulled under the running process
// (real EMFILE) nothing is blamed or evicted; a SIGHUP with a bad key is rejected and the proxy lives.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { connect, type Socket } from 'node:net';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from '../../src/admin/metrics.ts';
import { createTestCa, type TestCa, type CertPair } from '../../testkit/certs.ts';
import { ApiserverStandin } from '../../testkit/apiserver-standin.ts';
import { KubewardProcess } from '../../testkit/kubeward-process.ts';
import { waitFor } from '../../testkit/wait-for.ts';
import { startProxy } from '../../src/proxy/start-proxy.ts';
import { createLogger } from '../../src/base/logger.ts';
import { TEST_NATIVE_RELAY, frontendConfig, openGreeted, startUpstreams } from './proxy-fixtures.ts';
import { adminTokenFixture } from '../../testkit/admin-token.ts';

/** /status and drain need the admin token. */
const ADMIN_TOKEN = adminTokenFixture();

let ca: TestCa;
let serverCert: CertPair;
let dir: string;
before(async () => {
  ca = await createTestCa();
  serverCert = await ca.issueServer('apiserver', ['IP:127.0.0.1']);
  dir = await mkdtemp(join(tmpdir(), 'kw-local-fault-'));
});
after(() => Promise.all([rm(dir, { recursive: true, force: true }), ca.close()]));

function tlsThrough(port: number): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ host: '127.0.0.1', port, ca: ca.cert }, () => resolve(s));
    s.once('error', reject);
  });
}

test('a token file that vanishes or goes bad is a local fault: upstreams stay up, connections stay open, /readyz, /status and a metric say so', async (t) => {
  const standin = new ApiserverStandin({ cert: serverCert.cert, key: serverCert.key, token: 'good-token' });
  await standin.open();
  t.after(() => standin.close());
  const tokenFile = join(dir, 'token');
  await writeFile(tokenFile, 'good-token\n');
  const lines: { msg: string; reason?: string }[] = [];
  const log = createLogger({ format: 'json', level: 'info', write: (l) => void lines.push(JSON.parse(l) as { msg: string }) });
  const registry = new Registry();
  const upstream = { host: '127.0.0.1', port: standin.port };
  const config = frontendConfig([upstream], {}, { type: 'readyz', ca: ca.cert, tokenFile, intervalMs: 50, timeoutMs: 500, rise: 1, fall: 2 } as never);
  const proxy = await startProxy({ frontends: [config], shutdownGraceMs: 100 }, { log, registry, nativeRelay: TEST_NATIVE_RELAY });
  t.after(() => proxy.destroy());
  const port = proxy.addresses.get('test')![0]!.port;
  await waitFor(() => proxy.readiness().ready, { timeoutMs: 5000, what: 'upstream up' });
  const held = await tlsThrough(port);
  let closed = false;
  held.on('close', () => (closed = true));
  t.after(() => held.destroy());

  await unlink(tokenFile);
  await waitFor(() => proxy.status().frontends[0]!.localFault !== null, { timeoutMs: 5000, what: 'the local fault seen' });
  // Counted from the first local fault: a check may have been on its way to the stand-in when the
  // file went (checks of one upstream run one at a time, so none is in flight after this point).
  const checksBefore = standin.requests;
  // Many intervals (fall is 2) with the fault: nothing may change for the upstream.
  const faultChecks = async (n: number) => {
    const count = async () => Number(/kubeward_proxy_checks_total\{[^}]*result="local"[^}]*\} (\d+)/.exec(await registry.metrics())?.[1] ?? 0);
    const start = await count();
    await waitFor(async () => (await count()) >= start + n, { timeoutMs: 10_000, what: `${n} more local checks` });
  };
  await faultChecks(10);
  await writeFile(tokenFile, 'two\nlines\n');
  await faultChecks(10);
  const status = proxy.status().frontends[0]!;
  assert.equal(status.upstreams[0]!.state, 'up', 'the upstream is not blamed');
  assert.equal(closed, false, 'the live client connection is still open');
  assert.equal(standin.requests, checksBefore, 'no check reached the upstream while the token was unusable');
  assert.equal(status.localFault?.reason, 'local');
  assert.match(proxy.readiness().reason, /local fault in the checks of "test": token file .* holds 2 lines/);
  assert.equal(proxy.readiness().ready, true);
  assert.match(await registry.metrics(), /kubeward_proxy_local_fault\{frontend="test"\} 1/);
  assert.equal(lines.filter((l) => /local fault: upstream states are kept/.test(l.msg)).length, 1, 'logged once per streak');
  assert.equal(lines.filter((l) => l.msg === 'upstream down').length, 0);
  assert.ok(!JSON.stringify(lines).includes('two\\nlines'), 'the token is never logged');

  await writeFile(tokenFile, 'good-token\n');
  await waitFor(() => proxy.status().frontends[0]!.localFault === null, { timeoutMs: 5000, what: 'the fault over' });
  assert.equal(lines.filter((l) => l.msg === 'health checks run again: the local fault is over').length, 1);
  assert.match(await registry.metrics(), /kubeward_proxy_local_fault\{frontend="test"\} 0/);
  held.write('still here');
  assert.equal(closed, false);
});

test('at a low fd limit a flood of clients meets the connection cap: 28 healthy connections and the checks survive', async (t) => {
  const ups = await startUpstreams(t, ['a', 'b']);
  const p = new KubewardProcess(
    [
      'proxy',
      '--listen',
      '127.0.0.1:0',
      ...ups.flatMap((u) => ['--upstream', `127.0.0.1:${u.address.port}`]),
      '--health-check',
      'tcp',
      '--interval',
      '100ms',
      '--fall',
      '2',
      ...ADMIN_TOKEN.args,
      '--admin-address',
      '127.0.0.1:0',
      '--slow-start',
      '0s',
      '--shutdown-grace',
      '300ms',
    ],
    { prefix: ['prlimit', '--nofile=200:200', '--'] },
  );
  t.after(() => p.stop());
  const [listen, admin] = [await p.listenPort(), await p.adminPort()];
  const capLine = await p.waitForLog(/^connection cap set$/);
  const cap = Number(capLine.maxConnections);
  assert.equal(capLine.from, 'fd-limit');
  assert.ok(cap > 28 && cap < 100, `cap ${cap} from a limit of 200 fds`);
  await waitFor(async () => (await fetch(`http://127.0.0.1:${admin}/readyz`).catch(() => undefined))?.status === 200, { timeoutMs: 15_000, what: 'ready' });

  const healthy = await Promise.all(Array.from({ length: 28 }, () => openGreeted(listen)));
  t.after(() => healthy.forEach((h) => h.socket.destroy()));
  const closedHealthy = () => healthy.filter((h) => h.socket.destroyed || h.socket.readyState !== 'open').length;

  // The flood: far more connections than the 200 fds allow, held open, from this process.
  const flood: Socket[] = [];
  t.after(() => flood.forEach((s) => s.destroy()));
  for (let i = 0; i < 250; i++) {
    const s = connect({ host: '127.0.0.1', port: listen });
    s.on('error', () => {});
    flood.push(s);
  }
  await p.waitForLog(/^connection cap reached/);
  await waitFor(() => flood.filter((s) => s.destroyed).length >= 250 - (cap - 28), { timeoutMs: 10_000, what: 'connections over the cap closed at accept' });
  // Checks go on through the flood: more results come in, all ok.
  const okChecks = async () =>
    Number(/kubeward_proxy_checks_total\{[^}]*result="ok"[^}]*\} (\d+)/.exec(await (await fetch(`http://127.0.0.1:${admin}/metrics`)).text())?.[1] ?? 0);
  const before = await okChecks();
  await waitFor(async () => (await okChecks()) >= before + 5, { timeoutMs: 10_000, what: 'checks running during the flood' });
  const metrics = await (await fetch(`http://127.0.0.1:${admin}/metrics`)).text();
  assert.match(metrics, /kubeward_proxy_rejected_connections_total\{frontend="default",why="cap"[^}]*\} [1-9]\d*/);
  assert.match(metrics, new RegExp(`kubeward_proxy_connection_cap\\{frontend="default"[^}]*\\} ${cap}\n`));
  assert.equal(closedHealthy(), 0, 'every healthy connection is still open');
  t.diagnostic(`fd limit 200: cap ${cap}, 28 healthy + 250 flood connections, ${flood.filter((s) => s.destroyed).length} closed at accept, 0 healthy closed`);
  assert.equal(p.logs.filter((l) => l.msg === 'upstream down').length, 0, 'no upstream was blamed');
  assert.equal(p.logs.filter((l) => /^closing connections/.test(l.msg)).length, 0, 'no connection was evicted');
  assert.equal(p.logs.filter((l) => /^connection cap reached/.test(l.msg)).length, 1, 'the cap is logged once while it bites');
  // The healthy connections still carry bytes both ways (the upstreams echo nothing, so say hello and see the FIN path).
  for (const h of healthy) assert.equal(h.socket.write('x'), true);

  flood.forEach((s) => s.destroy());
  const fresh = await waitFor(() => openGreeted(listen).catch(() => undefined), { timeoutMs: 10_000, what: 'a new connection once the flood is gone' });
  fresh.socket.destroy();
  await p.waitForLog(/^below the connection cap again$/);
  p.signal('SIGTERM');
  assert.equal((await p.exited).code, 0);
});

test('a SIGHUP reload with a client key that is not a key is rejected; the running config stays and serves', async (t) => {
  const ups = await startUpstreams(t, ['a']);
  const client = await ca.issueClient('client', 'kubeward');
  const [certFile, keyFile, badKey] = [join(dir, 'c.crt'), join(dir, 'c.key'), join(dir, 'bad.key')];
  await writeFile(certFile, client.cert);
  await writeFile(keyFile, client.key);
  await writeFile(badKey, 'not a key\n');
  const file = join(dir, 'reload.yaml');
  const yaml = (key: string) =>
    `frontends:\n  - name: api\n    listen: ["127.0.0.1:0"]\n    upstreams: ["127.0.0.1:${ups[0]!.address.port}"]\n    healthCheck: {type: tls, caFile: "${ca.certFile}", clientCert: "${certFile}", clientKey: "${key}", interval: 100ms}\n`;
  await writeFile(file, yaml(keyFile));
  // The upstream speaks plain TCP: its TLS checks fail, so the proxy fails open; what matters is that it lives.
  const p = new KubewardProcess(['proxy', '--config', file, '--admin-address', 'off']);
  t.after(() => p.stop());
  const listen = await p.listenPort();
  await writeFile(file, yaml(badKey));
  p.signal('SIGHUP');
  const rejected = await p.waitForLog(/^config reload rejected; the running config stays$/);
  assert.match(String(rejected.err), /frontend "api": healthCheck\.clientKey .*bad\.key: holds no PEM private key/);
  assert.equal(p.logs.filter((l) => /^config reloaded/.test(l.msg)).length, 0, 'no false "config reloaded"');
  const g = await openGreeted(listen);
  g.socket.destroy();
  assert.equal(g.upstream, 'a', 'still serving');
  assert.equal(p.child.exitCode, null, 'still running');
  p.signal('SIGTERM');
  assert.equal((await p.exited).code, 0);
});

test('real EMFILE (the fd limit lowered under the running proxy): checks fail local, the upstream stays up, established connections keep carrying bytes', async (t) => {
  const ups = await startUpstreams(t, ['a']);
  ups[0]!.onConnection = (s) => s.pipe(s);
  const p = new KubewardProcess([
    'proxy',
    '--listen',
    '127.0.0.1:0',
    '--upstream',
    `127.0.0.1:${ups[0]!.address.port}`,
    '--health-check',
    'tcp',
    '--interval',
    '100ms',
    '--fall',
    '2',
    ...ADMIN_TOKEN.args,
    '--admin-address',
    '127.0.0.1:0',
  ]);
  t.after(() => p.stop());
  const [listen, admin] = [await p.listenPort(), await p.adminPort()];
  // Connection: close, so the proxy holds no admin connection that could close (and free a low fd
  // number) after the limit is lowered below.
  const ready = () => fetch(`http://127.0.0.1:${admin}/readyz`, { headers: { connection: 'close' } }).catch(() => undefined);
  await waitFor(async () => (await ready())?.status === 200, { timeoutMs: 15_000, what: 'ready' });
  const held = await Promise.all(Array.from({ length: 5 }, () => openGreeted(listen)));
  t.after(() => held.forEach((h) => h.socket.destroy()));
  const echo = (s: Socket) =>
    new Promise<string>((resolve) => {
      s.once('data', (d: Buffer) => resolve(d.toString()));
      s.write('ping');
    });
  for (const h of held) assert.equal(await echo(h.socket), 'ping');

  // A limit below what the process holds (the kernel allows that): every new socket is EMFILE, even
  // after a transient descriptor (the admin keep-alive connection of the readiness poll) closes.
  // The soft limit only: raising it back needs no privilege.
  const softLimit = readFileSync(`/proc/${p.pid}/limits`, 'utf8').match(/^Max open files\s+(\d+)/m)![1]!;
  const setLimit = (n: number | string) => execFileSync('prlimit', ['--pid', String(p.pid), `--nofile=${n}:`]);
  // A new descriptor takes the lowest free number, and the limit refuses numbers at or above it. The
  // native relay leaves free numbers below the count (it dup()s each connection's two sockets and
  // the originals are closed), so the limit is also held at the lowest free number.
  const fds = new Set(readdirSync(`/proc/${p.pid}/fd`).map(Number));
  let lowestFree = 0;
  while (fds.has(lowestFree)) lowestFree++;
  setLimit(Math.min(fds.size - 4, lowestFree));
  t.after(() => void (p.child.exitCode === null && setLimit(softLimit)));
  await p.waitForLog(/^health checks hit a local fault/);
  const fault = p.logs.find((l) => /^health checks hit a local fault/.test(l.msg))!;
  assert.match(String(fault.detail), /EMFILE/);
  // New clients meet EMFILE at accept too; keep trying for many check intervals (fall is 2).
  const started = performance.now();
  await waitFor(
    async () => {
      await openGreeted(listen).then(
        (g) => g.socket.destroy(),
        () => undefined,
      );
      return performance.now() - started > 2000;
    },
    { timeoutMs: 20_000, intervalMs: 50, what: 'twenty check intervals under EMFILE' },
  );
  for (const h of held) assert.equal(await echo(h.socket), 'ping', 'an established connection still carries bytes');
  assert.equal(p.logs.filter((l) => l.msg === 'upstream down').length, 0, 'the upstream was never blamed');
  assert.equal(p.logs.filter((l) => /^closing connections/.test(l.msg)).length, 0, 'nothing was evicted');
  assert.equal(p.logs.filter((l) => /^health checks hit a local fault/.test(l.msg)).length, 1, 'logged once per streak');

  setLimit(softLimit);
  await p.waitForLog(/^health checks run again: the local fault is over$/);
  const status = (await (await fetch(`http://127.0.0.1:${admin}/status`, { headers: ADMIN_TOKEN.headers })).json()) as {
    frontends: { localFault: unknown; upstreams: { state: string }[] }[];
  };
  assert.equal(status.frontends[0]!.upstreams[0]!.state, 'up');
  assert.equal(status.frontends[0]!.localFault, null);
  assert.equal(held.filter((h) => h.socket.destroyed).length, 0);
});
