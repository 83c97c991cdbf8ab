import { test } from 'node:test';
import assert from 'node:assert/strict';
import { annotatedLoadBalancerIds, clusterLoadBalancers, floatingIpsOf, isLegacyVersion, servicesToDelete } from './load-balancer-rules.ts';
import { lb, svc } from './deorbit-fixtures.test-helpers.ts';

test('only LoadBalancer Services not already being deleted are deleted', () => {
  const out = servicesToDelete([svc('a'), svc('b', 'ClusterIP'), svc('c', 'LoadBalancer', { deleting: true })]);
  assert.deepEqual(out.map((s) => s.metadata.name), ['a']);
});

test("the cluster's load balancers are those OCCM named for it or whose ID a Service annotated", () => {
  const lbs = [
    lb('1', 'kube_service_k1_apps_web'),
    lb('2', 'kube_service_k10_apps_web'),
    lb('3', 'custom-name'),
    lb('4', 'kube_service_k1_apps_gone', 'DELETED'),
    lb('5', 'other'),
  ];
  assert.deepEqual(clusterLoadBalancers(lbs, 'k1', ['3']).map((l) => l.id), ['1', '3']);
  assert.deepEqual(annotatedLoadBalancerIds([svc('a', 'LoadBalancer', { lbId: '3' }), svc('b')]), ['3']);
});

test('floating IPs on the VIP ports of remaining load balancers are reported', () => {
  const fips = [{ id: 'f1', portId: 'p1' }, { id: 'f2', portId: 'p9' }, { id: 'f3', portId: null }];
  assert.deepEqual(floatingIpsOf([lb('1', 'x', 'ERROR', 'p1')], fips), ['f1']);
});

test('versions before 1.17 are legacy; unknown or unparsable versions are not', () => {
  const cases: [string | undefined, boolean][] = [['1.16.15', true], ['v1.16.0', true], ['1.17.0', false], ['1.30.2', false], ['2.0', false], [undefined, false], ['garbage', false]];
  for (const [v, want] of cases) assert.equal(isLegacyVersion(v), want, String(v));
});
