// The deorbit decision, pure: from what one pass observed and the progress so far, which objects to
// delete, which events to emit, whether to keep waiting, finish, or give up (self-destruct).
// Order (Kubernikus): delete snapshots → PVCs → LB Services; wait for snapshots, then Cinder
// volumes, then load balancers. Every pass re-checks everything, so a restart resumes anywhere.
// Safety: nothing is deleted unless the kubeconfig reaches the cluster recorded at adoption and no
// other live ManagedCluster records it; only what is proven the cluster's is deleted or waited for
// (Cinder-backed claims and snapshots, LoadBalancer Services, load balancers by exact identity,
// never a reused one); backups and objects labelled to keep stay; at most maxDeletesPerPass
// deletions per pass; an answer that cannot be read holds the pass and says why.
// Waits are on the cloud: the Cinder volume IDs behind the claims are recorded before the claims
// are deleted and waited on until Cinder answers 404, whatever happened to their PVs. Every timer
// counts from the first attempt, and a give-up lists what this pass saw, not an older look.
import {
  annotatedLoadBalancerIds,
  floatingIpsOf,
  isClusterNameDistinct,
  isLegacyVersion,
  isLoadBalancerService,
  judgeAnnotatedIds,
  matchLoadBalancers,
  seenLoadBalancerServices,
} from './load-balancer-rules.ts';
import { applyBudget } from '../managed-cluster/blast-budget.ts';
import { judgeSnapshots } from './snapshot-rules.ts';
import { cinderVolumeId, claimsToDelete, judgeVolumes } from './volume-rules.ts';
import { isKept, keptName } from './keep-rules.ts';
import { judgeInUse } from './in-use-rules.ts';
import { judgeRecreated } from './recreate-rules.ts';
import { judgeCloudLeftovers, uncountUnsent } from './cloud-retry-rules.ts';
import {
  AMBIGUOUS_LB_REASON,
  CLAIMS_IN_USE_REASON,
  CREATED_DURING_REASON,
  FAILED_CLOUD_DELETE_REASON,
  heldEvent,
  refusedEvent,
  UNPROVEN_LB_NAMES_REASON,
  listText,
  RETAINED_VOLUMES_REASON,
  SELF_DESTRUCT_REASON,
  stepDoneEvent,
  stepFailedEvent,
  waitingEvent,
  type WaitStep,
} from './deorbit-events.ts';
import type {
  ClusterIdentity,
  CloudView,
  DeleteAction,
  DeorbitDecision,
  DeorbitEvent,
  DeorbitProgress,
  DeorbitSettings,
  DeorbitTarget,
  Observation,
  SatelliteView,
  SeenService,
  SelfDestructReason,
  StopReason,
} from './deorbit-types.ts';

export interface DeorbitInput {
  nowMs: number;
  settings: DeorbitSettings;
  target: DeorbitTarget;
  progress: DeorbitProgress;
  observation: Observation;
  /** The identity recorded when the cluster was adopted; undefined: none yet (recorded now). */
  pinned?: ClusterIdentity;
  /** Other live ManagedClusters ("namespace/name") that record the identity this kubeconfig reaches. */
  twins?: readonly string[];
}

const WAIT_STEPS: readonly WaitStep[] = ['snapshots', 'volumes', 'loadbalancers'];

const decision = (p: DeorbitProgress, outcome: DeorbitDecision['outcome'], rest: Partial<DeorbitDecision> = {}): DeorbitDecision => ({
  deletes: [],
  events: [],
  progress: p,
  outcome,
  heldBack: 0,
  deferred: [],
  ...rest,
});

