import { strict as assert } from 'node:assert';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { Agent as HttpsAgent, createServer, request, type RequestOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { TLSSocket } from 'node:tls';
import fc from 'fast-check';
import { createTestCa } from '../../../testkit/certs.ts';
import { KubeClient, pooledRequestOptions, sharesTls } from './kube-client.ts';
import { loadKubeConfig } from './load-kube-config.ts';
import { TlsAgentPool, tlsIdentityKey, type TlsIdentityOptions } from './tls-agent-pool.ts';

/** One pool for the file's tests, as one process's clients share one. */
const pool = new TlsAgentPool();

test('clients with the same TLS identity share one keep-alive agent and context; another identity gets its own', () => {
  const before = pool.pooledTlsCount();
  const a = pool.pooledTls({ rejectUnauthorized: true, servername: 'api.one.example' });
  const b = pool.pooledTls({ rejectUnauthorized: true, servername: 'api.one.example' });
  const c = pool.pooledTls({ rejectUnauthorized: true, servername: 'api.two.example' });
  assert.equal(a, b);
  assert.notEqual(a.agent, c.agent);
  assert.notEqual(a.secureContext, c.secureContext);
  assert.equal(pool.pooledTlsCount(), before + 2);
  const opts = a.agent.options as { keepAlive?: boolean; maxSockets?: number; timeout?: number };
  assert.equal(opts.keepAlive, true);
  assert.ok((opts.maxSockets ?? Infinity) <= 8, 'a small number of sockets per origin');
  assert.ok((opts.timeout ?? 0) > 0, 'idle sockets close');
});

test('the identity key separates every field, also when the bytes of two fields would run together', () => {
  fc.assert(
    fc.property(fc.string(), fc.string(), fc.string(), fc.string(), fc.boolean(), (ca1, cert1, ca2, cert2, verify) => {
      const k1 = tlsIdentityKey({ ca: ca1, cert: cert1, rejectUnauthorized: verify });
      const k2 = tlsIdentityKey({ ca: ca2, cert: cert2, rejectUnauthorized: verify });
      assert.equal(k1 === k2, ca1 === ca2 && cert1 === cert2);
    }),
  );
  assert.notEqual(tlsIdentityKey({ rejectUnauthorized: false }), tlsIdentityKey({}));
  assert.equal(tlsIdentityKey({ rejectUnauthorized: true }), tlsIdentityKey({}));
  assert.notEqual(tlsIdentityKey({ ca: ['a', 'b'] }), tlsIdentityKey({ ca: 'ab' }));
});

test('a cluster behind a proxy (proxy-url in its kubeconfig) and a plain-http server never use the shared pool', () => {
  const text = (proxy: string) => `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster:
    server: https://api.example:6443
${proxy}contexts:
- name: c
  context: { cluster: c, user: u }
current-context: c
users:
- name: u
  user: { token: abc }
`;
  const plain = loadKubeConfig({ kind: 'text', text: text(''), what: 'test' });
  const proxied = loadKubeConfig({ kind: 'text', text: text('    proxy-url: http://proxy.example:3128\n'), what: 'test' });
  assert.equal(sharesTls(plain, new URL('https://api.example:6443/api')), true);
  assert.equal(sharesTls(proxied, new URL('https://api.example:6443/api')), false);
  assert.equal(sharesTls(plain, new URL('http://127.0.0.1:8080/api')), false);
  assert.equal(proxied.getCurrentCluster()?.proxyUrl, 'http://proxy.example:3128', 'the copy made to drop the text keeps every field');
});

test("a pooled agent's socket-list key is the origin and the TLS options without the CA, certificate and key (its context holds them)", () => {
  const pem = (label: string) => `-----BEGIN ${label}-----\n${'A'.repeat(1500)}\n-----END ${label}-----\n`;
  // The request's options as client-node fills them in: the material next to the pooled context.
  const { agent } = pool.pooledTls({ rejectUnauthorized: true, servername: 'api.name.example' });
  const material = { ca: pem('CERTIFICATE'), cert: Buffer.from(pem('CERTIFICATE')), key: pem('PRIVATE KEY') };
  const request = { host: 'api.name.example', port: 6443, rejectUnauthorized: true, servername: 'api.name.example', ...material };
  const name = agent.getName(request);
  assert.ok(name.length < 200, `a short key, not the material: ${name.length} characters`);
  assert.ok(!name.includes('AAAA'));
  assert.equal(name, agent.getName({ host: 'api.name.example', port: 6443, rejectUnauthorized: true, servername: 'api.name.example' }));
  assert.notEqual(name, agent.getName({ ...request, port: 6444 }), 'another origin has its own sockets');
  assert.ok(new HttpsAgent().getName(request).includes('AAAA'), "node's own agent keys by the material (what this guards against)");
  assert.equal(request.ca, material.ca, "the caller's options are left as they are");
});

test("an identity unused for 4 s with no socket is dropped (its context's memory), and the next call builds it again", () => {
  const t0 = Date.now() + 86_400_000; // after every entry the other tests made
  const a = pool.pooledTls({ servername: 'api.idle.example' }, t0);
  assert.equal(pool.pooledTls({ servername: 'api.idle.example' }, t0 + 3_000), a, 'still in use within 4 s');
  const b = pool.pooledTls({ servername: 'api.other.example' }, t0 + 3_000 + 4_000);
  const again = pool.pooledTls({ servername: 'api.idle.example' }, t0 + 3_000 + 4_000);
  assert.notEqual(again, a);
  assert.notEqual(again.secureContext, a.secureContext);
  assert.equal(pool.pooledTls({ servername: 'api.other.example' }, t0 + 3_000 + 4_001), b, 'a recent one is kept');
});

test("a dropped identity's context is freed at once, and a caller that still holds the entry connects with a context of its own (node aborts on a closed one)", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-tls-close-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const ca = await createTestCa('kw-close-ca', dir);
  const pair = await ca.issueServer('apiserver', ['IP:127.0.0.1']);
  const server = createServer({ cert: pair.cert, key: pair.key }, (_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const port = (server.address() as AddressInfo).port;
  const identity = { ca: ca.cert, rejectUnauthorized: true };
  const t0 = Date.now() + 1.5 * 86_400_000; // after the entries of the tests above, before those below
  const held = pool.pooledTls(identity, t0);
  const closedBefore = pool.closedTlsContexts();
  // 5 s later, unused and without a socket: the next call drops it.
  const again = pool.pooledTls(identity, t0 + 5_000);
  assert.notEqual(again, held, 'dropped and built again');
  assert.equal(pool.closedTlsContexts(), closedBefore + 1, "the dropped identity's context was freed");
  const get = (shared: typeof held) =>
    new Promise<string>((resolve, reject) => {
      const options = { host: '127.0.0.1', port, path: '/', ...identity, agent: shared.agent, secureContext: shared.secureContext };
      request(options, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString())).on('end', () => resolve(body));
      })
        .on('error', reject)
        .end();
    });
  assert.equal(await get(held), 'ok', 'the entry held past its drop still connects, and verifies the server with the CA in its options');
  assert.equal(await get(again), 'ok');
  held.agent.destroy();
  again.agent.destroy();
});

