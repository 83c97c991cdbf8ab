// The OpenStack client's node:http transport against a real local HTTP server: the answer with its
// status, headers and body; connections kept and reused; a body over the limit, an answer cut off,
// a refused connection and an aborted call each reject, and the sender classifies them as before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../../base/clock.ts';
import { createSilentLogger } from '../../base/logger.ts';
import { sendWithRetries } from './http-sender.ts';
import { nodeFetch, withoutCredentials } from './node-fetch.ts';
import { OpenStackError } from './openstack-error.ts';

async function serve(
  t: { after(fn: () => void | Promise<void>): void },
  handler: Parameters<typeof createServer>[1],
): Promise<{ url: string; server: Server; sockets: () => number }> {
  const server = createServer(handler);
  let sockets = 0;
  server.on('connection', () => sockets++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, sockets: () => sockets };
}

test('status, headers and body come back; sequential calls reuse one kept connection', async (t) => {
  const seen: { method?: string; body: string; token?: string }[] = [];
  const s = await serve(t, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method, body, token: req.headers['x-auth-token'] as string | undefined });
      res.writeHead(req.method === 'POST' ? 201 : 404, { 'x-openstack-request-id': 'req-1', 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: req.method }));
    });
  });
  const f = nodeFetch();
  t.after(() => f.destroy());
  const a = await f(new URL(`${s.url}/v2.0/routers`), { method: 'POST', headers: { 'x-auth-token': 'tok' }, body: '{"router":{}}' });
  assert.equal(a.status, 201);
  assert.equal(a.headers.get('X-OpenStack-Request-ID'), 'req-1');
  assert.equal(a.headers.get('x-missing'), null);
  assert.deepEqual(JSON.parse(await a.text()), { ok: 'POST' });
  const b = await f(new URL(`${s.url}/v2.0/routers/x`), { method: 'GET', headers: {} });
  assert.equal(b.status, 404, 'any status resolves');
  assert.deepEqual(seen, [
    { method: 'POST', body: '{"router":{}}', token: 'tok' },
    { method: 'GET', body: '', token: undefined },
  ]);
  assert.equal(s.sockets(), 1, 'the second call went over the kept connection');
});

test('a body over the limit and an answer cut off reject; the sender retries a GET and then says no answer came', async (t) => {
  const big = await serve(t, (_req, res) => res.end('x'.repeat(2048)));
  const cut = await serve(t, (_req, res) => {
    res.writeHead(200, { 'content-length': '1000' });
    res.write('{"servers": [');
    setImmediate(() => res.socket?.destroy());
  });
  const f = nodeFetch({ maxBodyBytes: 1024 });
  t.after(() => f.destroy());
  await assert.rejects(f(new URL(big.url), { method: 'GET', headers: {} }), (e: Error) => /larger than 1024 bytes/.test(String((e.cause as Error).message)));
  await assert.rejects(f(new URL(cut.url), { method: 'GET', headers: {} }), /fetch failed/);
  const deps = { fetch: f, clock: systemClock, log: createSilentLogger(), policy: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2, attemptTimeoutMs: 2000 } };
  const err = await sendWithRetries(deps, { service: 'nova', method: 'GET', url: new URL(`${cut.url}/servers/detail`), headers: {} }).catch((e: unknown) => e);
  assert.ok(err instanceof OpenStackError, String(err));
  assert.equal(err.code, 'E_UPSTREAM');
  assert.equal(err.details.attempts, 2);
});

test('a refused connection names the system error; a timeout and a caller abort are told apart', async (t) => {
  const f = nodeFetch();
  t.after(() => f.destroy());
  const refused = await serve(t, () => {});
  const port = new URL(refused.url).port;
  await new Promise<void>((r) => (refused.server.closeAllConnections(), refused.server.close(() => r())));
  const deps = { fetch: f, clock: systemClock, log: createSilentLogger(), policy: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 2, attemptTimeoutMs: 300 } };
  const e1 = await sendWithRetries(deps, { service: 'neutron', method: 'GET', url: new URL(`http://127.0.0.1:${port}/x`), headers: {} }).catch(
    (e: unknown) => e,
  );
  assert.ok(e1 instanceof OpenStackError);
  assert.match(e1.details.faultMessage ?? '', /ECONNREFUSED/);
  const hang = await serve(t, () => {});
  const e2 = await sendWithRetries(deps, { service: 'neutron', method: 'GET', url: new URL(`${hang.url}/x`), headers: {} }).catch((e: unknown) => e);
  assert.ok(e2 instanceof OpenStackError);
  assert.equal(e2.code, 'E_TIMEOUT');
  const fence = new AbortController();
  const p = sendWithRetries(deps, { service: 'neutron', method: 'GET', url: new URL(`${hang.url}/x`), headers: {}, signal: fence.signal });
  fence.abort(new Error('lost the lease'));
  await assert.rejects(p, /lost the lease/);
});