export function decideDeorbit(input: DeorbitInput): DeorbitDecision {
  const { nowMs, settings, target, observation: obs } = input;
  const p: DeorbitProgress = structuredClone(input.progress);
  if (p.step === 'done') return decision(p, 'done');
  if (p.step === 'self-destructed') return decision(p, 'self-destruct');
  // Timers count from the first attempt: a cluster protected (or an operator down) for a day still gets one.
  p.startedMs ??= nowMs;
  if (p.attemptStartedMs === undefined) {
    p.attempt = Math.max(1, p.attempt);
    p.attemptStartedMs = nowMs;
  }
  const hanging = nowMs - p.startedMs >= settings.hangTimeoutMs;
  if (!obs.ok) {
    // The hang timeout applies whatever failed, credentials and client construction included.
    if (hanging) return selfDestruct(p, 'DeorbitHanging', nowMs, `from the last look; this one failed: ${obs.message}`);
    p.lastError = `${obs.source}: ${obs.message}`;
    if (obs.source === 'cluster-api' && obs.kind === 'unavailable') {
      p.apiFailingSinceMs ??= nowMs;
      if (nowMs - p.apiFailingSinceMs >= settings.apiUnavailableTimeoutMs) return selfDestruct(p, 'APIUnavailable', nowMs);
    } else if (obs.source === 'cloud') {
      p.apiFailingSinceMs = undefined; // the cluster's API answered before the cloud failed
    }
    const events: DeorbitEvent[] = [];
    // An answer that cannot be read proves nothing gone: hold, and say so once per new reason.
    if (obs.refusal && p.heldReason !== obs.refusal) events.push(heldEvent(obs.refusal, obs.message));
    p.heldReason = obs.refusal;
    return decision(p, 'failed', { events });
  }
  p.apiFailingSinceMs = undefined;
  p.lastError = undefined;
  const identity = judgeIdentity(input.pinned, obs.satellite.identity, input.twins ?? []);
  if (identity.stop) return stop(p, identity.stop.reason, identity.stop.message, hanging, nowMs);
  const d = decideWithView(input.progress, nowMs, settings, target, p, obs.satellite, obs.cloud, hanging);
  if (identity.pin) d.pin = identity.pin;
  return d;
}

/** Whether the kubeconfig still reaches the adopted cluster, and that no other live ManagedCluster claims it. */
function judgeIdentity(
  pinned: ClusterIdentity | undefined,
  seen: ClusterIdentity | undefined,
  twins: readonly string[],
): { stop?: { reason: StopReason; message: string }; pin?: ClusterIdentity } {
  if (!seen) return {}; // a port that cannot tell (the one-shot command's tests): nothing to compare
  if (pinned && (pinned.kubeSystemUid !== seen.kubeSystemUid || pinned.caFingerprint !== seen.caFingerprint)) {
    return {
      stop: {
        reason: 'ClusterIdentityChanged',
        message:
          `the kubeconfig reaches another cluster than the one adopted: kube-system ${seen.kubeSystemUid} (CA ${short(seen.caFingerprint)}), ` +
          `recorded kube-system ${pinned.kubeSystemUid} (CA ${short(pinned.caFingerprint)}); nothing is deleted there`,
      },
    };
  }
  if (twins.length > 0) {
    return {
      stop: {
        reason: 'ClusterIdentityConflict',
        message: `live ManagedClusters ${listText([...twins].sort())} describe the same cluster (kube-system ${seen.kubeSystemUid}); deleting this one must not clean up theirs`,
      },
    };
  }
  return pinned ? {} : { pin: seen };
}

const short = (fp: string): string => fp.slice(0, 16);

/** A pass that could read everything but must not act: no deletion; says why once per reason. */
function stop(p: DeorbitProgress, reason: StopReason, message: string, hanging: boolean, nowMs: number): DeorbitDecision {
  if (hanging) return selfDestruct(p, 'DeorbitHanging', nowMs, `held: ${message}`);
  const events = p.heldReason === reason ? [] : [refusedEvent(reason, message)];
  p.heldReason = reason;
  p.lastError = message;
  return decision(p, 'failed', { events });
}

