import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  annotatedLoadBalancerIds,
  floatingIpsOf,
  isClusterNameDistinct,
  isLegacyVersion,
  loadBalancerName,
  matchLoadBalancers,
  servicesToDelete,
} from './load-balancer-rules.ts';
import { lb, svc } from './deorbit-fixtures.test-helpers.ts';

test('only LoadBalancer Services not already being deleted are deleted', () => {
  const out = servicesToDelete([svc('a'), svc('b', 'ClusterIP'), svc('c', 'LoadBalancer', { deleting: true })]);
  assert.deepEqual(
    out.map((s) => s.metadata.name),
    ['a'],
  );
});

test("the cluster's load balancers: exact names of Services seen, annotated IDs and legacy UID names; never a prefix", () => {
  const seen = [
    { namespace: 'apps', name: 'web', uid: '1234abcd-0000-4000-8000-00000000cafe' },
    { namespace: 'apps', name: 'api' },
  ];
  const lbs = [
    lb('1', 'kube_service_k1_apps_web'),
    lb('2', 'kube_service_k1_x_apps_web'), // cluster k1_x: the old prefix rule matched it
    lb('3', 'custom-name'),
    lb('4', 'kube_service_k1_apps_gone', 'DELETED'),
    lb('5', 'kube_service_k1_apps_other'), // a Service never seen
    lb('6', 'a1234abcd00004000800000000000caf'), // legacy name of apps/web (a + UID without dashes, 32 chars)
    lb('7', 'kube_service_k10_apps_web'),
  ];
  assert.deepEqual(
    matchLoadBalancers(lbs, 'k1', seen, ['3']).ours.map((l) => l.id),
    ['1', '3', '6'],
  );
  assert.deepEqual(annotatedLoadBalancerIds([svc('a', 'LoadBalancer', { lbId: '3' }), svc('b')]), ['3']);
});

test('with the shared default cluster name "kubernetes" names prove nothing; annotated IDs and UID names still do', () => {
  const seen = [{ namespace: 'default', name: 'nginx', uid: 'u-1' }];
  const lbs = [lb('1', 'kube_service_kubernetes_default_nginx'), lb('2', 'other'), lb('3', 'au1')];
  assert.deepEqual(
    matchLoadBalancers(lbs, 'kubernetes', seen, ['2']).ours.map((l) => l.id),
    ['2', '3'],
  );
  assert.equal(isClusterNameDistinct('kubernetes'), false);
  assert.equal(loadBalancerName('k1', { namespace: 'n', name: 'x'.repeat(300) }).length, 255, 'cut at 255 as OCCM does');
});

test('a name two load balancers carry is reported and left alone', () => {
  const m = matchLoadBalancers([lb('1', 'kube_service_k1_apps_web'), lb('2', 'kube_service_k1_apps_web')], 'k1', [{ namespace: 'apps', name: 'web' }], []);
  assert.deepEqual(m.ours, []);
  assert.deepEqual(m.ambiguous, ['kube_service_k1_apps_web']);
});

test('floating IPs on the VIP ports of remaining load balancers are reported', () => {
  const fips = [
    { id: 'f1', portId: 'p1' },
    { id: 'f2', portId: 'p9' },
    { id: 'f3', portId: null },
  ];
  assert.deepEqual(floatingIpsOf([lb('1', 'x', 'ERROR', 'p1')], fips), ['f1']);
});

test('versions before 1.17 are legacy; unknown or unparsable versions are not', () => {
  const cases: [string | undefined, boolean][] = [
    ['1.16.15', true],
    ['v1.16.0', true],
    ['1.17.0', false],
    ['1.30.2', false],
    ['2.0', false],
    [undefined, false],
    ['garbage', false],
  ];
  for (const [v, want] of cases) assert.equal(isLegacyVersion(v), want, String(v));
});
