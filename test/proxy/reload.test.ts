// Reload without dropping connections: in-process under load (held connections and a stream of
// new ones), rejected reloads that leave the running config alone, and the CLI's SIGHUP and
// --watch-config.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import { waitFor } from '../../testkit/wait-for.ts';
import { MAIN, NODE, boundPortsInLog } from '../../testkit/kubeward-process.ts';
import type { FrontendConfig, ProxyConfig } from '../../src/proxy/proxy-config.ts';
import { frontendConfig, listenPort, openGreeted, startTestProxy, startUpstreams, upstreamState, waitForState, type TcpUpstream } from './proxy-fixtures.ts';
import { adminTokenFixture } from '../../testkit/admin-token.ts';

/** /status and drain need the admin token. */
const ADMIN_TOKEN = adminTokenFixture();

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Upstreams that greet, then echo: a held connection can prove it still carries bytes. */
async function echoUpstreams(t: TestContext, names: string[]): Promise<TcpUpstream[]> {
  const ups = await startUpstreams(t, names);
  for (const u of ups) u.onConnection = (s) => s.pipe(s);
  return ups;
}

function echoOnce(socket: Socket, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString();
      if (buf.length < text.length) return;
      socket.off('data', onData);
      resolve(buf);
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error('closed')));
    socket.write(text);
  });
}

/** New connections in a loop (greeting read, then closed) until stopped or bounded; counts failures. */
function connectionLoad(port: () => number, maxMs: number) {
  const r = { ok: 0, failed: 0, errors: [] as string[] };
  let stopped = false;
  const deadline = performance.now() + maxMs;
  const loop = async () => {
    while (!stopped && performance.now() < deadline && r.ok + r.failed < 20_000) {
      try {
        const g = await openGreeted(port());
        g.socket.destroy();
        r.ok++;
      } catch (err) {
        r.failed++;
        if (r.errors.length < 5) r.errors.push(String(err));
      }
    }
  };
  const done = Promise.all([loop(), loop(), loop(), loop()]).then(() => r);
  return { r, stop: () => ((stopped = true), done) };
}

test('reloads under load change listeners, upstreams, checks and timeouts without dropping a connection', async (t) => {
  const ups = await echoUpstreams(t, ['a', 'b', 'c']);
  const base = frontendConfig([ups[0]!.address, ups[1]!.address], { idleTimeoutMs: 60_000 }, { intervalMs: 100 });
  const proxy = await startTestProxy(t, [base]);
  for (const u of ups.slice(0, 2)) await waitForState(proxy, u.address, 'up');
  const port = listenPort(proxy);
  const held = await Promise.all(Array.from({ length: 20 }, () => openGreeted(port)));
  t.after(() => held.forEach((h) => h.socket.destroy()));
  const load = connectionLoad(() => port, 15_000);
  await waitFor(() => load.r.ok > 50, { what: 'load running' });
  // The added listener binds port 0 on another loopback address (127.0.0.1:0 is the first one's key).
  const extra = { host: '127.0.0.2', port: 0 };
  const configs: FrontendConfig[] = [
    { ...base, upstreams: ups.map((u) => u.address), connectTimeoutMs: 300, healthCheck: { ...base.healthCheck, intervalMs: 150, rise: 1 } },
    { ...base, listen: [...base.listen, extra], upstreams: ups.map((u) => u.address), idleTimeoutMs: 30_000, drainSpreadMs: 200 },
    { ...base, listen: [...base.listen, extra], upstreams: ups.map((u) => u.address), healthCheck: { ...base.healthCheck, intervalMs: 80, rise: 3, fall: 3 } },
  ];
  for (const fc of configs) {
    const summary = await proxy.reload({ frontends: [fc], shutdownGraceMs: 1000 });
    assert.deepEqual(summary, { added: [], removed: [], updated: ['test'] });
    const okAt = load.r.ok;
    await waitFor(() => load.r.ok > okAt + 30, { what: 'serving between reloads' });
  }
  await waitForState(proxy, ups[2]!.address, 'up');
  const okBefore = load.r.ok;
  await waitFor(() => load.r.ok > okBefore + 50, { what: 'load after the reloads' });
  const r = await load.stop();
  t.diagnostic(`${r.ok} connections during 3 reloads, ${r.failed} failed`);
  assert.deepEqual([r.failed, r.errors], [0, []]);
  for (const h of held) assert.equal(await echoOnce(h.socket, 'ping\n'), 'ping\n', `held connection to ${h.upstream} still carries bytes`);
  assert.ok(upstreamState(proxy, ups[2]!.address).total > 0, 'the added upstream takes connections');
  const extraPort = proxy.addresses.get('test')!.find((a) => a.host === extra.host)!.port;
  const viaNew = await openGreeted(extraPort, extra.host);
  viaNew.socket.destroy();
  assert.match(viaNew.upstream, /^[abc]$/, 'the added listen address forwards');
  assert.equal(proxy.status().frontends[0]!.upstreams.length, 3);
});