function decideWithView(
  before: DeorbitProgress,
  nowMs: number,
  s: DeorbitSettings,
  target: DeorbitTarget,
  p: DeorbitProgress,
  sat: SatelliteView,
  cloud: CloudView,
  hanging: boolean,
): DeorbitDecision {
  const policy = target.policy;
  const events: DeorbitEvent[] = [];
  // A Service back under a name deorbit deleted: someone re-creates it; deleting again would churn.
  const recreated = judgeRecreated(sat.services, p.deletedServices);
  if (recreated.length > 0) return stop(p, 'ServiceRecreated', `re-created after deorbit deleted them: ${recreated.join('; ')}`, hanging, nowMs);
  if (p.heldReason !== undefined) p.heldReason = undefined;

  const kept = keptObjects(sat, target);
  const plan = plannedDeletes(sat, s.csiDrivers, policy);
  // The volumes behind the claims about to go, recorded before the first deletion.
  const byPv = new Map(sat.pvs.map((pv) => [pv.metadata.name, pv]));
  const newVolumes = plan
    .filter((a) => a.kind === 'PersistentVolumeClaim')
    .map((a) => sat.pvcs.find((c) => c.metadata.namespace === a.namespace && c.metadata.name === a.name)?.spec.volumeName)
    .map((pvName) => (pvName ? byPv.get(pvName) : undefined))
    .filter((pv) => pv !== undefined && pv.spec.persistentVolumeReclaimPolicy !== 'Retain' && pv.status?.phase !== 'Failed')
    .map((pv) => cinderVolumeId(pv!, s.csiDrivers))
    .filter((id): id is string => id !== undefined && !p.trackedVolumes.includes(id));
  p.trackedVolumes = [...p.trackedVolumes, ...newVolumes].sort();

  // Claims pods still mount: remove what holds them, or report them. Only claims deorbit deleted
  // itself (their Cinder volume recorded before the delete, and waited for): a claim on another
  // driver, a kept one, or one someone else deleted is its owner's, and so are its pods.
  const tracked = new Set(p.trackedVolumes);
  const ownClaims = sat.pvcs.filter((c) => {
    const pv = c.spec.volumeName ? byPv.get(c.spec.volumeName) : undefined;
    const id = pv ? cinderVolumeId(pv, s.csiDrivers) : undefined;
    return id !== undefined && tracked.has(id) && !isKept(c, policy);
  });
  const inUse = judgeInUse(ownClaims, sat.pods ?? [], sat.replicaSets ?? []);
  const reportOnly = policy?.inUseClaims === 'Report';
  if (inUse.blocked.join() !== p.claimsInUse.join() && inUse.blocked.length > 0) {
    events.push({
      type: 'Warning',
      reason: CLAIMS_IN_USE_REASON,
      message: reportOnly
        ? `claims mounted by pods, left to their owners (inUseClaims: Report): ${inUse.blocked.join('; ')}`
        : `claims mounted by pods; deleting the pods and the controllers that make them: ${inUse.blocked.join('; ')}`,
    });
  }
  p.claimsInUse = inUse.blocked;
  const blockedVolumes = reportOnly ? volumesOfClaims(inUse.claims, sat, s.csiDrivers) : [];
  // A kept claim's volume stays: it is listed as kept, not waited for.
  const keptClaims = sat.pvcs.filter((x) => isKept(x, policy)).map((x) => `${x.metadata.namespace}/${x.metadata.name}`);
  // So does a volume whose PV says nothing will delete it (Failed, Retain, never claimed).
  const staying = sat.pvs
    .filter((pv) => pv.status?.phase === 'Failed' || pv.status?.phase === 'Available' || pv.spec.persistentVolumeReclaimPolicy === 'Retain')
    .map((pv) => cinderVolumeId(pv, s.csiDrivers))
    .filter((id): id is string => id !== undefined);
  const unwaited = new Set([...blockedVolumes, ...volumesOfClaims(keptClaims, sat, s.csiDrivers), ...staying]);

  // Load balancers: the cluster's own only; a reused one is not.
  const annotated = cloud.loadBalancers ? judgeAnnotatedIds(sat.services, cloud.loadBalancers, target.loadBalancerClusterName) : { created: [], reused: [] };
  p.trackedLoadBalancers = [...new Set([...p.trackedLoadBalancers, ...annotated.created])].sort();
  p.seenServices = mergeSeen(p.seenServices, seenLoadBalancerServices(sat.services));
  const match = cloud.loadBalancers
    ? matchLoadBalancers(
        cloud.loadBalancers.filter((lb) => !annotated.reused.includes(lb.id) || p.trackedLoadBalancers.includes(lb.id)),
        target.loadBalancerClusterName,
        p.seenServices.filter((x) => !keptServiceKeys(sat, policy).has(`${x.namespace}/${x.name}`)),
        p.trackedLoadBalancers,
      )
    : { ours: [], ambiguous: [] };
  const lbServices = sat.services.filter(isLoadBalancerService).filter((x) => !isKept(x, policy));
  // What identifies the cloud objects to wait for (volume IDs, load balancer IDs, the Services whose
  // names prove a load balancer) is recorded before the deletions that could make it unreadable.
  const learned =
    newVolumes.length > 0 ||
    p.trackedLoadBalancers.join() !== before.trackedLoadBalancers.join() ||
    JSON.stringify(p.seenServices) !== JSON.stringify(before.seenServices);
  const recordFirst = learned
    ? {
        ...structuredClone(before),
        trackedVolumes: p.trackedVolumes,
        trackedLoadBalancers: p.trackedLoadBalancers,
        seenServices: p.seenServices,
        startedMs: p.startedMs,
        attempt: p.attempt,
        attemptStartedMs: p.attemptStartedMs,
      }
    : undefined;

  // Cinder: the recorded volumes (until 404) and those PVs still name; Octavia: the proven ones.
  const vols = judgeVolumes(sat.pvs, cloud.volumes, s.csiDrivers);
  const leftovers = judgeCloudLeftovers({
    nowMs,
    settings: s,
    trackedVolumes: p.trackedVolumes.filter((id) => !unwaited.has(id)),
    pvWaits: vols.waitingFor.filter((id) => !unwaited.has(id)),
    volumes: cloud.volumes,
    pvVolumeIds: new Set(sat.pvs.map((pv) => cinderVolumeId(pv, s.csiDrivers)).filter((id): id is string => id !== undefined)),
    loadBalancers: match.ours,
    lbServicesLeft: lbServices.length > 0,
    retries: p.cloudRetries,
  });
  const retriesBefore = p.cloudRetries;
  p.cloudRetries = leftovers.retries;
  const newlyFailed = leftovers.failed.filter((x) => !p.failedDeletes.includes(x.id));
  for (const f of newlyFailed) events.push({ type: 'Warning', reason: FAILED_CLOUD_DELETE_REASON, message: f.message });
  p.failedDeletes = [...new Set([...p.failedDeletes, ...leftovers.failed.map((x) => x.id)])].sort();

  const cinderSnapshots = judgeSnapshots(sat.snapshots ?? [], sat.snapshotClasses, s.csiDrivers).cinder.filter((x) => !isKept(x, policy, sat.snapshotClasses));
  // Before 1.17 nothing holds a Service until its load balancer is gone: the Kubernikus grace period stands in.
  const servicesSettled = lbServices.length === 0 || (isLegacyVersion(target.version) && nowMs >= target.deletionStartedMs + s.legacyServiceGraceMs);
  const finished: Record<WaitStep, boolean> = {
    snapshots: cinderSnapshots.length === 0,
    volumes: leftovers.waitingVolumes.length === 0,
    loadbalancers: servicesSettled && leftovers.waitingLoadBalancers.length === 0,
  };
  const lbsLeft = match.ours.filter((lb) => !annotated.reused.includes(lb.id));
  const fips = floatingIpsOf(lbsLeft, cloud.floatingIps);
  p.remaining = {
    snapshots: cinderSnapshots.length,
    pvcs: plan.filter((d) => d.kind === 'PersistentVolumeClaim').length,
    services: lbServices.length,
    volumes: leftovers.waitingVolumes.length,
    loadBalancers: leftovers.waitingLoadBalancers.length,
  };
  // What is really left, from this look: what is waited for, and what failed and stays.
  p.leftovers = {
    volumes: [
      ...new Set([
        ...leftovers.waitingVolumes,
        ...leftovers.failed.filter((x) => x.kind === 'volume').map((x) => x.id),
        ...blockedVolumes.filter((id) => cloud.volumes.some((v) => v.id === id)),
      ]),
    ].sort(),
    loadBalancers: lbsLeft.map((lb) => lb.id).sort(),
    floatingIps: fips,
  };
  p.kept = kept;
  const detail: Record<WaitStep, string> = {
    snapshots:
      sat.snapshots === undefined
        ? 'no VolumeSnapshot API in the cluster'
        : `Cinder VolumeSnapshots left ${listText(cinderSnapshots.map((x) => `${x.metadata.namespace}/${x.metadata.name}`))}`,
    volumes: `Cinder volumes left ${listText(leftovers.waitingVolumes)}`,
    loadbalancers: `LoadBalancer Services left ${listText(lbServices.map((x) => `${x.metadata.namespace}/${x.metadata.name}`))}; Octavia load balancers left ${listText(leftovers.waitingLoadBalancers)}`,
  };
  if (hanging) return selfDestruct(p, 'DeorbitHanging', nowMs);

  const inUseDeletes = reportOnly ? [] : inUse.deletes;
  const { allowed: deletes, heldBack: deferred } = applyBudget([...inUseDeletes, ...plan, ...leftovers.retryDeletes], s.maxDeletesPerPass);
  p.cloudRetries = uncountUnsent(p.cloudRetries, retriesBefore, deferred);
  p.deletedServices = mergeSeen(
    p.deletedServices,
    deletes.filter((a) => a.kind === 'Service').map((a) => ({ namespace: a.namespace, name: a.name, uid: a.uid })),
  );
  events.push(...advanceSteps(p, finished, detail));
  if (match.ambiguous.length > 0) {
    events.push({
      type: 'Warning',
      reason: AMBIGUOUS_LB_REASON,
      message: `load balancer names carried by more than one load balancer prove nothing and are left alone: ${listText(match.ambiguous)}`,
    });
  }
  if (!isClusterNameDistinct(target.loadBalancerClusterName) && p.attempt === 1 && events.some((e) => e.reason === 'WaitingForDeorbitSnapshots')) {
    events.push({
      type: 'Warning',
      reason: UNPROVEN_LB_NAMES_REASON,
      message: `the load-balancer cluster name "${target.loadBalancerClusterName}" is the cloud controller's shared default: load balancers are matched by their annotated ID or legacy name only`,
    });
  }
  if (vols.retained.length > 0 && vols.retained.join() !== p.retainedVolumes.join()) {
    events.push({
      type: 'Warning',
      reason: RETAINED_VOLUMES_REASON,
      message: `not waiting for Cinder volumes that stay by design (Retain policy or unclaimed PV) ${listText(vols.retained)}`,
    });
  }
  p.retainedVolumes = vols.retained;
  const heldBack = deferred.length;
  if (p.step === 'done') {
    // The final check: load balancers made since the first attempt are not proven ours, but may be a re-creator's.
    p.createdDuring = (cloud.loadBalancers ?? [])
      .filter((lb) => lb.createdMs !== undefined && lb.createdMs >= p.startedMs! && !p.trackedLoadBalancers.includes(lb.id))
      .map((lb) => lb.id)
      .sort();
    if (p.createdDuring.length > 0) {
      events.push({
        type: 'Warning',
        reason: CREATED_DURING_REASON,
        message: `load balancers created in the project since deorbit started, not proven the cluster's and left alone: ${listText(p.createdDuring)}`,
      });
    }
    // Everything else is gone: what pods hold (Report) or the cloud kept failing to delete stays, named.
    const leftBehind: SelfDestructReason | undefined =
      reportOnly && p.claimsInUse.length > 0 ? 'ClaimsInUse' : p.failedDeletes.length > 0 ? 'CloudDeleteFailed' : undefined;
    if (leftBehind) {
      const d = selfDestruct(p, leftBehind, nowMs);
      return { ...d, deletes, deferred, heldBack, events: [...events, ...d.events], recordFirst };
    }
    p.finishedMs = nowMs;
    return decision(p, 'done', { deletes, events, heldBack, deferred, recordFirst });
  }
  if (nowMs - p.attemptStartedMs! >= s.attemptTimeoutMs) {
    const step = p.step as WaitStep;
    events.push(stepFailedEvent(step, `attempt ${p.attempt} ran out of time after ${Math.round(s.attemptTimeoutMs / 1000)} s; ${detail[step]}`));
    p.attempt += 1;
    p.attemptStartedMs = undefined;
    p.step = 'deleting';
    p.lastError = `attempt ${p.attempt - 1} timed out waiting for ${step}`;
    return decision(p, 'attempt-failed', { deletes, events, heldBack, deferred, recordFirst });
  }
  return decision(p, 'waiting', { deletes, events, requeueAfterMs: s.pollIntervalMs, heldBack, deferred, recordFirst });
}