test('redirects are followed as fetch follows them: 307 keeps the method and body, 303 goes on as a GET', async (t) => {
  const seen: string[] = [];
  const s = await serve(t, (req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url} ${body}`);
      if (req.url === '/old') res.writeHead(307, { location: '/new' }).end();
      else if (req.url === '/made') res.writeHead(303, { location: '/see' }).end();
      else if (req.url === '/loop') res.writeHead(302, { location: '/loop' }).end();
      else res.end('here');
    });
  });
  const f = nodeFetch();
  t.after(() => f.destroy());
  const a = await f(new URL(`${s.url}/old`), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.equal(a.status, 200);
  assert.equal(await a.text(), 'here');
  await f(new URL(`${s.url}/made`), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  assert.deepEqual(seen, ['POST /old {}', 'POST /new {}', 'POST /made {}', 'GET /see ']);
  await assert.rejects(f(new URL(`${s.url}/loop`), { method: 'GET', headers: {} }), (e: Error) =>
    /more than 20 redirects/.test(String((e.cause as Error).message)),
  );
});

test('a redirect to another origin does not carry the token; one within the origin does', async (t) => {
  const tokens: string[] = [];
  const other = await serve(t, (req, res) => {
    tokens.push(`other ${String(req.headers['x-auth-token'])} ${String(req.headers['authorization'])}`);
    res.end('moved here');
  });
  const s = await serve(t, (req, res) => {
    tokens.push(`self ${req.url} ${String(req.headers['x-auth-token'])}`);
    if (req.url === '/away') res.writeHead(302, { location: `${other.url}/there` }).end();
    else if (req.url === '/near') res.writeHead(307, { location: '/here' }).end();
    else res.end('here');
  });
  const f = nodeFetch();
  t.after(() => f.destroy());
  await f(new URL(`${s.url}/near`), { method: 'GET', headers: { 'X-Auth-Token': 'tok' } });
  const away = await f(new URL(`${s.url}/away`), { method: 'GET', headers: { 'X-Auth-Token': 'tok', Authorization: 'Bearer b', accept: 'application/json' } });
  assert.equal(await away.text(), 'moved here');
  assert.deepEqual(tokens, ['self /near tok', 'self /here tok', 'self /away tok', 'other undefined undefined']);
});

test('withoutCredentials drops every credential header in any case and keeps the rest', () => {
  fc.assert(
    fc.property(
      fc.dictionary(fc.stringMatching(/^[A-Za-z][A-Za-z-]{0,11}$/), fc.string({ maxLength: 8 })),
      fc.constantFrom('X-Auth-Token', 'x-auth-token', 'AUTHORIZATION', 'Cookie', 'X-Subject-Token'),
      (rest, cred) => {
        const out = withoutCredentials({ ...rest, [cred]: 'secret' });
        assert.ok(
          !Object.keys(out).some((k) => ['x-auth-token', 'x-subject-token', 'authorization', 'proxy-authorization', 'cookie'].includes(k.toLowerCase())),
        );
        for (const [k, v] of Object.entries(rest))
          if (!['x-auth-token', 'x-subject-token', 'authorization', 'proxy-authorization', 'cookie'].includes(k.toLowerCase()) && k !== cred)
            assert.equal(out[k], v);
      },
    ),
  );
});

test("a burst of calls in flight at once leaves its connections to the next burst (idle ones are kept, up to FREE_SOCKETS), and the caller's signal keeps no listener", async (t) => {
  const held: (() => void)[] = [];
  const s = await serve(t, (_req, res) => held.push(() => res.end('{}')));
  const f = nodeFetch();
  t.after(() => f.destroy());
  const fence = new AbortController();
  const deps = { fetch: f, clock: systemClock, log: createSilentLogger(), policy: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 2, attemptTimeoutMs: 5000 } };
  const burst = async () => {
    const calls = Array.from({ length: 20 }, () =>
      sendWithRetries(deps, { service: 'nova', method: 'GET', url: new URL(`${s.url}/servers/detail`), headers: {}, signal: fence.signal }),
    );
    // All 20 are in flight (the server holds every answer) before any is answered.
    for (let i = 0; i < 200 && held.length < 20; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(held.length, 20);
    for (const answer of held.splice(0)) answer();
    return Promise.all(calls);
  };
  await burst();
  assert.equal(s.sockets(), 20);
  await burst();
  // With 4 kept (undici's figure, before), 16 of the second burst's calls made new connections.
  assert.equal(s.sockets(), 20, "the second burst reused the first one's connections");
  assert.equal(getEventListeners(fence.signal, 'abort').length, 0, "every attempt let go of the caller's signal");
});
