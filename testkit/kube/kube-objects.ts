// Objects for integration tests against a real kube-apiserver: CRDs (installed and removed with
// waits until the API serves them), bound claims (the apiserver binds nothing by itself),
// LoadBalancer Services with the cloud controller's finalizer, and a reset between scenarios.
import { parse } from 'yaml';
import type { KubeApi } from '../../src/clients/kube/kube-api.ts';
import { isConflict, isNotFound } from '../../src/clients/kube/kube-api-error.ts';
import type { KubeObject, PersistentVolume, PersistentVolumeClaim, Service } from '../../src/clients/kube/kube-types.ts';
import { waitFor } from '../wait-for.ts';

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** A CRD of external-snapshotter's group (snapshot.storage.k8s.io/v1) that keeps any field, as the tests need no schema. */
function snapshotterCrd(kind: string, plural: string, scope: 'Namespaced' | 'Cluster'): string {
  return `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${plural}.snapshot.storage.k8s.io
  annotations: { api-approved.kubernetes.io: "https://github.com/kubernetes-csi/external-snapshotter/pull/419" }
spec:
  group: snapshot.storage.k8s.io
  scope: ${scope}
  names: { kind: ${kind}, listKind: ${kind}List, plural: ${plural}, singular: ${kind.toLowerCase()} }
  versions:
    - name: v1
      served: true
      storage: true
      schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } }
`;
}

export const VOLUME_SNAPSHOT_CRD = snapshotterCrd('VolumeSnapshot', 'volumesnapshots', 'Namespaced');

/** VolumeSnapshotClass (cluster-scoped, top-level `driver`), as external-snapshotter serves it. */
export const VOLUME_SNAPSHOT_CLASS_CRD = snapshotterCrd('VolumeSnapshotClass', 'volumesnapshotclasses', 'Cluster');

/** Snapshot classes: `cinder` (driver cinder.csi.openstack.org) and `backup` (another driver). */
export async function createSnapshotClasses(api: KubeApi): Promise<void> {
  const kind = { group: 'snapshot.storage.k8s.io', version: 'v1', plural: 'volumesnapshotclasses', kind: 'VolumeSnapshotClass', namespaced: false };
  const classes = api.resource<KubeObject & { driver: string; deletionPolicy: string }>(kind);
  for (const [name, driver] of [
    ['cinder', 'cinder.csi.openstack.org'],
    ['backup', 'backup.example.com'],
  ] as const) {
    await classes.create({ metadata: { name }, driver, deletionPolicy: 'Delete' }).catch((err: unknown) => {
      if (!isConflict(err)) throw err;
    });
  }
}

export const CCM_FINALIZER = 'service.kubernetes.io/load-balancer-cleanup';

/** Creates (or keeps) a CRD from YAML and waits until its resources can be listed. */
export async function installCrd(api: KubeApi, yamlText: string): Promise<void> {
  const crd = parse(yamlText) as { metadata: { name: string }; spec: { group: string; versions: { name: string }[]; names: { plural: string } } };
  await api.client.request('POST', CRD_PATH, { body: crd }).catch((err: unknown) => {
    if (!isConflict(err)) throw err;
  });
  const path = `/apis/${crd.spec.group}/${crd.spec.versions[0]!.name}/${crd.spec.names.plural}`;
  await waitFor(() => api.client.request('GET', path).then(() => true), { timeoutMs: 20_000, intervalMs: 100, what: `${crd.metadata.name} served` });
}

export async function removeCrd(api: KubeApi, name: string, group: string): Promise<void> {
  await api.client.request('DELETE', `${CRD_PATH}/${name}`).catch((err: unknown) => {
    if (!isNotFound(err)) throw err;
  });
  await waitFor(
    () =>
      api.client.request('GET', `/apis/${group}`).then(
        () => false,
        (err: unknown) => isNotFound(err),
      ),
    {
      timeoutMs: 30_000,
      intervalMs: 200,
      what: `${group} gone from discovery`,
    },
  );
}

export async function ensureNamespace(api: KubeApi, name: string): Promise<void> {
  await api.namespaces.create({ metadata: { name } }).catch((err: unknown) => {
    if (!isConflict(err)) throw err;
  });
}

export interface ClaimSpec {
  namespace: string;
  name: string;
  pvName: string;
  source: { csi: { driver: string; volumeHandle: string } } | { cinder: { volumeID: string } } | { nfs: { server: string; path: string } };
  reclaimPolicy?: 'Delete' | 'Retain';
  /** Bound (default), or a PV that is Failed. */
  pvPhase?: 'Bound' | 'Failed';
}

/** A PV and a PVC bound to each other, statuses set as the PV controller would. */
export async function createBoundClaim(api: KubeApi, c: ClaimSpec): Promise<void> {
  const pv: PersistentVolume = {
    metadata: { name: c.pvName },
    spec: {
      persistentVolumeReclaimPolicy: c.reclaimPolicy ?? 'Delete',
      claimRef: { namespace: c.namespace, name: c.name },
      ...c.source,
      ...({ capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'] } as object),
    },
  };
  const created = await api.pvs.create(pv);
  await api.pvs.replaceStatus({ ...created, status: { phase: c.pvPhase ?? 'Bound' } });
  const pvc: PersistentVolumeClaim = {
    metadata: { name: c.name, namespace: c.namespace },
    spec: { volumeName: c.pvName, ...({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } as object) },
  };
  const claim = await api.pvcs.create(pvc);
  await api.pvcs.replaceStatus({ ...claim, status: { phase: 'Bound' } });
}

export async function createPendingClaim(api: KubeApi, namespace: string, name: string): Promise<void> {
  await api.pvcs.create({
    metadata: { name, namespace },
    spec: { ...({ accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } as object) },
  });
}

export async function createService(
  api: KubeApi,
  namespace: string,
  name: string,
  type: 'LoadBalancer' | 'ClusterIP',
  opts: { finalizer?: boolean; lbId?: string } = {},
): Promise<Service> {
  return api.services.create({
    metadata: {
      name,
      namespace,
      finalizers: opts.finalizer ? [CCM_FINALIZER] : undefined,
      annotations: opts.lbId ? { 'loadbalancer.openstack.org/load-balancer-id': opts.lbId } : undefined,
    },
    spec: { type, ...({ ports: [{ port: 80, targetPort: 8080 }] } as object) },
  });
}

/** Removes finalizers and deletes every object kind deorbit touches, in the given namespaces and cluster-wide. */
export async function resetSatellite(api: KubeApi, namespaces: string[], snapshotVersion?: string): Promise<void> {
  const clients = [api.services, api.pvcs, ...(snapshotVersion ? [api.volumeSnapshots(snapshotVersion)] : [])];
  for (const ns of namespaces) {
    for (const client of clients) {
      const items = (await client.list(ns)).items as KubeObject[];
      // Deleted first, then stripped: a protection controller adds its finalizer back to a live object, never to a deleted one.
      for (const o of items) {
        await client.delete(ns, o.metadata.name).catch(() => undefined);
        if (o.metadata.finalizers?.length) await client.patch(ns, o.metadata.name, { metadata: { finalizers: null } }).catch(() => undefined);
      }
    }
  }
  // A PV keeps pv-protection's finalizer while it looks bound: strip it as the claims' were.
  for (const pv of (await api.pvs.list()).items) {
    await api.pvs.delete(undefined, pv.metadata.name).catch(() => undefined);
    if (pv.metadata.finalizers?.length) await api.pvs.patch(undefined, pv.metadata.name, { metadata: { finalizers: null } }).catch(() => undefined);
  }
}