/** Kept objects, as "Kind namespace/name", sorted: labelled ones, and snapshots of backup classes. */
function keptObjects(sat: SatelliteView, target: DeorbitTarget): string[] {
  const policy = target.policy;
  return [
    ...sat.pvcs.filter((x) => isKept(x, policy)).map((x) => keptName('PersistentVolumeClaim', x)),
    ...(sat.snapshots ?? []).filter((x) => isKept(x, policy, sat.snapshotClasses)).map((x) => keptName('VolumeSnapshot', x)),
    ...sat.services.filter((x) => isLoadBalancerService(x) && isKept(x, policy)).map((x) => keptName('Service', x)),
  ].sort();
}

function keptServiceKeys(sat: SatelliteView, policy: DeorbitTarget['policy']): Set<string> {
  return new Set(sat.services.filter((x) => isKept(x, policy)).map((x) => `${x.metadata.namespace}/${x.metadata.name}`));
}

function volumesOfClaims(claims: readonly string[], sat: SatelliteView, csiDrivers: readonly string[]): string[] {
  const byPv = new Map(sat.pvs.map((pv) => [pv.metadata.name, pv]));
  return sat.pvcs
    .filter((c) => claims.includes(`${c.metadata.namespace}/${c.metadata.name}`) && c.spec.volumeName)
    .map((c) => byPv.get(c.spec.volumeName!))
    .map((pv) => (pv ? cinderVolumeId(pv, csiDrivers) : undefined))
    .filter((id): id is string => id !== undefined);
}

