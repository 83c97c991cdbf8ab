// Clients for one ManagedCluster, from the Secrets its spec names (the cluster's kubeconfig and its
// clouds.yaml), cached per cluster until a Secret changes. One reader serves every controller:
// deorbit builds its ports on it (cluster-connector.ts), routegc and flight the clients.
import { CORE_SCHEMA, load } from 'js-yaml';
import type { CallFence } from '../../base/call-fence.ts';
import type { Clock } from '../../base/clock.ts';
import { KubewardError, describeError } from '../../base/errors.ts';
import type { Logger } from '../../base/logger.ts';
import { createKubeApi, type KubeApi } from '../../clients/kube/kube-api.ts';
import { isNotFound } from '../../clients/kube/kube-api-error.ts';
import type { Secret } from '../../clients/kube/kube-types.ts';
import { loadKubeConfig } from '../../clients/kube/load-kube-config.ts';
import type { ResourceClient } from '../../clients/kube/resource-client.ts';
import { TlsAgentPool } from '../../clients/kube/tls-agent-pool.ts';
import { resolveCloudConfig } from '../../clients/openstack/cloud-config.ts';
import { createOpenStackClient, type OpenStackShared } from '../../clients/openstack/create-openstack-client.ts';
import type { OpenStackClient } from '../../clients/openstack/openstack-client.ts';
import type { ManagedCluster } from './managed-cluster.ts';
import type { SecretVersionSource } from './secret-versions.ts';

/** What the Secrets hold, parsed: the cluster's API, and its clouds.yaml unless the cluster has no cloud. */
export interface ClusterSecrets {
  kube: KubeApi;
  clouds?: { doc: Record<string, unknown>; cloudName: string; source: string };
}

export interface ClusterSource<T> {
  /** Throws a KubewardError with code E_CONFIG or E_NOT_FOUND when a Secret is missing or unusable. */
  get(mc: ManagedCluster): Promise<T>;
  forget(uid: string): void;
}

/**
 * Builds T only when one of the two Secrets changed, so a controller polling every 15 s keeps its
 * Keystone token and its Kubernetes client. With `versions` (the operator's metadata-only Secret
 * informer) a cluster whose Secrets' resourceVersions are the ones T was built from costs no read at
 * all; without it, or when the cache does not know a Secret yet, both are read (a rotated credential
 * is seen at once either way).
 */
export function secretClusterSource<T>(opts: {
  secrets: ResourceClient<Secret>;
  build: (s: ClusterSecrets) => T;
  kubeTimeoutMs?: number;
  versions?: SecretVersionSource;
  /** The TLS agents and contexts every cluster's kube client shares; default: one of this source's own. */
  tlsPool?: TlsAgentPool;
  /** Checked just before every changing request of the cluster's API client (the operator's lease). */
  fence?: CallFence;
  /** Closes what build made (besides the Kubernetes client, closed here) once newer credentials replace it. */
  close?: (value: T, reason: string) => void;
}): ClusterSource<T> {
  const cache = new Map<string, { fingerprint: string; value: T; kube: KubeApi }>();
  const tlsPool = opts.tlsPool ?? new TlsAgentPool();
  // An old value is closed, not just dropped: a run still holding it sends nothing more with the
  // replaced credentials, and fails (reported) instead of acting with them.
  const retire = (old: { value: T; kube: KubeApi } | undefined, reason: string): void => {
    if (!old) return;
    old.kube.client.close(reason);
    opts.close?.(old.value, reason);
  };
  const read = async (ns: string, name: string, key: string): Promise<{ text: string; rv: string }> => {
    const secret = await opts.secrets.get(ns, name).catch((err: unknown) => {
      throw isNotFound(err) ? new KubewardError('E_NOT_FOUND', `Secret ${ns}/${name} does not exist`) : err;
    });
    const b64 = secret.data?.[key];
    if (b64 === undefined) throw new KubewardError('E_CONFIG', `Secret ${ns}/${name} has no key "${key}"`);
    return { text: Buffer.from(b64, 'base64').toString('utf8'), rv: secret.metadata.resourceVersion ?? '' };
  };
  // routegc and flight often ask for the same cluster at the same moment (both start it after the
  // cache syncs): one build in flight per cluster, so they share one Keystone token, not two.
  const inflight = new Map<string, Promise<T>>();
  const getOnce = (mc: ManagedCluster): Promise<T> => {
    const uid = mc.metadata.uid ?? `${mc.metadata.namespace ?? 'default'}/${mc.metadata.name}`;
    const pending = inflight.get(uid);
    if (pending) return pending;
    const p = build(mc, uid).finally(() => inflight.delete(uid));
    inflight.set(uid, p);
    return p;
  };
  const build = async (mc: ManagedCluster, uid: string): Promise<T> => {
    const ns = mc.metadata.namespace ?? 'default';
    const kref = mc.spec.kubeconfigSecretRef;
    const cref = mc.spec.cloudCredentialsSecretRef;
    const hit = cache.get(uid);
    // Which Secrets and keys, and which versions of them: a changed *SecretRef is a change too.
    const refs = `${kref.name}:${kref.key ?? ''}/${mc.spec.noCloud ? '-' : `${cref.name}:${cref.key ?? ''}:${cref.cloud}`}`;
    if (hit && opts.versions) {
      const kv = opts.versions.version(ns, kref.name);
      const cv = mc.spec.noCloud ? '-' : opts.versions.version(ns, cref.name);
      if (kv !== undefined && cv !== undefined && hit.fingerprint === `${refs}@${kv}/${cv}`) return hit.value;
    }
    const kube = await read(ns, kref.name, kref.key ?? 'kubeconfig');
    const clouds = mc.spec.noCloud ? undefined : await read(ns, cref.name, cref.key ?? 'clouds.yaml');
    const fingerprint = `${refs}@${kube.rv}/${clouds?.rv ?? '-'}`;
    if (hit?.fingerprint === fingerprint) return hit.value;
    const api = createKubeApi(loadKubeConfig({ kind: 'text', text: kube.text, what: `Secret ${ns}/${kref.name}` }), {
      timeoutMs: opts.kubeTimeoutMs,
      sharedTls: tlsPool,
      fence: opts.fence,
    });
    const source = `Secret ${ns}/${cref.name} key ${cref.key ?? 'clouds.yaml'}`;
    const value = opts.build({ kube: api, clouds: clouds && { doc: parseClouds(clouds.text, source), cloudName: cref.cloud, source } });
    retire(hit, `the credentials in Secret ${ns}/${kref.name} or ${ns}/${cref.name} changed`);
    cache.set(uid, { fingerprint, value, kube: api });
    return value;
  };
  return {
    get: getOnce,
    forget: (uid) => {
      retire(cache.get(uid), 'the ManagedCluster is gone');
      cache.delete(uid);
    },
  };
}