test('a reload that cannot be applied is rejected whole and the running config stays', async (t) => {
  const ups = await echoUpstreams(t, ['a', 'b']);
  const base = frontendConfig([ups[0]!.address], {}, { intervalMs: 100 });
  const proxy = await startTestProxy(t, [base]);
  await waitForState(proxy, ups[0]!.address, 'up');
  const held = await openGreeted(listenPort(proxy));
  t.after(() => held.socket.destroy());
  const busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  t.after(() => busy.close());
  const busyPort = (busy.address() as { port: number }).port;
  const bad: ProxyConfig[] = [
    // an unreadable CA file
    {
      frontends: [{ ...base, upstreams: [ups[1]!.address], healthCheck: { ...base.healthCheck, type: 'readyz', caFile: '/nonexistent/ca.crt' } }],
      shutdownGraceMs: 1000,
    },
    // a new listen address that is taken, next to a new frontend that could start
    {
      frontends: [
        { ...base, upstreams: [ups[1]!.address], listen: [...base.listen, { host: '127.0.0.1', port: busyPort }] },
        { ...base, name: 'other', upstreams: [ups[1]!.address] },
      ],
      shutdownGraceMs: 1000,
    },
  ];
  await assert.rejects(proxy.reload(bad[0]!), /caFile \/nonexistent\/ca\.crt: cannot read/);
  await assert.rejects(proxy.reload(bad[1]!), new RegExp(`cannot listen on 127\\.0\\.0\\.1:${busyPort}`));
  const status = proxy.status();
  assert.deepEqual(
    status.frontends.map((f) => [f.name, f.upstreams.map((u) => u.upstream)]),
    [['test', [`127.0.0.1:${ups[0]!.address.port}`]]],
  );
  assert.equal(proxy.addresses.size, 1, 'the new frontend of the rejected reload is not running');
  const again = await openGreeted(listenPort(proxy));
  again.socket.destroy();
  assert.equal(again.upstream, 'a', 'still the old upstream list');
  assert.equal(await echoOnce(held.socket, 'still here\n'), 'still here\n');
});

test('a frontend removed by a reload stops accepting and leaves its connections to finish', async (t) => {
  const ups = await echoUpstreams(t, ['a']);
  const one = frontendConfig([ups[0]!.address], {}, { intervalMs: 100 });
  const two = { ...one, name: 'two' };
  const proxy = await startTestProxy(t, [one, two]);
  const port2 = listenPort(proxy, 'two');
  const held = await openGreeted(port2);
  t.after(() => held.socket.destroy());
  assert.deepEqual(await proxy.reload({ frontends: [one], shutdownGraceMs: 1000 }), { added: [], removed: ['two'], updated: ['test'] });
  await assert.rejects(openGreeted(port2), 'no longer accepting');
  assert.equal(await echoOnce(held.socket, 'x\n'), 'x\n', 'its established connection still works');
});

test('the CLI reloads on SIGHUP and on a file change with --watch-config, and keeps running on a bad file', async (t) => {
  const ups = await startUpstreams(t, ['a', 'b']);
  const dir = await mkdtemp(join(tmpdir(), 'kw-reload-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'proxy.yaml');
  // Port 0 in every version of the file: the listen key stays the same, so reloads keep the listener.
  const yaml = (upstreams: TcpUpstream[], extra = '') =>
    `healthCheck: tcp\ninterval: 100ms\nfrontends:\n  - name: api\n    listen: ["127.0.0.1:0"]\n    upstreams: [${upstreams.map((u) => `"127.0.0.1:${u.address.port}"`).join(', ')}]\n${extra}`;
  await writeFile(file, yaml([ups[0]!]));
  const child = spawn(
    NODE,
    [MAIN, 'proxy', '--config', file, '--watch-config', ...ADMIN_TOKEN.args, '--admin-address', '127.0.0.1:0', '--log-format', 'json'],
    {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const { listen: port, admin } = await boundPortsInLog(() => stderr);
  const upstreams = async () => {
    const s = (await (await fetch(`http://127.0.0.1:${admin}/status`, { headers: ADMIN_TOKEN.headers })).json()) as {
      frontends: { upstreams: { upstream: string }[] }[];
    };
    return s.frontends[0]!.upstreams.map((u) => u.upstream).join(',');
  };
  const key = (u: TcpUpstream) => `127.0.0.1:${u.address.port}`;
  await waitFor(async () => (await fetch(`http://127.0.0.1:${admin}/readyz`).catch(() => undefined))?.status === 200, {
    timeoutMs: 15_000,
    what: `ready; ${stderr.slice(-300)}`,
  });
  const held = await new Promise<Socket>((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port }, () => resolve(s));
    s.once('error', reject);
  });
  t.after(() => held.destroy());
  let heldClosed = false;
  held.on('close', () => (heldClosed = true));

  await writeFile(file, yaml(ups)); // watched: applied without a signal
  await waitFor(async () => (await upstreams()) === `${key(ups[0]!)},${key(ups[1]!)}`, { timeoutMs: 5000, what: 'file change applied' });

  await writeFile(file, yaml(ups, '    bogusKey: 1\n'));
  await waitFor(() => /config reload rejected; the running config stays/.test(stderr), { timeoutMs: 5000, what: 'rejection logged' });
  assert.match(stderr, /unknown key \\"frontends\.0\.bogusKey\\"/, 'the log line says what is wrong');
  assert.equal(await upstreams(), `${key(ups[0]!)},${key(ups[1]!)}`, 'the running config stays');

  await writeFile(file, yaml([ups[1]!]));
  child.kill('SIGHUP');
  await waitFor(async () => (await upstreams()) === key(ups[1]!), { timeoutMs: 5000, what: 'SIGHUP applied' });
  await waitFor(() => /"trigger":"SIGHUP"[^\n]*"msg":"config reloaded; established connections kept"/.test(stderr), {
    timeoutMs: 3000,
    what: 'a reload triggered by SIGHUP',
  });
  assert.equal(child.exitCode, null, 'SIGHUP does not end the process');
  assert.equal(heldClosed, false, 'a client connection held across three reloads stays open');
  assert.ok((await fetch(`http://127.0.0.1:${admin}/readyz`)).ok);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
});
