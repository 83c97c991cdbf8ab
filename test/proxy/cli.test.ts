// The real CLI as a child process: bad config exits 2 with one line naming the key; the admin API
// drains and undrains an upstream; /status, /readyz and /metrics report it; SIGTERM shuts down.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import { freePort, waitFor } from '../../testkit/wait-for.ts';
import { MAIN, NODE, boundPortsInLog } from '../../testkit/kubeward-process.ts';
import { ensureNativeAddon, openGreeted, startUpstreams } from './proxy-fixtures.ts';
import { isAlive } from '../../testkit/process-alive.ts';
import { adminTokenFixture } from '../../testkit/admin-token.ts';

/** /status and drain need the admin token. */
const ADMIN_TOKEN = adminTokenFixture();

type Greeted = Awaited<ReturnType<typeof openGreeted>>;

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function runCli(t: TestContext, args: string[]): { child: ChildProcess; out: { stderr: string }; exited: Promise<number | null> } {
  const child = spawn(NODE, [MAIN, 'proxy', ...args], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  const out = { stderr: '' };
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out.stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return { child, out, exited };
}

async function configFile(t: TestContext, yaml: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kw-proxy-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'proxy.yaml');
  await writeFile(file, yaml);
  return file;
}

const badConfigs: { name: string; args?: string[]; yaml?: string; stderr: RegExp }[] = [
  {
    name: 'a listen address used by two frontends',
    yaml: 'frontends:\n  - {name: api, listen: ["127.0.0.1:16443"], upstreams: ["127.0.0.1:1"]}\n  - {name: etcd, listen: ["127.0.0.1:16443"], upstreams: ["127.0.0.1:2"]}\n',
    stderr: /frontends\[1\]\.listen: 127\.0\.0\.1:16443 is also the listen address of frontend "api"/,
  },
  {
    name: 'a listen address given twice on the command line',
    args: ['--listen', '127.0.0.1:16443', '--listen', '127.0.0.1:16443', '--upstream', '127.0.0.1:1'],
    stderr: /--listen: 127\.0\.0\.1:16443 is also the listen address/,
  },
  {
    name: 'an empty upstream list',
    yaml: 'frontends:\n  - {name: api, listen: ["127.0.0.1:16443"], upstreams: []}\n',
    stderr: /frontends\[0\]\.upstreams: list at least one upstream HOST:PORT, or NAME:PORT under upstreamDns/,
  },
  { name: 'no upstream at all', args: [], stderr: /nothing to proxy: give --upstream/ },
  {
    name: 'an unknown check type on the command line',
    args: ['--upstream', '127.0.0.1:1', '--health-check', 'http'],
    stderr: /--health-check: expected readyz, tls or tcp/,
  },
  {
    name: 'an unknown check type in the file',
    yaml: 'frontends:\n  - name: api\n    listen: ["127.0.0.1:16443"]\n    upstreams: ["127.0.0.1:1"]\n    healthCheck: {type: http}\n',
    stderr: /key "frontends\.0\.healthCheck\.type": expected readyz, tls or tcp/,
  },
  {
    name: 'an unknown data path',
    args: ['--upstream', '127.0.0.1:1', '--relay', 'uv'],
    stderr: /--relay: expected handle, socket or native/,
  },
  {
    name: 'an unknown way for workers to get connections',
    args: ['--upstream', '127.0.0.1:1', '--workers', '2', '--worker-accept', 'shared'],
    stderr: /--worker-accept: expected primary or reuseport/,
  },
  {
    name: 'an unreadable CA file',
    args: ['--upstream', '127.0.0.1:1', '--listen', '127.0.0.1:0', '--ca-file', '/nonexistent/ca.crt', '--admin-address', 'off'],
    stderr: /--ca-file \/nonexistent\/ca\.crt: cannot read/,
  },
];

for (const c of badConfigs) {
  test(`bad config exits 2 with one line naming the key: ${c.name}`, async (t) => {
    const args = c.yaml !== undefined ? ['--config', await configFile(t, c.yaml), '--admin-address', 'off'] : c.args!;
    const { out, exited } = runCli(t, [...args, '--log-level', 'silent']);
    assert.equal(await exited, 2, out.stderr);
    assert.match(out.stderr, c.stderr);
    assert.equal(out.stderr.trim().split('\n').length, 1, `one line: ${out.stderr}`);
  });
}