/** Services seen so far, by namespace/name (a later UID replaces an earlier one), sorted. */
function mergeSeen(before: readonly SeenService[], now: readonly SeenService[]): SeenService[] {
  const byKey = new Map(before.map((x) => [`${x.namespace}/${x.name}`, x]));
  for (const x of now) byKey.set(`${x.namespace}/${x.name}`, { ...byKey.get(`${x.namespace}/${x.name}`), ...x });
  return [...byKey.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, v]) => v);
}

/** Moves through the wait steps in order; a step is over only when it and every earlier one are. */
function advanceSteps(p: DeorbitProgress, finished: Record<WaitStep, boolean>, detail: Record<WaitStep, string>): DeorbitEvent[] {
  const events: DeorbitEvent[] = [];
  if (p.step === 'deleting') {
    p.step = 'snapshots';
    events.push(waitingEvent('snapshots', detail.snapshots));
  }
  for (let i = WAIT_STEPS.indexOf(p.step as WaitStep); i >= 0 && i < WAIT_STEPS.length; i++) {
    const step = WAIT_STEPS[i]!;
    if (!WAIT_STEPS.slice(0, i + 1).every((st) => finished[st])) break;
    events.push(stepDoneEvent(step, `${step} cleaned up`));
    const next = WAIT_STEPS[i + 1];
    p.step = next ?? 'done';
    if (next) events.push(waitingEvent(next, detail[next]));
  }
  return events;
}

