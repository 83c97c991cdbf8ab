// The deorbit decision, pure: from what one pass observed and the progress so far, which objects to
// delete, which events to emit, whether to keep waiting, finish, or give up (self-destruct).
// Order (Kubernikus): delete snapshots → PVCs → LB Services; wait for snapshots, then Cinder
// volumes, then load balancers. Every pass re-checks everything, so a restart resumes anywhere.
// Safety: only what is proven the cluster's is deleted or waited for (Cinder-backed claims and
// snapshots, LoadBalancer Services, load balancers by exact identity); at most maxDeletesPerPass
// deletions per pass; an answer that cannot be read holds the pass and says why.
import {
  annotatedLoadBalancerIds,
  floatingIpsOf,
  isClusterNameDistinct,
  isLegacyVersion,
  isLoadBalancerService,
  matchLoadBalancers,
  seenLoadBalancerServices,
  servicesToDelete,
} from './load-balancer-rules.ts';
import { applyBudget } from '../managed-cluster/blast-budget.ts';
import { judgeSnapshots } from './snapshot-rules.ts';
import { claimsToDelete, judgeVolumes } from './volume-rules.ts';
import {
  AMBIGUOUS_LB_REASON,
  heldEvent,
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
} from './deorbit-types.ts';

export interface DeorbitInput {
  nowMs: number;
  settings: DeorbitSettings;
  target: DeorbitTarget;
  progress: DeorbitProgress;
  observation: Observation;
}

const WAIT_STEPS: readonly WaitStep[] = ['snapshots', 'volumes', 'loadbalancers'];

export function decideDeorbit(input: DeorbitInput): DeorbitDecision {
  const { nowMs, settings, target, observation: obs } = input;
  const p: DeorbitProgress = structuredClone(input.progress);
  if (p.step === 'done') return { deletes: [], events: [], progress: p, outcome: 'done', heldBack: 0, deferred: [] };
  if (p.step === 'self-destructed') return { deletes: [], events: [], progress: p, outcome: 'self-destruct', heldBack: 0, deferred: [] };
  if (p.attemptStartedMs === undefined) {
    p.attempt = Math.max(1, p.attempt);
    p.attemptStartedMs = nowMs;
  }
  // The hang timeout applies whatever failed, credentials and client construction included.
  if (nowMs - target.deletionStartedMs >= settings.hangTimeoutMs) return selfDestruct(p, 'DeorbitHanging', nowMs);
  if (!obs.ok) {
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
    return { deletes: [], events, progress: p, outcome: 'failed', heldBack: 0, deferred: [] };
  }
  p.apiFailingSinceMs = undefined;
  p.lastError = undefined;
  p.heldReason = undefined;
  return decideWithView(nowMs, settings, target, p, obs.satellite, obs.cloud);
}