test('the admin API drains and undrains an upstream; SIGTERM shuts down within the grace', async (t) => {
  await ensureNativeAddon(); // the default data path is native: /status says so below
  const ups = await startUpstreams(t, ['a', 'b']);
  const { child, out, exited } = runCli(t, [
    '--listen',
    '127.0.0.1:0',
    ...ups.flatMap((u) => ['--upstream', `127.0.0.1:${u.address.port}`]),
    '--health-check',
    'tcp',
    '--interval',
    '200ms',
    '--drain-spread',
    '300ms',
    '--shutdown-grace',
    '1s',
    ...ADMIN_TOKEN.args,
    '--admin-address',
    '127.0.0.1:0',
    '--log-format',
    'json',
    // Undraining starts a slow start; off here so the undrained upstream is picked deterministically.
    '--slow-start',
    '0s',
  ]);
  const { listen: port, admin } = await boundPortsInLog(() => out.stderr);
  const base = `http://127.0.0.1:${admin}`;
  await waitFor(async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200, {
    timeoutMs: 15_000,
    what: `proxy ready; stderr: ${out.stderr.slice(-500)}`,
  });
  const conns = await Promise.all(Array.from({ length: 10 }, () => openGreeted(port)));
  t.after(() => conns.forEach((c) => c.socket.destroy()));
  const onB = conns.filter((c) => c.upstream === 'b');
  assert.equal(onB.length, 5);
  const b = `127.0.0.1:${ups[1]!.address.port}`;

  // A loopback peer without the admin token changes nothing.
  assert.equal((await fetch(`${base}/upstreams/default/${b}/drain`, { method: 'POST' })).status, 401);
  assert.equal(onB.filter((c) => c.socket.destroyed).length, 0, 'no connection closed by a refused drain');
  const drained = await fetch(`${base}/upstreams/default/${b}/drain`, { method: 'POST', headers: ADMIN_TOKEN.headers });
  assert.equal(drained.status, 200);
  assert.deepEqual(await drained.json(), { frontend: 'default', upstream: b, drained: true, closingConnections: 5 });
  await waitFor(() => onB.every((c) => c.socket.destroyed), { timeoutMs: 2000, what: 'connections to the drained upstream closed' });
  const more = await Promise.all(Array.from({ length: 4 }, () => openGreeted(port)));
  t.after(() => more.forEach((c) => c.socket.destroy()));
  assert.deepEqual(
    more.map((c) => c.upstream),
    ['a', 'a', 'a', 'a'],
    'a drained upstream gets nothing, even with fewer connections',
  );
  const status = (await (await fetch(`${base}/status`, { headers: ADMIN_TOKEN.headers })).json()) as {
    relay: string;
    frontends: { upstreams: { upstream: string; drained: boolean }[] }[];
  };
  assert.equal(status.frontends[0]!.upstreams.find((u) => u.upstream === b)!.drained, true);
  assert.equal(status.relay, 'native', 'the default data path');
  const metrics = await (await fetch(`${base}/metrics`)).text();
  assert.match(metrics, /kubeward_proxy_relay_path\{path="native"[^}]*\} 1/);
  assert.match(metrics, new RegExp(`kubeward_proxy_upstream_drained\\{frontend="default",upstream="${b}"[^}]*\\} 1`));
  assert.match(metrics, new RegExp(`kubeward_proxy_closed_connections_total\\{frontend="default",upstream="${b}",why="drained"[^}]*\\} 5`));
  assert.equal((await fetch(`${base}/upstreams/default/127.0.0.1:1/drain`, { method: 'POST', headers: ADMIN_TOKEN.headers })).status, 404);
  assert.equal((await fetch(`${base}/upstreams/nope/${b}/drain`, { method: 'POST', headers: ADMIN_TOKEN.headers })).status, 404);

  assert.equal((await fetch(`${base}/upstreams/default/${b}/undrain`, { method: 'POST', headers: ADMIN_TOKEN.headers })).status, 200);
  const after = await openGreeted(port);
  t.after(() => after.socket.destroy());
  assert.equal(after.upstream, 'b', 'undrained, the emptiest upstream is picked again');
  const logs = out.stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { msg: string; upstream?: string });
  assert.ok(logs.some((l) => l.msg === 'upstream drained by operator' && l.upstream === b));

  const started = performance.now();
  child.kill('SIGTERM');
  assert.equal(await exited, 0);
  const ms = performance.now() - started;
  assert.ok(ms > 800 && ms < 5000, `exited ${Math.round(ms)} ms after SIGTERM, once the 1 s grace for open connections was over`);
});

