// Builders for the objects deorbit's unit tests feed to the pure decision code.
import type { PersistentVolume, PersistentVolumeClaim, Service, VolumeSnapshot } from '../../clients/kube/kube-types.ts';
import type { CloudView, Observation, SatelliteView } from './deorbit-types.ts';

export function pvc(
  name: string,
  volumeName: string | undefined,
  phase: 'Bound' | 'Pending' = 'Bound',
  extra: { deleting?: boolean } = {},
): PersistentVolumeClaim {
  return {
    metadata: { name, namespace: 'apps', uid: `uid-${name}`, deletionTimestamp: extra.deleting ? '2024-01-01T00:00:00Z' : undefined },
    spec: { volumeName },
    status: { phase },
  };
}

type PvSource = { csi: string; handle: string } | { cinder: string } | { nfs: true };
export function pv(
  name: string,
  source: PvSource,
  opts: { phase?: NonNullable<PersistentVolume['status']>['phase']; policy?: 'Retain' | 'Delete' } = {},
): PersistentVolume {
  const spec: PersistentVolume['spec'] = { persistentVolumeReclaimPolicy: opts.policy ?? 'Delete' };
  if ('csi' in source) spec.csi = { driver: source.csi, volumeHandle: source.handle };
  else if ('cinder' in source) spec.cinder = { volumeID: source.cinder };
  else spec.nfs = { server: 'nfs', path: '/x' };
  return { metadata: { name }, spec, status: { phase: opts.phase ?? 'Bound' } };
}

export function svc(name: string, type: 'LoadBalancer' | 'ClusterIP' = 'LoadBalancer', opts: { lbId?: string; deleting?: boolean } = {}): Service {
  return {
    metadata: {
      name,
      namespace: 'apps',
      uid: `uid-${name}`,
      annotations: opts.lbId ? { 'loadbalancer.openstack.org/load-balancer-id': opts.lbId } : undefined,
      deletionTimestamp: opts.deleting ? '2024-01-01T00:00:00Z' : undefined,
    },
    spec: { type },
  };
}

/** A snapshot of class `cinder` (driver cinder.csi.openstack.org in view()) unless told otherwise; null: no class. */
export function snap(name: string, className: string | null = 'cinder'): VolumeSnapshot {
  return { metadata: { name, namespace: 'apps', uid: `uid-${name}` }, spec: { volumeSnapshotClassName: className ?? undefined } };
}

export const CSI = 'cinder.csi.openstack.org';

export function view(sat: Partial<SatelliteView>, cloud: Partial<CloudView> = {}): Observation {
  return {
    ok: true,
    satellite: { snapshots: [], snapshotClasses: [{ name: 'cinder', driver: CSI }], pvcs: [], pvs: [], services: [], ...sat },
    cloud: { volumes: [], loadBalancers: [], floatingIps: [], ...cloud },
  };
}

export function lb(id: string, name: string, status = 'ACTIVE', vipPortId?: string) {
  return { id, name, provisioningStatus: status, vipPortId };
}