function decideWithView(nowMs: number, s: DeorbitSettings, target: DeorbitTarget, p: DeorbitProgress, sat: SatelliteView, cloud: CloudView): DeorbitDecision {
  const planned = plannedDeletes(sat, s.csiDrivers);
  const { allowed: deletes, heldBack: deferred } = applyBudget(planned, s.maxDeletesPerPass);
  p.trackedLoadBalancers = [...new Set([...p.trackedLoadBalancers, ...annotatedLoadBalancerIds(sat.services)])].sort();
  p.seenServices = mergeSeen(p.seenServices, seenLoadBalancerServices(sat.services));
  const vols = judgeVolumes(sat.pvs, cloud.volumes, s.csiDrivers);
  const match = cloud.loadBalancers
    ? matchLoadBalancers(cloud.loadBalancers, target.loadBalancerClusterName, p.seenServices, p.trackedLoadBalancers)
    : { ours: [], ambiguous: [] };
  const lbs = match.ours;
  const lbServices = sat.services.filter(isLoadBalancerService);
  const cinderSnapshots = judgeSnapshots(sat.snapshots ?? [], sat.snapshotClasses, s.csiDrivers).cinder;
  // Before 1.17 nothing holds a Service until its load balancer is gone: the Kubernikus grace period stands in.
  const servicesSettled = lbServices.length === 0 || (isLegacyVersion(target.version) && nowMs >= target.deletionStartedMs + s.legacyServiceGraceMs);
  const finished: Record<WaitStep, boolean> = {
    snapshots: cinderSnapshots.length === 0,
    volumes: vols.waitingFor.length === 0,
    loadbalancers: servicesSettled && lbs.length === 0,
  };
  const fips = floatingIpsOf(lbs, cloud.floatingIps);
  p.remaining = {
    snapshots: cinderSnapshots.length,
    pvcs: planned.filter((d) => d.kind === 'PersistentVolumeClaim').length,
    services: lbServices.length,
    volumes: vols.waitingFor.length,
    loadBalancers: lbs.length,
  };
  p.leftovers = { volumes: vols.waitingFor, loadBalancers: lbs.map((lb) => lb.id).sort(), floatingIps: fips };
  const detail: Record<WaitStep, string> = {
    snapshots:
      sat.snapshots === undefined
        ? 'no VolumeSnapshot API in the cluster'
        : `Cinder VolumeSnapshots left ${listText(cinderSnapshots.map((x) => `${x.metadata.namespace}/${x.metadata.name}`))}`,
    volumes: `Cinder volumes left ${listText(vols.waitingFor)}`,
    loadbalancers: `LoadBalancer Services left ${listText(lbServices.map((x) => `${x.metadata.namespace}/${x.metadata.name}`))}; Octavia load balancers left ${listText(p.leftovers.loadBalancers)}`,
  };
  const events = advanceSteps(p, finished, detail);
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
    p.finishedMs = nowMs;
    return { deletes, events, progress: p, outcome: 'done', heldBack, deferred };
  }
  if (nowMs - p.attemptStartedMs! >= s.attemptTimeoutMs) {
    const step = p.step as WaitStep;
    events.push(stepFailedEvent(step, `attempt ${p.attempt} ran out of time after ${Math.round(s.attemptTimeoutMs / 1000)} s; ${detail[step]}`));
    p.attempt += 1;
    p.attemptStartedMs = undefined;
    p.step = 'deleting';
    p.lastError = `attempt ${p.attempt - 1} timed out waiting for ${step}`;
    return { deletes, events, progress: p, outcome: 'attempt-failed', heldBack, deferred };
  }
  return { deletes, events, progress: p, outcome: 'waiting', requeueAfterMs: s.pollIntervalMs, heldBack, deferred };
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

export function plannedDeletes(sat: SatelliteView, csiDrivers: readonly string[]): DeleteAction[] {
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
      .cinder.filter((x) => !x.metadata.deletionTimestamp)
      .map(ref('VolumeSnapshot')),
    ...claimsToDelete(sat.pvcs, sat.pvs, csiDrivers).map(ref('PersistentVolumeClaim')),
    ...servicesToDelete(sat.services).map(ref('Service')),
  ];
}

function selfDestruct(p: DeorbitProgress, reason: SelfDestructReason, nowMs: number): DeorbitDecision {
  p.step = 'self-destructed';
  p.selfDestructReason = reason;
  p.finishedMs = nowMs;
  const l = p.leftovers;
  const message =
    `failed to terminate gracefully (${reason}); left behind: volumes ${listText(l.volumes)}; load balancers ${listText(l.loadBalancers)}; ` +
    `floating IPs ${listText(l.floatingIps)}; retained volumes ${listText(p.retainedVolumes)}`;
  return {
    deletes: [],
    events: [{ type: 'Warning', reason: SELF_DESTRUCT_REASON, message }],
    progress: p,
    outcome: 'self-destruct',
    heldBack: 0,
    deferred: [],
  };
}
