// A fleet of Running ManagedClusters for operator benchmarks and scale tests: each cluster gets its
// own emulated OpenStack tenant (made in bulk through the emulator's admin API), its clouds.yaml and
// kubeconfig Secrets, and a ManagedCluster naming its router, group and node pool.
import type { KubeApi } from '../src/clients/kube/kube-api.ts';
import type { KubeObject } from '../src/clients/kube/kube-types.ts';
import { KINDS } from '../src/clients/kube/resource-kinds.ts';
import type { BulkProject } from './openstack/admin-bulk.ts';
import type { OpenStackEmulator } from './openstack/openstack-emulator.ts';

/** Makes `count` healthy tenants on emu named `${prefix}-${start}`…: three servers each with the tags and metadata flight wants. */
export async function bulkTenants(emu: OpenStackEmulator, prefix: string, count: number, start = 0): Promise<BulkProject[]> {
  const res = await fetch(`${emu.url}/_admin/bulk/projects`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      count,
      prefix,
      start,
      servers: 3,
      serverName: 'kks-{project}-small-{n}',
      serverTags: ['kubeward', 'kubeward:cluster={project}', 'kubeward:nodepool=small'],
      serverMetadata: { provisioner: 'kubeward', 'kubeward:cluster': '{project}', 'kubeward:nodepool': 'small' },
    }),
  });
  if (res.status !== 201) throw new Error(`bulk create on the emulator: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { projects: BulkProject[] }).projects;
}

export function tenantCloudsYaml(emu: OpenStackEmulator, p: BulkProject): string {
  return [
    'clouds:',
    '  emu:',
    '    auth:',
    `      auth_url: ${emu.authUrl}`,
    `      username: ${p.userName}`,
    `      password: ${p.password}`,
    `      project_name: ${p.projectName}`,
    '      user_domain_name: Default',
    '      project_domain_name: Default',
    '    region_name: RegionOne',
    '    interface: public',
    '    identity_api_version: 3',
    '',
  ].join('\n');
}

/** Runs fn over items with at most `limit` in flight. */
export async function inPool<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

/**
 * kubeconfigText with a line naming the cluster in front of its CA's PEM: the same certificate (OpenSSL
 * skips text before "-----BEGIN"), but other bytes, so the operator keys a TLS identity of its own
 * for the cluster (src/clients/kube/tls-agent-pool.ts): its own agent, context and sockets, as in a
 * real fleet where each cluster has its own CA. Without it every cluster shares one agent.
 */
export function withOwnTlsIdentity(kubeconfigText: string, cluster: string): string {
  return kubeconfigText.replace(
    /(certificate-authority-data:\s*)([A-Za-z0-9+/=]+)/g,
    (_, key: string, data: string) =>
      key + Buffer.from(`kubeward test fleet: CA of cluster ${cluster}\n${Buffer.from(data, 'base64').toString()}`).toString('base64'),
  );
}

/**
 * One Running ManagedCluster per tenant in namespace ns (named after the project), with its Secrets;
 * every cluster's own API is the kube-apiserver of kubeconfigText. ownTlsIdentity: see withOwnTlsIdentity.
 */
export async function createManagedClusters(
  api: KubeApi,
  ns: string,
  kubeconfigText: string,
  tenants: readonly { emu: OpenStackEmulator; project: BulkProject }[],
  concurrency = 16,
  opts: { ownTlsIdentity?: boolean } = {},
): Promise<void> {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const clusters = api.resource<KubeObject & { spec: unknown; status?: unknown }>(KINDS.managedCluster);
  const exists = (err: unknown) => (err as { status?: number }).status === 409;
  const tolerate = (e: unknown) => {
    if (!exists(e)) throw e;
  };
  await inPool(tenants, concurrency, async ({ emu, project: p }) => {
    const name = p.projectName;
    await api.secrets
      .create({
        metadata: { name: `${name}-kubeconfig`, namespace: ns },
        data: { kubeconfig: b64(opts.ownTlsIdentity ? withOwnTlsIdentity(kubeconfigText, name) : kubeconfigText) },
      })
      .catch(tolerate);
    await api.secrets.create({ metadata: { name: `${name}-cloud`, namespace: ns }, data: { 'clouds.yaml': b64(tenantCloudsYaml(emu, p)) } }).catch(tolerate);
    const mc = await clusters.create({
      metadata: { name, namespace: ns },
      spec: {
        kubeconfigSecretRef: { name: `${name}-kubeconfig` },
        cloudCredentialsSecretRef: { name: `${name}-cloud`, cloud: 'emu' },
        clusterCIDR: '100.100.0.0/16',
        openstack: { routerID: p.routerId, securityGroupName: p.securityGroupName, loadBalancerClusterName: name },
        nodePools: [{ name: 'small' }],
      },
    });
    await clusters.replaceStatus({ ...mc, status: { phase: 'Running' } });
  });
}
