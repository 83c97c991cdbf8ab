import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { Registry } from 'prom-client';
import { createSilentLogger } from '../base/logger.ts';
import { waitFor } from '../../testkit/wait-for.ts';
import { ADMIN_MAX_CONNECTIONS, startAdminServer } from './admin-server.ts';

async function start(t: import('node:test').TestContext, host = '127.0.0.1') {
  const admin = await startAdminServer({
    address: { host, port: 0 },
    registry: new Registry(),
    log: createSilentLogger(),
    readiness: () => ({ ready: true, reason: 'fine' }),
    status: () => ({ healthUrl: 'https://u:hunter2@127.0.0.1:6443/readyz', auth: { password: 'hunter2' }, vips: ['10.0.0.1'] }),
  });
  t.after(() => admin.close());
  return admin;
}

test('/status never carries a secret: secret keys and URL userinfo are redacted', async (t) => {
  const admin = await start(t);
  const text = await (await fetch(`http://127.0.0.1:${admin.address.port}/status`)).text();
  assert.ok(!text.includes('hunter2'), text);
  assert.deepEqual(JSON.parse(text), { healthUrl: 'https://127.0.0.1:6443/readyz', auth: { password: '[redacted]' }, vips: ['10.0.0.1'] });
});

test('connections beyond the cap are closed at accept; served ones keep working', async (t) => {
  const admin = await start(t);
  const port = admin.address.port;
  const held = await Promise.all(
    Array.from(
      { length: ADMIN_MAX_CONNECTIONS },
      () =>
        new Promise<import('node:net').Socket>((resolve) => {
          const s = connect({ host: '127.0.0.1', port }, () => resolve(s));
          s.on('error', () => {});
        }),
    ),
  );
  t.after(() => held.forEach((s) => s.destroy()));
  const extra = connect({ host: '127.0.0.1', port });
  extra.on('error', () => {});
  const closed = await new Promise<boolean>((resolve) => {
    extra.once('close', () => resolve(true));
    setTimeout(() => resolve(false), 5000).unref();
  });
  assert.ok(closed, `connection ${ADMIN_MAX_CONNECTIONS + 1} was closed by the server`);
  held.forEach((s) => s.destroy());
  await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200, {
    timeoutMs: 5000,
    what: 'served again once under the cap',
  });
});

test('an idle connection that never sends a request is closed by the server', async (t) => {
  const admin = await start(t);
  const s = connect({ host: '127.0.0.1', port: admin.address.port });
  s.on('error', () => {});
  t.after(() => s.destroy());
  const started = performance.now();
  await new Promise<void>((resolve) => s.once('close', () => resolve()));
  // Bounded by the test runner's timeout; the server closes it after its idle limit (10 s).
  assert.ok(performance.now() - started > 1000, 'not closed at once');
});

test('/status is served to loopback peers only; probes are served to anyone', async (t) => {
  const own = Object.values(networkInterfaces())
    .flat()
    .find((i) => i && i.family === 'IPv4' && !i.internal);
  if (!own) return t.skip('no non-loopback IPv4 address on this machine');
  const admin = await start(t, '0.0.0.0');
  const base = `http://${own.address}:${admin.address.port}`;
  assert.equal((await fetch(`${base}/status`)).status, 403);
  assert.equal((await fetch(`${base}/readyz`)).status, 200);
  assert.equal((await fetch(`http://127.0.0.1:${admin.address.port}/status`)).status, 200);
});