/**
 * A cluster's clouds.yaml, parsed with js-yaml and YAML 1.2's core schema, the schema `yaml` (the
 * project's parser elsewhere) uses by default; duplicate keys are refused by both. Parsed once per
 * cluster at every start or leader change: `yaml` took about 110 µs and left about 160 KiB of
 * garbage per document (13 % of everything the operator allocated in the first 20 s at N=1,000;
 * docs/design/operator-start.md), js-yaml about 14 µs. js-yaml is already in the build (client-node's
 * kubeconfig parser).
 */
export function parseClouds(text: string, source: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = load(text, { schema: CORE_SCHEMA });
  } catch (err) {
    throw new KubewardError('E_CONFIG', `${source}: not YAML (${describeError(err)})`, { cause: err });
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new KubewardError('E_CONFIG', `${source}: expected a clouds.yaml mapping`);
  return doc as Record<string, unknown>;
}

export interface ClusterClients {
  kube: KubeApi;
  openstack: OpenStackClient;
}

export type ClusterClientSource = (mc: ManagedCluster, signal?: AbortSignal) => Promise<ClusterClients>;

/** The cluster's API and OpenStack client; a noCloud cluster has no OpenStack client (E_CONFIG). */
export function secretClusterClients(opts: {
  secrets: ResourceClient<Secret>;
  log: Logger;
  clock: Clock;
  kubeTimeoutMs?: number;
  versions?: SecretVersionSource;
  /** What every cluster's OpenStack client shares (the operator makes one); default: each its own. */
  openstack?: OpenStackShared;
  /** Checked just before every changing request of the cluster's clients (the operator's lease). */
  fence?: CallFence;
}): ClusterClientSource {
  const source = secretClusterSource<{ kube: KubeApi; openstack: OpenStackClient | undefined }>({
    secrets: opts.secrets,
    kubeTimeoutMs: opts.kubeTimeoutMs,
    versions: opts.versions,
    fence: opts.fence,
    close: (v, reason) => v.openstack?.close?.(reason),
    build: ({ kube, clouds }) => {
      if (!clouds) return { kube, openstack: undefined };
      const config = resolveCloudConfig({ cloudName: clouds.cloudName, env: {}, clouds: { path: clouds.source, doc: clouds.doc } });
      return { kube, openstack: createOpenStackClient({ config, log: opts.log, clock: opts.clock, shared: opts.openstack, fence: opts.fence }) };
    },
  });
  return async (mc) => {
    const clients = await source.get(mc);
    if (!clients.openstack)
      throw new KubewardError(
        'E_CONFIG',
        `ManagedCluster ${mc.metadata.namespace ?? 'default'}/${mc.metadata.name} has spec.noCloud: it has no OpenStack credentials`,
      );
    // The cached object itself: the same clients while the Secrets stay (runners compare them by identity).
    return clients as ClusterClients;
  };
}
