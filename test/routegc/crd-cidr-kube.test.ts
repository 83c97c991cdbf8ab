// Harm 5 at the door: the ManagedCluster CRD (deploy/operator) makes a real kube-apiserver refuse a
// clusterCIDR that is no CIDR, is /0, or is wider than /8 (IPv6 /32), so a tenant cannot widen the
// scope routegc removes routes in and flight opens rules for. Harm 2 at the door: it refuses the pool
// names flight's name proof rejects ("-" in them lets kks-<cluster>-<pool>- prefixes collide).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { KINDS } from '../../src/clients/kube/resource-kinds.ts';
import type { ManagedCluster } from '../../src/controllers/managed-cluster/managed-cluster.ts';
import { clusterCidrProblem } from '../../src/controllers/managed-cluster/cidr-scope.ts';
import { poolNameProblem } from '../../src/controllers/managed-cluster/cluster-identity.ts';
import { kubeApiserverMissing } from '../../testkit/kube/kube-test-server.ts';
import { useKubeCluster } from '../../testkit/kube/kube-cluster.ts';

const NS = 'crd-cidr';

describe('the ManagedCluster CRD validates clusterCIDR and pool names', { skip: kubeApiserverMissing() }, () => {
  const mgmt = useKubeCluster({ namespace: NS });

  test('harm 5: the apiserver accepts exactly the CIDRs kubeward accepts without force', async () => {
    const clusters = mgmt.api.resource<ManagedCluster>(KINDS.managedCluster);
    const cases = [
      '100.100.0.0/16',
      '10.0.0.0/8',
      '10.1.2.0/32',
      'fd00:100::/48',
      'fd00::/32',
      '0.0.0.0/0',
      '::/0',
      '10.0.0.0/7',
      'fd00::/31',
      '300.1.2.0/24',
      '10.0.0.0/33',
      '10.0.0.0',
      'x',
    ];
    for (const [i, cidr] of cases.entries()) {
      const create = clusters.create({
        metadata: { name: `c${i}`, namespace: NS },
        spec: { kubeconfigSecretRef: { name: 's' }, cloudCredentialsSecretRef: { name: 's', cloud: 'x' }, clusterCIDR: cidr },
      });
      if (clusterCidrProblem(cidr) === undefined) await create;
      else await assert.rejects(create, (err: Error) => /422|Invalid|should match|spec\.clusterCIDR/i.test(`${err.message} ${JSON.stringify(err)}`), cidr);
    }
  });

  test('harm 2: the apiserver accepts exactly the pool names flight can prove instances by', async () => {
    const clusters = mgmt.api.resource<ManagedCluster>(KINDS.managedCluster);
    const fixed = ['small', 'gpu2', '0', 'small-x', 'k1-small', '-', 'Small', 'small_x', 'small.x', ' small', ''];
    // Random names over the characters that matter (letters of both cases, digits, "-", "_", "."), seeded: the same run each time.
    const chars = fc.constantFrom(...'abz09AZ-_.'.split(''));
    const random = fc.sample(
      fc.array(chars, { minLength: 1, maxLength: 8 }).map((cs) => cs.join('')),
      { numRuns: 40, seed: 11 },
    );
    const accepted: string[] = [];
    for (const [i, pool] of [...new Set([...fixed, ...random])].entries()) {
      const create = clusters.create({
        metadata: { name: `p${i}`, namespace: NS },
        spec: { kubeconfigSecretRef: { name: 's' }, cloudCredentialsSecretRef: { name: 's', cloud: 'x' }, nodePools: [{ name: pool }] },
      });
      if (poolNameProblem(pool) === undefined) {
        await create;
        accepted.push(pool);
      } else {
        await assert.rejects(create, (err: Error) => /422|Invalid|should match|nodePools/i.test(`${err.message} ${JSON.stringify(err)}`), JSON.stringify(pool));
      }
    }
    assert.ok(accepted.includes('small') && accepted.length >= 3, `some names were accepted: ${accepted.join(', ')}`);
  });
});