/** The cluster's snapshots, claims and LoadBalancer Services to delete, in that order; kept ones excepted. */
export function plannedDeletes(sat: SatelliteView, csiDrivers: readonly string[], policy?: DeorbitTarget['policy']): DeleteAction[] {
  const ref =
    (kind: DeleteAction['kind']) =>
    (o: { metadata: { namespace?: string; name: string; uid?: string } }): DeleteAction => ({
      kind,
      namespace: o.metadata.namespace ?? '',
      name: o.metadata.name,
      uid: o.metadata.uid,
    });
  return [
    ...judgeSnapshots(sat.snapshots ?? [], sat.snapshotClasses, csiDrivers)
      .cinder.filter((x) => !x.metadata.deletionTimestamp && !isKept(x, policy, sat.snapshotClasses))
      .map(ref('VolumeSnapshot')),
    ...claimsToDelete(sat.pvcs, sat.pvs, csiDrivers)
      .filter((x) => !isKept(x, policy))
      .map(ref('PersistentVolumeClaim')),
    ...sat.services.filter((x) => isLoadBalancerService(x) && !x.metadata.deletionTimestamp && !isKept(x, policy)).map(ref('Service')),
  ];
}

/** The annotated IDs a pass must look up by ID, whatever their names (the names decide afterwards). */
export const loadBalancerIdsToConfirm = (sat: SatelliteView, tracked: readonly string[]): string[] => [
  ...new Set([...tracked, ...annotatedLoadBalancerIds(sat.services)]),
];

function selfDestruct(p: DeorbitProgress, reason: SelfDestructReason, nowMs: number, note?: string): DeorbitDecision {
  p.step = 'self-destructed';
  p.selfDestructReason = reason;
  p.finishedMs = nowMs;
  const l = p.leftovers;
  const message =
    `failed to terminate gracefully (${reason}); left behind: volumes ${listText(l.volumes)}; load balancers ${listText(l.loadBalancers)}; ` +
    `floating IPs ${listText(l.floatingIps)}; retained volumes ${listText(p.retainedVolumes)}` +
    (p.kept.length ? `; kept ${listText(p.kept)}` : '') +
    (p.claimsInUse.length ? `; claims in use ${p.claimsInUse.join('; ')}` : '') +
    (note ? ` (${note})` : '');
  return decision(p, 'self-destruct', { events: [{ type: 'Warning', reason: SELF_DESTRUCT_REASON, message }] });
}
