// Property: for random clusters and clouds, deorbit's decision never targets an object outside the
// cluster's proven set (Cinder-class snapshots, claims bound to Cinder PVs, LoadBalancer Services;
// load balancers by an annotated ID whose load balancer carried the Service's own name, exact OCCM
// name of a Service seen, or legacy UID name; Cinder volumes recorded from those claims) and never
// exceeds its per-pass budget; an unreadable observation deletes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { PersistentVolume, PersistentVolumeClaim, Service, VolumeSnapshot } from '../../clients/kube/kube-types.ts';
import { decideDeorbit } from './decide-deorbit.ts';
import { isClusterNameDistinct, legacyLoadBalancerName, LB_ID_ANNOTATION, loadBalancerName } from './load-balancer-rules.ts';
import {
  DEFAULT_DEORBIT_SETTINGS,
  INITIAL_PROGRESS,
  type CloudLoadBalancer,
  type DeorbitProgress,
  type Observation,
  type SnapshotClass,
} from './deorbit-types.ts';

const CSI = 'cinder.csi.openstack.org';
const CLASSES: SnapshotClass[] = [
  { name: 'cinder', driver: CSI },
  { name: 'backup', driver: 'backup.example.com' },
];
const names = fc.constantFrom('a', 'b', 'c', 'web', 'db');
const nss = fc.constantFrom('apps', 'data');

const snapshot = fc
  .record({ name: names, ns: nss, cls: fc.constantFrom('cinder', 'backup', 'gone', undefined), deleting: fc.boolean() })
  .map((x): VolumeSnapshot => ({
    metadata: { name: x.name, namespace: x.ns, uid: `s-${x.ns}-${x.name}`, deletionTimestamp: x.deleting ? 'x' : undefined },
    spec: { volumeSnapshotClassName: x.cls },
  }));
const pvSource = fc.constantFrom<PersistentVolume['spec']>(
  { csi: { driver: CSI, volumeHandle: 'vol-1' } },
  { csi: { driver: CSI, volumeHandle: 'vol-2' } },
  { csi: { driver: 'nfs.csi.k8s.io', volumeHandle: 'vol-3' } },
  { cinder: { volumeID: 'vol-4' } },
  { nfs: { server: 'n', path: '/' } },
);
const pv = fc
  .record({ name: fc.constantFrom('pv-1', 'pv-2', 'pv-3'), spec: pvSource, phase: fc.constantFrom('Bound', 'Released', 'Failed', 'Available') })
  .map((x): PersistentVolume => ({ metadata: { name: x.name }, spec: x.spec, status: { phase: x.phase as 'Bound' } }));
const pvc = fc
  .record({ name: names, ns: nss, vol: fc.constantFrom('pv-1', 'pv-2', 'pv-3', undefined), phase: fc.constantFrom('Bound', 'Pending'), deleting: fc.boolean() })
  .map((x): PersistentVolumeClaim => ({
    metadata: { name: x.name, namespace: x.ns, uid: `c-${x.ns}-${x.name}`, deletionTimestamp: x.deleting ? 'x' : undefined },
    spec: { volumeName: x.vol },
    status: { phase: x.phase as 'Bound' },
  }));
const service = fc
  .record({
    name: names,
    ns: nss,
    type: fc.constantFrom('LoadBalancer', 'ClusterIP', 'NodePort'),
    lbId: fc.option(fc.constantFrom('lb-1', 'lb-2', 'lb-9')),
    deleting: fc.boolean(),
  })
  .map((x): Service => ({
    metadata: {
      name: x.name,
      namespace: x.ns,
      uid: `0000-${x.ns}-${x.name}`,
      annotations: x.lbId ? { [LB_ID_ANNOTATION]: x.lbId } : undefined,
      deletionTimestamp: x.deleting ? 'x' : undefined,
    },
    spec: { type: x.type },
  }));
const clusterName = fc.constantFrom('k1', 'k1_x', 'kubernetes');
const lbName = fc.oneof(
  fc.tuple(fc.constantFrom('k1', 'k1_x', 'kubernetes', 'k10'), nss, names).map(([c, ns, n]) => `kube_service_${c}_${ns}_${n}`),
  fc.tuple(nss, names).map(([ns, n]) => `a0000${ns}${n}`.slice(0, 32)),
  fc.constantFrom('custom', 'kube_service_k1_', 'kube_service_k1_apps'),
);
const loadBalancer = fc
  .record({ id: fc.constantFrom('lb-1', 'lb-2', 'lb-3', 'lb-4', 'lb-5'), name: lbName, st: fc.constantFrom('ACTIVE', 'ERROR', 'PENDING_DELETE', 'DELETED') })
  .map((x): CloudLoadBalancer => ({ id: x.id, name: x.name, provisioningStatus: x.st }));
const observation = fc
  .record({
    snapshots: fc.option(fc.uniqueArray(snapshot, { selector: (x) => `${x.metadata.namespace}/${x.metadata.name}`, maxLength: 6 }), { nil: undefined }),
    classes: fc.option(fc.constant(CLASSES), { nil: undefined }),
    pvcs: fc.uniqueArray(pvc, { selector: (x) => `${x.metadata.namespace}/${x.metadata.name}`, maxLength: 6 }),
    pvs: fc.uniqueArray(pv, { selector: (p) => p.metadata.name, maxLength: 3 }),
    services: fc.uniqueArray(service, { selector: (x) => `${x.metadata.namespace}/${x.metadata.name}`, maxLength: 8 }),
    lbs: fc.option(fc.uniqueArray(loadBalancer, { selector: (l) => l.id, maxLength: 5 }), { nil: undefined }),
    volumes: fc.subarray(['vol-1', 'vol-2', 'vol-3', 'vol-4']),
  })
  .map((x): Observation => ({
    ok: true,
    satellite: { snapshots: x.snapshots, snapshotClasses: x.classes, pvcs: x.pvcs, pvs: x.pvs, services: x.services },
    cloud: { volumes: x.volumes.map((id) => ({ id, status: 'available' })), loadBalancers: x.lbs, floatingIps: [] },
  }));
