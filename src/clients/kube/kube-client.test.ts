import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeClient } from './kube-client.ts';
import { KubeApiError } from './kube-api-error.ts';
import { loadKubeConfig } from './load-kube-config.ts';
import { ResourceClient } from './resource-client.ts';
import { KINDS } from './resource-kinds.ts';
import type { Service } from './kube-types.ts';

async function serve(t: import('node:test').TestContext, handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<KubeClient> {
  const srv = createServer(handler);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.after(
    () =>
      new Promise<void>((r) => {
        srv.closeAllConnections();
        srv.close(() => r());
      }),
  );
  const port = (srv.address() as AddressInfo).port;
  const text = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:${port}", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: secret-token}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`;
  return new KubeClient(loadKubeConfig({ kind: 'text', text, what: 'test' }), { timeoutMs: 300 });
}

test('requests carry the kubeconfig token and query, and JSON comes back', async (t) => {
  let seen: { auth?: string; url?: string } = {};
  const kube = await serve(t, (req, res) => {
    seen = { auth: req.headers.authorization, url: req.url };
    res.end(JSON.stringify({ kind: 'PodList', items: [] }));
  });
  const out = await kube.request<{ kind: string }>('GET', '/api/v1/pods', { query: { limit: 5, continue: undefined } });
  assert.equal(out.kind, 'PodList');
  assert.equal(seen.auth, 'Bearer secret-token');
  assert.equal(seen.url, '/api/v1/pods?limit=5');
});

test('a hung server fails the call after the deadline as an unavailable API', async (t) => {
  const kube = await serve(t, () => {});
  const err = await kube.request('GET', '/api/v1/pods').catch((e: unknown) => e);
  assert.ok(err instanceof KubeApiError);
  assert.equal(err.status, undefined);
  assert.equal(err.kind, 'unavailable');
  assert.match(err.message, /no response within 300 ms/);
});

test('a watch delivers events line by line and an ERROR event rejects with its status', async (t) => {
  const kube = await serve(t, (req, res) => {
    res.write(JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a', resourceVersion: '5' } } }) + '\n');
    res.write(JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' } }) + '\n');
  });
  const names: string[] = [];
  const err = await kube
    .watch<{ metadata: { name: string } }>('/api/v1/pods', { resourceVersion: '1' }, (ev) => names.push(ev.object.metadata.name), { idleMs: 2000 })
    .catch((e: unknown) => e);
  assert.deepEqual(names, ['a']);
  assert.ok(err instanceof KubeApiError);
  assert.equal(err.status, 410);
});

test('a list answered 200 without an items array is an error, never an empty collection', async (t) => {
  const bodies = ['{}', '{"kind":"ServiceList","itemz":[]}', '{"items":null}'];
  let i = 0;
  const kube = await serve(t, (_req, res) => void res.end(bodies[i++ % bodies.length]));
  const services = new ResourceClient<Service>(kube, KINDS.service);
  for (const body of bodies) {
    const err = await services.list('apps').catch((e: unknown) => e);
    assert.ok(err instanceof KubeApiError, body);
    assert.equal(err.reason, 'UnexpectedBody', body);
  }
  i = 0;
  const ok = await serve(t, (_req, res) => void res.end('{"items":[]}'));
  assert.deepEqual((await new ResourceClient<Service>(ok, KINDS.service).list('apps')).items, [], 'a real empty list is empty');
});

test('a body in many chunks is read whole, and a response cut off before its end is an error, never a short body', async (t) => {
  const items = Array.from({ length: 3000 }, (_, i) => ({ metadata: { name: `node-${i}` } }));
  const whole = await serve(t, (req, res) => {
    if (req.url?.startsWith('/cut')) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"kind":"NodeList","items":[');
      setImmediate(() => res.socket?.destroy());
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    const text = JSON.stringify({ kind: 'NodeList', items });
    // Several writes: the client gets the body in more than one chunk.
    for (let i = 0; i < text.length; i += 16_384) res.write(text.slice(i, i + 16_384));
    res.end();
  });
  const list = await whole.request<{ items: unknown[] }>('GET', '/api/v1/nodes');
  assert.equal(list.items.length, 3000);
  await assert.rejects(whole.request('GET', '/cut'), (err: unknown) => err instanceof KubeApiError && /response cut off/.test(err.message));
});
