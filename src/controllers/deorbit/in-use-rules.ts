// Pure rules about claims that pods still mount. A claim being deleted keeps pvc-protection's
// finalizer while a pod uses it, so deorbit would wait for nothing. It removes what holds the claim:
// the controller at the top of the pod's owner chain (ReplicaSet → Deployment, StatefulSet,
// DaemonSet, Job), which would otherwise make the pod again, and the pod itself; or, when the
// ManagedCluster says inUseClaims: Report, names which pods hold which claims and touches none.
import type { PersistentVolumeClaim } from '../../clients/kube/kube-types.ts';
import type { DeleteAction, ObjectKind, OwnerReference, PodView, WorkloadView } from './deorbit-types.ts';

export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';

const WORKLOAD_KINDS = new Set<ObjectKind>(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job']);

/** A claim being deleted that its protection finalizer still holds. */
export function isHeldClaim(c: PersistentVolumeClaim): boolean {
  return !!c.metadata.deletionTimestamp && (c.metadata.finalizers ?? []).includes(PVC_PROTECTION_FINALIZER);
}

/** Pods that mount the claim and have not ended. */
export function podsMounting(claim: PersistentVolumeClaim, pods: readonly PodView[]): PodView[] {
  return pods.filter(
    (p) =>
      p.metadata.namespace === claim.metadata.namespace &&
      p.status?.phase !== 'Succeeded' &&
      p.status?.phase !== 'Failed' &&
      (p.spec?.volumes ?? []).some((v) => v.persistentVolumeClaim?.claimName === claim.metadata.name),
  );
}

const controllerOf = (refs: OwnerReference[] | undefined): OwnerReference | undefined => refs?.find((r) => r.controller);

/** The workload that would re-create the pod, at the top of its controller chain; undefined for a bare pod. */
export function owningWorkload(pod: PodView, replicaSets: readonly WorkloadView[]): DeleteAction | undefined {
  const ref = controllerOf(pod.metadata.ownerReferences);
  if (!ref || !WORKLOAD_KINDS.has(ref.kind as ObjectKind)) return undefined;
  const ns = pod.metadata.namespace ?? '';
  if (ref.kind === 'ReplicaSet') {
    const rs = replicaSets.find((r) => r.metadata.uid === ref.uid);
    const up = controllerOf(rs?.metadata.ownerReferences);
    if (up?.kind === 'Deployment') return { kind: 'Deployment', namespace: ns, name: up.name, uid: up.uid };
  }
  return { kind: ref.kind as ObjectKind, namespace: ns, name: ref.name, uid: ref.uid };
}

export interface InUseJudgement {
  /** "namespace/claim: pod, pod" for each held claim a pod still mounts. */
  blocked: string[];
  /** Claims (namespace/name) that pods hold. */
  claims: string[];
  /** Workloads first (so nothing re-creates the pods), then the pods; each once. */
  deletes: DeleteAction[];
}

export function judgeInUse(pvcs: readonly PersistentVolumeClaim[], pods: readonly PodView[], replicaSets: readonly WorkloadView[]): InUseJudgement {
  const out: InUseJudgement = { blocked: [], claims: [], deletes: [] };
  const workloads = new Map<string, DeleteAction>();
  const podDeletes = new Map<string, DeleteAction>();
  for (const claim of pvcs.filter(isHeldClaim)) {
    const holders = podsMounting(claim, pods);
    if (holders.length === 0) continue;
    const key = `${claim.metadata.namespace}/${claim.metadata.name}`;
    out.claims.push(key);
    out.blocked.push(`${key}: ${holders.map((p) => `${p.metadata.namespace}/${p.metadata.name}`).join(', ')}`);
    for (const pod of holders) {
      const w = owningWorkload(pod, replicaSets);
      if (w) workloads.set(`${w.kind}/${w.namespace}/${w.name}`, w);
      if (!pod.metadata.deletionTimestamp)
        podDeletes.set(`${pod.metadata.namespace}/${pod.metadata.name}`, {
          kind: 'Pod',
          namespace: pod.metadata.namespace ?? '',
          name: pod.metadata.name,
          uid: pod.metadata.uid,
        });
    }
  }
  out.blocked.sort();
  out.claims.sort();
  out.deletes = [...workloads.values(), ...podDeletes.values()];
  return out;
}
