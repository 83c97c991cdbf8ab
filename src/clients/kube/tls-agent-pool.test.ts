import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import fc from 'fast-check';
import { sharesTls } from './kube-client.ts';
import { loadKubeConfig } from './load-kube-config.ts';
import { pooledTls, pooledTlsCount, tlsIdentityKey } from './tls-agent-pool.ts';

test('clients with the same TLS identity share one keep-alive agent and context; another identity gets its own', () => {
  const before = pooledTlsCount();
  const a = pooledTls({ rejectUnauthorized: true, servername: 'api.one.example' });
  const b = pooledTls({ rejectUnauthorized: true, servername: 'api.one.example' });
  const c = pooledTls({ rejectUnauthorized: true, servername: 'api.two.example' });
  assert.equal(a, b);
  assert.notEqual(a.agent, c.agent);
  assert.notEqual(a.secureContext, c.secureContext);
  assert.equal(pooledTlsCount(), before + 2);
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

test("an identity unused for 10 s with no socket is dropped (its context's memory), and the next call builds it again", () => {
  const t0 = Date.now() + 86_400_000; // after every entry the other tests made
  const a = pooledTls({ servername: 'api.idle.example' }, t0);
  assert.equal(pooledTls({ servername: 'api.idle.example' }, t0 + 9_000), a, 'still in use within 10 s');
  const b = pooledTls({ servername: 'api.other.example' }, t0 + 9_000 + 10_000);
  const again = pooledTls({ servername: 'api.idle.example' }, t0 + 9_000 + 10_000);
  assert.notEqual(again, a);
  assert.notEqual(again.secureContext, a.secureContext);
  assert.equal(pooledTls({ servername: 'api.other.example' }, t0 + 9_000 + 10_001), b, 'a recent one is kept');
});
