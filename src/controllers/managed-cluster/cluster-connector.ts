// deorbit's ports for one ManagedCluster, from the Secrets its spec names: the cluster's own API
// (kubeconfig) and its OpenStack project (clouds.yaml). Built on the Secret reader routegc and flight
// share, cached per cluster until a Secret changes, so a deorbit polling every 15 s keeps its token.
import type { CallFence } from '../../base/call-fence.ts';
import type { Clock } from '../../base/clock.ts';
import type { Logger } from '../../base/logger.ts';
import type { Secret } from '../../clients/kube/kube-types.ts';
import type { ResourceClient } from '../../clients/kube/resource-client.ts';
import { resolveCloudConfig } from '../../clients/openstack/cloud-config.ts';
import { createOpenStackClient, type OpenStackShared } from '../../clients/openstack/create-openstack-client.ts';
import { openStackDeorbitCloud, type DeorbitCloud } from '../deorbit/deorbit-cloud.ts';
import type { DeorbitPorts } from '../deorbit/deorbit-pass.ts';
import { kubeDeorbitSatellite } from '../deorbit/deorbit-satellite.ts';
import { secretClusterSource } from './cluster-clients.ts';
import type { ManagedCluster } from './managed-cluster.ts';
import type { SecretVersionSource } from './secret-versions.ts';

export interface ClusterConnector {
  /** Throws a KubewardError with code E_CONFIG or E_NOT_FOUND when a Secret is missing or unusable. */
  connect(mc: ManagedCluster): Promise<DeorbitPorts>;
  forget(uid: string): void;
}

/** Makes the cloud port from a clouds.yaml document; tests give a fake. */
export type CloudFactory = (clouds: Record<string, unknown>, cloudName: string, source: string) => DeorbitCloud;

/** `shared`: what every cluster's OpenStack client shares (the operator makes one); default: each its own. */
export function openStackCloudFactory(log: Logger, clock: Clock, shared?: OpenStackShared, fence?: CallFence): CloudFactory {
  return (doc, cloudName, source) => {
    const config = resolveCloudConfig({ cloudName, env: {}, clouds: { path: source, doc } });
    return openStackDeorbitCloud(createOpenStackClient({ config, log, clock, shared, fence }));
  };
}

const NO_CLOUD: DeorbitCloud = {
  listVolumes: async () => [],
  listLoadBalancers: async () => undefined,
  listFloatingIps: async () => [],
  getVolume: async () => undefined,
  getLoadBalancer: async () => undefined,
  deleteVolume: async () => 'absent' as const,
  deleteLoadBalancer: async () => 'absent' as const,
};

export function secretConnector(opts: {
  secrets: ResourceClient<Secret>;
  cloudFactory: CloudFactory;
  kubeTimeoutMs?: number;
  versions?: SecretVersionSource;
  /** Checked just before every changing request of the cluster's API client: deorbit's deletions (the operator's lease). */
  fence?: CallFence;
}): ClusterConnector {
  // The same Secret reader and cache as routegc and flight; only what is built from them differs.
  const source = secretClusterSource<DeorbitPorts>({
    secrets: opts.secrets,
    kubeTimeoutMs: opts.kubeTimeoutMs,
    versions: opts.versions,
    fence: opts.fence,
    build: ({ kube, clouds }) => ({
      satellite: kubeDeorbitSatellite(kube),
      cloud: clouds ? opts.cloudFactory(clouds.doc, clouds.cloudName, clouds.source) : NO_CLOUD,
    }),
  });
  return { connect: (mc) => source.get(mc), forget: (uid) => source.forget(uid) };
}
