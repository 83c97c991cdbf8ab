// The owner metadata each provisioner writes on the servers it creates for a cluster, and the
// parsing of the key=value claims a person adds (pure). Looked up in the provisioners' sources:
// - Kubernikus (sapcc/kubernikus, pkg/client/openstack/kluster/client.go, nodeMetadata): metadata
//   `provisioner=kubernikus`, `kubernikus:kluster=<kluster name>`, `kubernikus:nodepool=<pool>`, and the
//   same as tags. Keyed by the cluster's name only, so it proves nothing while a namesake exists.
// - OpenShift (openshift/installer, pkg/asset/machines/openstack/machines.go): server metadata
//   `openshiftClusterID=<infraID>` (and `Name=<infraID>-<role>`), tag `openshiftClusterID=<infraID>`.
//   The infraID is the cluster name plus a random part, so it is specific; kubeward does not know it
//   until it is given (`openshiftClusterID=<infraID>` as owner metadata).
// - CAPO (kubernetes-sigs/cluster-api-provider-openstack, pkg/cloud/services/compute/instance.go):
//   the server gets only the OpenStackMachine's own `serverMetadata` and `tags`; nothing names the
//   cluster unless the template adds it. Its Nodes carry `openstack:///<uuid>` providerIDs, which
//   prove their servers; a key the template adds can be given as owner metadata.
import type { ProvisionerClaim } from './cluster-identity.ts';

export const OWNER_METADATA_ANNOTATION = 'kubeward.io/owner-metadata';
export const ADOPT_OWNER_ANNOTATION = 'kubeward.io/adopt-owner';

/** Kubernikus's claim on the servers of cluster `name`. */
export const kubernikusClaim = (name: string): ProvisionerClaim => ({
  provisioner: 'kubernikus',
  metadata: { provisioner: 'kubernikus', 'kubernikus:kluster': name },
  byName: true,
});

/** The metadata keys one can give; kubeward's own keys are not a provisioner's claim. */
const KEY = /^[A-Za-z0-9_.:-]{1,255}$/;

/**
 * `key=value` items (comma-separated in an annotation, one per flag) as one claim that needs all of
 * them; a value equal to the cluster's name is name-keyed.
 */
export function parseOwnerMetadata(items: readonly string[], clusterName: string): { claim?: ProvisionerClaim; problem?: string } {
  // A Map, not an object: a key such as "__proto__" must stay a key.
  const pairs = new Map<string, string>();
  for (const raw of items
    .flatMap((i) => i.split(','))
    .map((i) => i.trim())
    .filter((i) => i !== '')) {
    const eq = raw.indexOf('=');
    const key = eq > 0 ? raw.slice(0, eq) : '';
    const value = eq > 0 ? raw.slice(eq + 1) : '';
    if (!KEY.test(key) || value === '' || value.length > 255)
      return { problem: `"${raw}" is not key=value (key of letters, digits, "_.:-", a non-empty value), e.g. openshiftClusterID=k1-x7q2p` };
    if (key.startsWith('kubeward:')) return { problem: `"${key}" is kubeward's own key: give the key the provisioner writes` };
    pairs.set(key, value);
  }
  if (pairs.size === 0) return {};
  const metadata = Object.fromEntries(pairs);
  return { claim: { provisioner: 'owner metadata', metadata, byName: Object.values(metadata).every((v) => v === clusterName) } };
}

/** Owner ids named in an adoption (annotation value or flags), comma-separated. */
export function parseAdoptOwners(items: readonly string[]): string[] {
  return [
    ...new Set(
      items
        .flatMap((i) => i.split(','))
        .map((i) => i.trim())
        .filter((i) => i !== ''),
    ),
  ];
}