test("a cluster's next cycle resumes its TLS session after the agent was dropped (no full handshake), and another identity does not get it", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-tls-session-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const ca = await createTestCa('kw-session-ca', dir);
  const pair = await ca.issueServer('apiserver', ['IP:127.0.0.1']);
  const server = createServer({ cert: await readFile(pair.certFile), key: await readFile(pair.keyFile) }, (_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const port = (server.address() as AddressInfo).port;
  const caPem = await readFile(ca.certFile, 'utf8');
  // One call through the pool as kube-client.ts makes it; reports whether its connection resumed a session.
  const call = (identity: TlsIdentityOptions, nowMs: number) =>
    new Promise<{ resumed: boolean; agent: unknown }>((resolve, reject) => {
      const shared = pool.pooledTls(identity, nowMs);
      const options: RequestOptions & { secureContext: unknown } = {
        host: '127.0.0.1',
        port,
        path: '/',
        ...identity,
        agent: shared.agent,
        secureContext: shared.secureContext,
      };
      const req = request(options, (res) => {
        const socket = res.socket as TLSSocket;
        // What the socket keeps for its life (node's tls.connect): the pooled context, not the CA.
        const kept = Object.getOwnPropertySymbols(socket).find((sym) => sym.description === 'connect-options');
        const connectOptions = kept && (socket as unknown as Record<symbol, { ca?: unknown; secureContext?: unknown }>)[kept];
        if (connectOptions && (connectOptions.ca !== undefined || connectOptions.secureContext !== shared.secureContext))
          reject(new Error('the socket keeps the CA from the options, or not the pooled context'));
        res.resume();
        res.on('end', () => {
          // The ticket comes after the handshake: wait until the socket has one to give.
          const done = () => {
            const resumed = socket.isSessionReused();
            // The cycle is over: its socket closes (the pool drops only an identity with no socket).
            socket.once('close', () => setImmediate(() => resolve({ resumed, agent: shared.agent })));
            shared.agent.destroy();
          };
          if (socket.getSession() !== undefined) setImmediate(done);
          else socket.once('session', () => setImmediate(done));
        });
      });
      req.on('error', reject).end();
    });
  const t0 = Date.now() + 2 * 86_400_000; // after every entry the other tests made
  const mine = { ca: caPem, rejectUnauthorized: true };
  const before = pool.keptTlsSessions();
  const first = await call(mine, t0);
  assert.equal(first.resumed, false, 'the first connection makes a full handshake');
  assert.ok(pool.keptTlsSessions() > before, 'its session is kept');
  // The next cycle, 30 s later: the identity (agent and context) was dropped and is built again.
  const next = await call(mine, t0 + 30_000);
  assert.notEqual(next.agent, first.agent, 'a new agent');
  assert.equal(next.resumed, true, 'the new agent resumes the kept session');
  // A different CA is another identity: it never resumes a session a full handshake under another CA made.
  const other = await call({ ca: [caPem, caPem], rejectUnauthorized: true }, t0 + 60_000);
  assert.equal(other.resumed, false);
});

test('a per-cluster client through the pool authenticates with its client certificate (from the context alone) and its next cycle resumes the session', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-tls-mtls-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const ca = await createTestCa('kw-mtls-ca', dir);
  const pair = await ca.issueServer('apiserver', ['IP:127.0.0.1']);
  const user = await ca.issueClient('cluster-admin', 'kubeward-operator');
  const seen: { cn: string | undefined; resumed: boolean }[] = [];
  const server = createServer({ cert: pair.cert, key: pair.key, ca: ca.cert, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const socket = req.socket as TLSSocket;
    seen.push({ cn: socket.getPeerCertificate().subject?.CN as string | undefined, resumed: socket.isSessionReused() });
    res.setHeader('content-type', 'application/json');
    // No keep-alive: each cycle opens its own connection, as after the pool's 2 s idle close.
    res.setHeader('connection', 'close');
    res.end('{"kind":"NodeList","items":[]}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  const port = (server.address() as AddressInfo).port;
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const text = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}", certificate-authority-data: ${b64(ca.cert)}}}]
users: [{name: u, user: {client-certificate-data: ${b64(user.cert)}, client-key-data: ${b64(user.key)}}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`;
  // A cycle: one call by a client built from the kubeconfig, as the operator's per-cluster client.
  const cycle = async () => {
    const client = new KubeClient(loadKubeConfig({ kind: 'text', text, what: 'test' }), { sharedTls: pool, timeoutMs: 5000 });
    assert.deepEqual(await client.request('GET', '/api/v1/nodes'), { kind: 'NodeList', items: [] });
  };
  await cycle();
  await cycle();
  assert.equal(seen.length, 2);
  assert.deepEqual(
    seen.map((s) => s.cn),
    ['kubeward-operator', 'kubeward-operator'],
    'the server saw the client certificate both times',
  );
  assert.equal(seen[0]!.resumed, false);
  assert.equal(seen[1]!.resumed, true, "the second cycle resumed the first one's session");
  const bytes = pool.keptTlsSessionBytes();
  assert.ok(bytes.length > 0);
  assert.equal(bytes.held, bytes.length, 'each kept session is a Buffer of its own, not a slice that keeps a pool slab alive');
});

test("a pooled call's options leave the material to the shared context and keep the rest; the agent names them without a copy", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-tls-opts-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const ca = await createTestCa('kw-opts-ca', dir);
  const o = {
    ca: ca.cert,
    cert: 'c',
    key: 'k',
    passphrase: 'p',
    method: 'GET',
    headers: { authorization: 'Bearer t' },
    servername: 'api',
    rejectUnauthorized: true,
  };
  const shared = pool.pooledTls({ ca: o.ca, servername: 'api' });
  const out = pooledRequestOptions(o as RequestOptions, shared) as RequestOptions & Record<string, unknown>;
  for (const k of ['ca', 'cert', 'key', 'pfx', 'passphrase']) assert.equal(k in out, false, k);
  assert.equal(out.headers, o.headers);
  assert.equal(out.servername, 'api');
  assert.equal(out.rejectUnauthorized, true);
  assert.equal(out.agent, shared.agent);
  assert.equal(out.secureContext, shared.secureContext);
  // The same name with or without the material: sockets of both kinds share the origin's lists.
  const name = (x: object) => shared.agent.getName({ host: '127.0.0.1', port: 6443, ...x });
  assert.equal(name({ servername: 'api', rejectUnauthorized: true }), name({ servername: 'api', rejectUnauthorized: true, ca: o.ca, cert: 'c', key: 'k' }));
});
