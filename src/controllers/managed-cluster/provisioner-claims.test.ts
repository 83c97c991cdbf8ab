// The owner metadata a person gives (annotation or flag) and the owner ids an adoption names: a
// property over arbitrary text, and the claims the provisioners write.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { kubernikusClaim, parseAdoptOwners, parseOwnerMetadata } from './provisioner-claims.ts';

test('owner metadata from any text: never throws; a claim has only valid, non-kubeward keys and non-empty values; valid pairs read back as given', () => {
  const key = fc.stringMatching(/^[A-Za-z0-9_.:-]{1,20}$/).filter((k) => !k.startsWith('kubeward:'));
  const value = fc.stringMatching(/^[A-Za-z0-9_.:-]{1,20}$/);
  fc.assert(
    fc.property(fc.array(fc.string({ maxLength: 40 }), { maxLength: 4 }), fc.constantFrom('k1', 'k2'), (items, cluster) => {
      const r = parseOwnerMetadata(items, cluster);
      assert.ok(!(r.claim && r.problem));
      for (const [k, v] of Object.entries(r.claim?.metadata ?? {})) {
        assert.match(k, /^[A-Za-z0-9_.:-]{1,255}$/);
        assert.ok(!k.startsWith('kubeward:'), k);
        assert.ok(v !== '' && !v.includes(','), v);
      }
    }),
    { numRuns: 500 },
  );
  fc.assert(
    fc.property(fc.dictionary(key, value, { minKeys: 1, maxKeys: 4 }), (md) => {
      const r = parseOwnerMetadata(
        [
          Object.entries(md)
            .map(([k, v]) => `${k}=${v}`)
            .join(','),
        ],
        'k1',
      );
      assert.deepEqual(r.claim?.metadata, Object.fromEntries(Object.entries(md)));
      assert.equal(
        r.claim?.byName,
        Object.values(md).every((v) => v === 'k1'),
      );
    }),
    { numRuns: 300 },
  );
});

test("Kubernikus's claim is its provisioner key and the kluster name, by name; adoption ids are trimmed and unique", () => {
  assert.deepEqual(kubernikusClaim('k1'), { provisioner: 'kubernikus', metadata: { provisioner: 'kubernikus', 'kubernikus:kluster': 'k1' }, byName: true });
  assert.deepEqual(parseAdoptOwners([' a, b ,a', '', 'c']), ['a', 'b', 'c']);
});