test('--relay socket runs the net.Socket data path and says so in /status and /metrics', async (t) => {
  const [up] = await startUpstreams(t, ['a']);
  const { child, out, exited } = runCli(t, [
    '--listen',
    '127.0.0.1:0',
    '--upstream',
    `127.0.0.1:${up!.address.port}`,
    '--health-check',
    'tcp',
    ...ADMIN_TOKEN.args,
    '--admin-address',
    '127.0.0.1:0',
    '--log-format',
    'json',
    '--relay',
    'socket',
  ]);
  const { listen: port, admin } = await boundPortsInLog(() => out.stderr);
  const base = `http://127.0.0.1:${admin}`;
  await waitFor(async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200, { timeoutMs: 15_000, what: 'proxy ready' });
  const c = await openGreeted(port);
  c.socket.destroy();
  assert.equal(c.upstream, 'a');
  assert.equal(((await (await fetch(`${base}/status`, { headers: ADMIN_TOKEN.headers })).json()) as { relay: string }).relay, 'socket');
  assert.match(await (await fetch(`${base}/metrics`)).text(), /kubeward_proxy_relay_path\{path="socket"[^}]*\} 1/);
  child.kill('SIGTERM');
  assert.equal(await exited, 0);
});

test('with --workers 2 two processes serve the listen address, both fail over, a drain reaches both, SIGTERM stops both', async (t) => {
  const ups = await startUpstreams(t, ['a', 'b']);
  // freePort stays for the listen port: the primary and its worker each bind this same port
  // (SO_REUSEPORT), where port 0 would give each process a port of its own. The admin listener is
  // the primary's alone: port 0, read from its log.
  const port = await freePort();
  const { child, out, exited } = runCli(t, [
    '--listen',
    `127.0.0.1:${port}`,
    ...ups.flatMap((u) => ['--upstream', `127.0.0.1:${u.address.port}`]),
    '--health-check',
    'tcp',
    '--interval',
    '200ms',
    '--drain-spread',
    '200ms',
    '--shutdown-grace',
    '500ms',
    ...ADMIN_TOKEN.args,
    '--admin-address',
    '127.0.0.1:0',
    '--log-format',
    'json',
    '--slow-start',
    '0s',
    '--workers',
    '2',
  ]);
  const logs = () =>
    out.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; upstream?: string; pids?: number[] });
  const count = (msg: string, upstream?: string) => logs().filter((l) => l.msg === msg && (upstream === undefined || l.upstream === upstream)).length;
  const { admin } = await boundPortsInLog(() => out.stderr);
  const base = `http://127.0.0.1:${admin}`;
  await waitFor(async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200, {
    timeoutMs: 15_000,
    what: `proxy ready; stderr: ${out.stderr.slice(-500)}`,
  });
  assert.equal(count('frontend listening'), 2, 'the primary is ready only once its worker listens too');
  const workerPids = logs().find((l) => l.msg === 'proxy workers started')!.pids!;
  assert.equal(workerPids.length, 1);
  t.after(() =>
    workerPids.forEach((pid) => {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }),
  );

  // The kernel spreads connections over both processes by their addresses: the primary (whose
  // /status this is) sees only its share.
  const first: Greeted[] = [];
  for (let i = 0; i < 40; i++) first.push(await openGreeted(port));
  t.after(() => first.forEach((c) => c.socket.destroy()));
  const accepted = async () =>
    ((await (await fetch(`${base}/status`, { headers: ADMIN_TOKEN.headers })).json()) as { frontends: { counters: { accepted: number } }[] }).frontends[0]!
      .counters.accepted;
  const byPrimary = await accepted();
  assert.ok(byPrimary > 0 && byPrimary < 40, `the primary accepted ${byPrimary} of 40 connections; the worker the rest`);
  first.forEach((c) => c.socket.destroy());

  const b = `127.0.0.1:${ups[1]!.address.port}`;
  await ups[1]!.close();
  const afterDeath: Greeted[] = [];
  for (let i = 0; i < 20; i++) afterDeath.push(await openGreeted(port));
  t.after(() => afterDeath.forEach((c) => c.socket.destroy()));
  assert.deepEqual(new Set(afterDeath.map((c) => c.upstream)), new Set(['a']), 'no client connection failed or reached the dead upstream');
  await waitFor(() => count('upstream down', b) === 2, { timeoutMs: 5000, what: `both processes mark ${b} down; stderr: ${out.stderr.slice(-500)}` });

  const a = `127.0.0.1:${ups[0]!.address.port}`;
  assert.equal((await fetch(`${base}/upstreams/default/${a}/drain`, { method: 'POST', headers: ADMIN_TOKEN.headers })).status, 200);
  await waitFor(() => count('upstream drained by operator', a) === 2, { timeoutMs: 5000, what: 'the drain reaching the worker' });

  child.kill('SIGTERM');
  assert.equal(await exited, 0);
  await waitFor(() => workerPids.every((pid) => !isAlive(pid)), { timeoutMs: 5000, what: 'the worker gone with the primary' });
});
