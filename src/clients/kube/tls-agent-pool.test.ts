import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import fc from 'fast-check';
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
