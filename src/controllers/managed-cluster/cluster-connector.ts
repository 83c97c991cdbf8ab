// Clients for one ManagedCluster, from the Secrets its spec names: the cluster's own API (kubeconfig)
// and its OpenStack project (clouds.yaml). Cached per cluster until a Secret changes, so a deorbit
// that polls every 15 s keeps its Keystone token instead of authenticating each time.
import { parse } from 'yaml';
import { KubewardError, describeError } from '../../base/errors.ts';
import type { Clock } from '../../base/clock.ts';
import type { Logger } from '../../base/logger.ts';
import { createKubeApi } from '../../clients/kube/kube-api.ts';
import { isNotFound } from '../../clients/kube/kube-api-error.ts';
import type { Secret } from '../../clients/kube/kube-types.ts';
import { loadKubeConfig } from '../../clients/kube/load-kube-config.ts';
import type { ResourceClient } from '../../clients/kube/resource-client.ts';
import { resolveCloudConfig } from '../../clients/openstack/cloud-config.ts';
import { createOpenStackClient } from '../../clients/openstack/create-openstack-client.ts';
import { openStackDeorbitCloud, type DeorbitCloud } from '../deorbit/deorbit-cloud.ts';
import type { DeorbitPorts } from '../deorbit/deorbit-pass.ts';
import { kubeDeorbitSatellite } from '../deorbit/deorbit-satellite.ts';
import type { ManagedCluster } from './managed-cluster.ts';

export interface ClusterConnector {
  /** Throws a KubewardError with code E_CONFIG or E_NOT_FOUND when a Secret is missing or unusable. */
  connect(mc: ManagedCluster): Promise<DeorbitPorts>;
  forget(uid: string): void;
}

/** Makes the cloud port from a clouds.yaml document; tests give a fake. */
export type CloudFactory = (clouds: Record<string, unknown>, cloudName: string, source: string) => DeorbitCloud;

export function openStackCloudFactory(log: Logger, clock: Clock): CloudFactory {
  return (doc, cloudName, source) => {
    const config = resolveCloudConfig({ cloudName, env: {}, clouds: { path: source, doc } });
    return openStackDeorbitCloud(createOpenStackClient({ config, log, clock }));
  };
}

const NO_CLOUD: DeorbitCloud = { listVolumes: async () => [], listLoadBalancers: async () => undefined, listFloatingIps: async () => [] };

export function secretConnector(opts: { secrets: ResourceClient<Secret>; cloudFactory: CloudFactory; kubeTimeoutMs?: number }): ClusterConnector {
  const cache = new Map<string, { fingerprint: string; ports: DeorbitPorts }>();
  const read = async (namespace: string, name: string, key: string): Promise<{ text: string; rv: string }> => {
    let secret: Secret;
    try {
      secret = await opts.secrets.get(namespace, name);
    } catch (err) {
      if (isNotFound(err)) throw new KubewardError('E_NOT_FOUND', `Secret ${namespace}/${name} does not exist`);
      throw err;
    }
    const b64 = secret.data?.[key];
    if (b64 === undefined) throw new KubewardError('E_CONFIG', `Secret ${namespace}/${name} has no key "${key}"`);
    return { text: Buffer.from(b64, 'base64').toString('utf8'), rv: secret.metadata.resourceVersion ?? '' };
  };
  return {
    async connect(mc) {
      const ns = mc.metadata.namespace ?? 'default';
      const kref = mc.spec.kubeconfigSecretRef;
      const cref = mc.spec.cloudCredentialsSecretRef;
      const kube = await read(ns, kref.name, kref.key ?? 'kubeconfig');
      const clouds = mc.spec.noCloud ? undefined : await read(ns, cref.name, cref.key ?? 'clouds.yaml');
      const fingerprint = `${kube.rv}/${clouds?.rv ?? '-'}/${cref.cloud}`;
      const uid = mc.metadata.uid ?? `${ns}/${mc.metadata.name}`;
      const hit = cache.get(uid);
      if (hit && hit.fingerprint === fingerprint) return hit.ports;
      const what = `Secret ${ns}/${kref.name}`;
      const satellite = kubeDeorbitSatellite(createKubeApi(loadKubeConfig({ kind: 'text', text: kube.text, what }), { timeoutMs: opts.kubeTimeoutMs }));
      let cloud = NO_CLOUD;
      if (clouds) {
        const source = `Secret ${ns}/${cref.name} key ${cref.key ?? 'clouds.yaml'}`;
        let doc: unknown;
        try {
          doc = parse(clouds.text);
        } catch (err) {
          throw new KubewardError('E_CONFIG', `${source}: not YAML (${describeError(err)})`, { cause: err });
        }
        if (!doc || typeof doc !== 'object') throw new KubewardError('E_CONFIG', `${source}: expected a clouds.yaml mapping`);
        cloud = opts.cloudFactory(doc as Record<string, unknown>, cref.cloud, source);
      }
      const ports = { satellite, cloud };
      cache.set(uid, { fingerprint, ports });
      return ports;
    },
    forget: (uid) => void cache.delete(uid),
  };
}
