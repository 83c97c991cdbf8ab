// The clients routegc and flight need for one ManagedCluster, from the Secrets its spec names (the
// cluster's kubeconfig and its clouds.yaml), cached per cluster until a Secret changes. A narrow
// twin of managed-cluster's connector, which hands out deorbit's ports only.
import { parse } from 'yaml';
import type { Clock } from '../../base/clock.ts';
import { KubewardError, describeError } from '../../base/errors.ts';
import type { Logger } from '../../base/logger.ts';
import { createKubeApi, type KubeApi } from '../../clients/kube/kube-api.ts';
import { isNotFound } from '../../clients/kube/kube-api-error.ts';
import type { KubeObject, Secret } from '../../clients/kube/kube-types.ts';
import { loadKubeConfig } from '../../clients/kube/load-kube-config.ts';
import type { ResourceClient } from '../../clients/kube/resource-client.ts';
import { resolveCloudConfig } from '../../clients/openstack/cloud-config.ts';
import { createOpenStackClient } from '../../clients/openstack/create-openstack-client.ts';
import type { OpenStackClient } from '../../clients/openstack/openstack-client.ts';

/** The parts of a ManagedCluster these controllers read (structurally the CR's shape). */
export interface ManagedClusterView extends KubeObject {
  spec: {
    kubeconfigSecretRef: { name: string; key?: string };
    cloudCredentialsSecretRef: { name: string; key?: string; cloud: string };
    clusterCIDR?: string;
    openstack?: { routerID?: string; securityGroupName?: string };
    nodePools?: { name: string }[];
    noCloud?: boolean;
  };
  status?: { phase?: string };
}

export interface ClusterClients {
  kube: KubeApi;
  openstack: OpenStackClient;
}

export type ClusterClientSource = (mc: ManagedClusterView) => Promise<ClusterClients>;

export function secretClusterClients(opts: { secrets: ResourceClient<Secret>; log: Logger; clock: Clock; kubeTimeoutMs?: number }): ClusterClientSource {
  const cache = new Map<string, { fingerprint: string; clients: ClusterClients }>();
  const read = async (ns: string, name: string, key: string): Promise<{ text: string; rv: string }> => {
    const secret = await opts.secrets.get(ns, name).catch((err: unknown) => {
      throw isNotFound(err) ? new KubewardError('E_NOT_FOUND', `Secret ${ns}/${name} does not exist`) : err;
    });
    const b64 = secret.data?.[key];
    if (b64 === undefined) throw new KubewardError('E_CONFIG', `Secret ${ns}/${name} has no key "${key}"`);
    return { text: Buffer.from(b64, 'base64').toString('utf8'), rv: secret.metadata.resourceVersion ?? '' };
  };
  return async (mc) => {
    const ns = mc.metadata.namespace ?? 'default';
    const kref = mc.spec.kubeconfigSecretRef;
    const cref = mc.spec.cloudCredentialsSecretRef;
    const kube = await read(ns, kref.name, kref.key ?? 'kubeconfig');
    const clouds = await read(ns, cref.name, cref.key ?? 'clouds.yaml');
    const fingerprint = `${kube.rv}/${clouds.rv}/${cref.cloud}`;
    const uid = mc.metadata.uid ?? `${ns}/${mc.metadata.name}`;
    const hit = cache.get(uid);
    if (hit?.fingerprint === fingerprint) return hit.clients;
    const source = `Secret ${ns}/${cref.name} key ${cref.key ?? 'clouds.yaml'}`;
    let doc: unknown;
    try {
      doc = parse(clouds.text);
    } catch (err) {
      throw new KubewardError('E_CONFIG', `${source}: not YAML (${describeError(err)})`, { cause: err });
    }
    if (!doc || typeof doc !== 'object') throw new KubewardError('E_CONFIG', `${source}: expected a clouds.yaml mapping`);
    const config = resolveCloudConfig({ cloudName: cref.cloud, env: {}, clouds: { path: source, doc: doc as Record<string, unknown> } });
    const clients = {
      kube: createKubeApi(loadKubeConfig({ kind: 'text', text: kube.text, what: `Secret ${ns}/${kref.name}` }), { timeoutMs: opts.kubeTimeoutMs }),
      openstack: createOpenStackClient({ config, log: opts.log, clock: opts.clock }),
    };
    cache.set(uid, { fingerprint, clients });
    return clients;
  };
}
