import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isOlder, parseKubeVersion, parseVersionBody } from './version-skew.ts';

test('kubelet and apiserver version strings', () => {
  assert.deepEqual(parseKubeVersion('v1.31.2'), { major: 1, minor: 31 });
  assert.deepEqual(parseKubeVersion('1.20'), { major: 1, minor: 20 });
  assert.deepEqual(parseKubeVersion('v1.20.2-k3s1'), { major: 1, minor: 20 });
  assert.deepEqual(parseKubeVersion('v1.29.0+rke2r1'), { major: 1, minor: 29 });
  for (const bad of ['', 'v1', 'Kubernetes v1.31.0', '1.x', 'v1.31.2; rm -rf /', '1.31.2.3', 'v1.31.2 extra']) {
    assert.equal(parseKubeVersion(bad), undefined, JSON.stringify(bad));
  }
});

test("an apiserver's /version body, with the + some distributions add", () => {
  assert.deepEqual(parseVersionBody('{"major":"1","minor":"20","gitVersion":"v1.20.2"}'), { major: 1, minor: 20 });
  assert.deepEqual(parseVersionBody('{"major":"1","minor":"31+","gitVersion":"weird"}'), { major: 1, minor: 31 });
  for (const bad of ['', 'null', '[]', '{"etcdserver":"3.4.23","etcdcluster":"3.4.0"}', '<html>', '{"major":1,"minor":2}'])
    assert.equal(parseVersionBody(bad), undefined, bad);
});

test('isOlder orders by major then minor, and never calls an unknown version older', () => {
  fc.assert(
    fc.property(fc.nat(3), fc.nat(40), fc.nat(3), fc.nat(40), (a, b, c, d) => {
      const v = { major: a, minor: b };
      const min = { major: c, minor: d };
      assert.equal(isOlder(v, min), a * 1000 + b < c * 1000 + d);
      assert.equal(isOlder(undefined, min), false);
      assert.equal(isOlder(v, undefined), false);
    }),
  );
});

test('any string either parses to whole numbers or is refused', () => {
  fc.assert(
    fc.property(fc.string({ maxLength: 40 }), (s) => {
      const v = parseKubeVersion(s);
      if (v) assert.ok(Number.isInteger(v.major) && Number.isInteger(v.minor) && /^v?\d/.test(s.trim()));
    }),
  );
});