const failure = fc.constantFrom<Observation>(
  { ok: false, source: 'cloud', kind: 'other', message: 'unreadable', refusal: 'CloudAnswerUnreadable' },
  { ok: false, source: 'cluster-api', kind: 'unavailable', message: 'down' },
);

/** The proven set for one observation, computed independently of the code under test. */
function isProvenDelete(kind: string, ns: string, name: string, obs: Observation & { ok: true }): boolean {
  const sat = obs.satellite;
  if (kind === 'VolumeSnapshot') {
    return (sat.snapshots ?? []).some(
      (s) =>
        s.metadata.namespace === ns &&
        s.metadata.name === name &&
        !s.metadata.deletionTimestamp &&
        (sat.snapshotClasses ?? []).some((c) => c.name === s.spec?.volumeSnapshotClassName && c.driver === CSI),
    );
  }
  if (kind === 'PersistentVolumeClaim') {
    return sat.pvcs.some(
      (c) =>
        c.metadata.namespace === ns &&
        c.metadata.name === name &&
        !c.metadata.deletionTimestamp &&
        c.status?.phase === 'Bound' &&
        sat.pvs.some((p) => p.metadata.name === c.spec.volumeName && (p.spec.cinder !== undefined || p.spec.csi?.driver === CSI)),
    );
  }
  return sat.services.some((s) => s.metadata.namespace === ns && s.metadata.name === name && s.spec.type === 'LoadBalancer' && !s.metadata.deletionTimestamp);
}

test('property: deletions stay inside the proven set, within the budget, over many passes; unreadable passes delete nothing', () => {
  fc.assert(
    fc.property(
      clusterName,
      fc.integer({ min: 0, max: 6 }),
      fc.array(fc.oneof({ weight: 4, arbitrary: observation }, { weight: 1, arbitrary: failure }), { minLength: 1, maxLength: 5 }),
      (cluster, budget, passes) => {
        let progress: DeorbitProgress = structuredClone(INITIAL_PROGRESS);
        const seen: { namespace: string; name: string; uid?: string }[] = [];
        const provenIds = new Set<string>();
        for (const [i, obs] of passes.entries()) {
          const d = decideDeorbit({
            nowMs: 1000 + i * 15_000,
            settings: { ...DEFAULT_DEORBIT_SETTINGS, maxDeletesPerPass: budget },
            target: { deletionStartedMs: 0, loadBalancerClusterName: cluster },
            progress,
            observation: obs,
          });
          assert.ok(d.deletes.length <= budget, 'budget');
          if (!obs.ok) {
            assert.deepEqual(d.deletes, [], 'an unreadable pass deletes nothing');
            if (progress.step !== 'done') assert.notEqual(d.outcome, 'done', 'and never finishes');
            progress = d.progress;
            continue;
          }
          const keys = d.deletes.map((a) => `${a.kind}/${a.namespace}/${a.name}`);
          for (const a of [...d.deletes, ...d.deferred]) {
            // The cloud's own deletes: a volume recorded from a proven claim, a load balancer waited for as the cluster's.
            if (a.kind === 'CinderVolume') assert.ok(d.progress.trackedVolumes.includes(a.name), `volume ${a.name} was never recorded`);
            else if (a.kind === 'LoadBalancer') assert.ok(d.progress.leftovers.loadBalancers.includes(a.name), `load balancer ${a.name} is not the cluster's`);
            else assert.ok(isProvenDelete(a.kind, a.namespace, a.name, obs), `not proven: ${a.kind} ${a.namespace}/${a.name}`);
          }
          assert.equal(new Set(keys).size, keys.length, 'nothing twice in a pass');
          for (const s of obs.satellite.services.filter((x) => x.spec.type === 'LoadBalancer')) {
            seen.push({ namespace: s.metadata.namespace!, name: s.metadata.name, uid: s.metadata.uid });
            const id = s.metadata.annotations?.[LB_ID_ANNOTATION];
            const named = (obs.cloud.loadBalancers ?? []).find((x) => x.id === id);
            const me = { namespace: s.metadata.namespace!, name: s.metadata.name, uid: s.metadata.uid };
            // Proven once (annotated and carrying the Service's own name), it stays the cluster's.
            if (id && named && [loadBalancerName(cluster, me), legacyLoadBalancerName(me)].includes(named.name)) provenIds.add(id);
          }
          const provenNames = new Set(
            seen.flatMap((s) => [...(isClusterNameDistinct(cluster) ? [loadBalancerName(cluster, s)] : []), legacyLoadBalancerName(s) ?? '']),
          );
          for (const id of d.progress.leftovers.loadBalancers) {
            const lb = (obs.cloud.loadBalancers ?? []).find((x) => x.id === id && x.provisioningStatus !== 'DELETED');
            assert.ok(lb, `waited-for ${id} exists`);
            // An annotated ID counts only with the Service's own name: a reused load balancer is never the cluster's.
            const namedForAnnotator = provenIds.has(id);
            assert.ok(namedForAnnotator || provenNames.has(lb.name), `load balancer ${id} (${lb.name}) is not proven the cluster's ${cluster}`);
            if (!isClusterNameDistinct(cluster)) assert.ok(namedForAnnotator || !lb.name.startsWith('kube_service_'), 'the shared default name proves nothing');
          }
          progress = d.progress;
        }
      },
    ),
    { numRuns: 1500 },
  );
});
