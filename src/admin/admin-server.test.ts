import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { networkInterfaces } from 'node:os';
import { Registry } from './metrics.ts';
import { createSilentLogger } from '../base/logger.ts';
import { ADMIN_MAX_CONNECTIONS, startAdminServer, type AdminServerOptions } from './admin-server.ts';

const TOKEN = 'a'.repeat(40);
const auth = { authorization: `Bearer ${TOKEN}` };

async function start(t: import('node:test').TestContext, host = '127.0.0.1', extra: Partial<AdminServerOptions> = {}) {
  const admin = await startAdminServer({
    address: { host, port: 0 },
    registry: new Registry(),
    log: createSilentLogger(),
    token: TOKEN,
    readiness: () => ({ ready: true, reason: 'fine' }),
    status: () => ({ healthUrl: 'https://u:hunter2@127.0.0.1:6443/readyz', auth: { password: 'hunter2' }, vips: ['10.0.0.1'] }),
    ...extra,
  });
  t.after(() => admin.close());
  return admin;
}

function openIdle(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port }, () => resolve(s));
    s.once('error', reject);
  });
}

test('/status never carries a secret: secret keys and URL userinfo are redacted', async (t) => {
  const admin = await start(t);
  const text = await (await fetch(`http://127.0.0.1:${admin.address.port}/status`, { headers: auth })).text();
  assert.ok(!text.includes('hunter2'), text);
  assert.deepEqual(JSON.parse(text), { healthUrl: 'https://127.0.0.1:6443/readyz', auth: { password: '[redacted]' }, vips: ['10.0.0.1'] });
});

test('40 idle local connections do not fail probes: 25 /healthz and /readyz probes all succeed', async (t) => {
  const admin = await start(t);
  const port = admin.address.port;
  const idle = await Promise.all(Array.from({ length: 40 }, () => openIdle(port).catch(() => undefined)));
  t.after(() => idle.forEach((s) => s?.destroy()));
  let ok = 0;
  const failures: string[] = [];
  for (let i = 0; i < 25; i++) {
    // A new connection per probe, as kubelet's HTTP prober makes.
    const path = i % 2 === 0 ? '/healthz' : '/readyz';
    const r = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { connection: 'close' }, signal: AbortSignal.timeout(2000) }).catch((e: Error) => e);
    if (r instanceof Response && r.status === 200) ok++;
    else failures.push(r instanceof Response ? String(r.status) : r.message);
  }
  assert.equal(ok, 25, `probes failed: ${failures.join(', ')}`);
  // The budget still holds: the idle connections beyond it were closed to make room.
  const stillOpen = idle.filter((s) => s && !s.destroyed && s.readyState === 'open').length;
  assert.ok(stillOpen <= ADMIN_MAX_CONNECTIONS, `${stillOpen} idle connections open`);
});

test('an idle connection that never sends a request is closed after the idle timeout', async (t) => {
  const admin = await start(t, '127.0.0.1', { idleTimeoutMs: 300 });
  const s = await openIdle(admin.address.port);
  t.after(() => s.destroy());
  const started = performance.now();
  await new Promise<void>((resolve) => s.once('close', () => resolve()));
  const took = performance.now() - started;
  assert.ok(took > 200 && took < 5000, `closed after ${Math.round(took)} ms`);
});

test('/status and control routes need the admin token besides a loopback peer; probes and /metrics do not', async (t) => {
  const calls: string[] = [];
  const routes = () => [{ method: 'POST' as const, path: /^\/act$/, control: true, handle: async () => (calls.push('act'), { status: 200, body: {} }) }];
  const admin = await start(t, '127.0.0.1', { routes });
  const base = `http://127.0.0.1:${admin.address.port}`;
  assert.equal((await fetch(`${base}/status`)).status, 401);
  assert.equal((await fetch(`${base}/status`, { headers: { authorization: `Bearer ${'b'.repeat(40)}` } })).status, 401);
  assert.equal((await fetch(`${base}/status`, { headers: { authorization: `Bearer ${TOKEN}x` } })).status, 401);
  assert.equal((await fetch(`${base}/act`, { method: 'POST' })).status, 401);
  assert.deepEqual(calls, [], 'the handler never ran without the token');
  assert.equal((await fetch(`${base}/act`, { method: 'POST', headers: auth })).status, 200);
  assert.deepEqual(calls, ['act']);
  for (const path of ['/healthz', '/readyz', '/metrics']) assert.equal((await fetch(`${base}${path}`)).status, 200, path);
  // Without a token file the endpoints say how to enable them.
  const bare = await start(t, '127.0.0.1', { token: undefined, routes });
  const r = await fetch(`http://127.0.0.1:${bare.address.port}/status`, { headers: auth });
  assert.equal(r.status, 401);
  assert.match(await r.text(), /--admin-token-file/);
});

test('/status is served to loopback peers only, token or not; probes are served to anyone', async (t) => {
  const own = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal);
  if (!own) return t.skip('no non-loopback IPv4 address on this machine');
  const admin = await start(t, '0.0.0.0');
  const base = `http://${own.address}:${admin.address.port}`;
  assert.equal((await fetch(`${base}/status`, { headers: auth })).status, 403);
  assert.equal((await fetch(`${base}/readyz`)).status, 200);
  assert.equal((await fetch(`http://127.0.0.1:${admin.address.port}/status`, { headers: auth })).status, 200);
});
