// The deorbit decision, pure: from what one pass observed and the progress so far, which objects to
// delete, which events to emit, whether to keep waiting, finish, or give up (self-destruct).
// Order (Kubernikus): delete snapshots → PVCs → LB Services; wait for snapshots, then Cinder
// volumes, then load balancers. Every pass re-checks everything, so a restart resumes anywhere.
import { isLegacyVersion, annotatedLoadBalancerIds, clusterLoadBalancers, floatingIpsOf, isLoadBalancerService, servicesToDelete } from './load-balancer-rules.ts';
import { claimsToDelete, judgeVolumes } from './volume-rules.ts';
import {
  listText, RETAINED_VOLUMES_REASON, SELF_DESTRUCT_REASON, stepDoneEvent, stepFailedEvent, waitingEvent, type WaitStep,
} from './deorbit-events.ts';
import type {
  CloudView, DeleteAction, DeorbitDecision, DeorbitEvent, DeorbitProgress, DeorbitSettings, DeorbitTarget, Observation, SatelliteView, SelfDestructReason,
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
  if (p.step === 'done') return { deletes: [], events: [], progress: p, outcome: 'done' };
  if (p.step === 'self-destructed') return { deletes: [], events: [], progress: p, outcome: 'self-destruct' };
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
    return { deletes: [], events: [], progress: p, outcome: 'failed' };
  }
  p.apiFailingSinceMs = undefined;
  p.lastError = undefined;
  return decideWithView(nowMs, settings, target, p, obs.satellite, obs.cloud);
}

function decideWithView(nowMs: number, s: DeorbitSettings, target: DeorbitTarget, p: DeorbitProgress, sat: SatelliteView, cloud: CloudView): DeorbitDecision {
  const deletes = plannedDeletes(sat, s.csiDrivers);
  p.trackedLoadBalancers = [...new Set([...p.trackedLoadBalancers, ...annotatedLoadBalancerIds(sat.services)])].sort();
  const vols = judgeVolumes(sat.pvs, cloud.volumes, s.csiDrivers);
  const lbs = cloud.loadBalancers ? clusterLoadBalancers(cloud.loadBalancers, target.loadBalancerClusterName, p.trackedLoadBalancers) : [];
  const lbServices = sat.services.filter(isLoadBalancerService);
  // Before 1.17 nothing holds a Service until its load balancer is gone: the Kubernikus grace period stands in.
  const servicesSettled = lbServices.length === 0 || (isLegacyVersion(target.version) && nowMs >= target.deletionStartedMs + s.legacyServiceGraceMs);
  const finished: Record<WaitStep, boolean> = {
    snapshots: (sat.snapshots ?? []).length === 0,
    volumes: vols.waitingFor.length === 0,
    loadbalancers: servicesSettled && lbs.length === 0,
  };
  const fips = floatingIpsOf(lbs, cloud.floatingIps);
  p.remaining = {
    snapshots: (sat.snapshots ?? []).length,
    pvcs: deletes.filter((d) => d.kind === 'PersistentVolumeClaim').length,
    services: lbServices.length,
    volumes: vols.waitingFor.length,
    loadBalancers: lbs.length,
  };
  p.leftovers = { volumes: vols.waitingFor, loadBalancers: lbs.map((lb) => lb.id).sort(), floatingIps: fips };
  const detail: Record<WaitStep, string> = {
    snapshots: sat.snapshots === undefined ? 'no VolumeSnapshot API in the cluster' : `VolumeSnapshots left ${listText(sat.snapshots.map((x) => `${x.metadata.namespace}/${x.metadata.name}`))}`,
    volumes: `Cinder volumes left ${listText(vols.waitingFor)}`,
    loadbalancers: `LoadBalancer Services left ${listText(lbServices.map((x) => `${x.metadata.namespace}/${x.metadata.name}`))}; Octavia load balancers left ${listText(p.leftovers.loadBalancers)}`,
  };
  const events = advanceSteps(p, finished, detail);
  if (vols.retained.length > 0 && vols.retained.join() !== p.retainedVolumes.join()) {
    events.push({ type: 'Warning', reason: RETAINED_VOLUMES_REASON, message: `not waiting for Cinder volumes that stay by design (Retain policy or unclaimed PV) ${listText(vols.retained)}` });
  }
  p.retainedVolumes = vols.retained;
  if (p.step === 'done') {
    p.finishedMs = nowMs;
    return { deletes, events, progress: p, outcome: 'done' };
  }
  if (nowMs - p.attemptStartedMs! >= s.attemptTimeoutMs) {
    const step = p.step as WaitStep;
    events.push(stepFailedEvent(step, `attempt ${p.attempt} ran out of time after ${Math.round(s.attemptTimeoutMs / 1000)} s; ${detail[step]}`));
    p.attempt += 1;
    p.attemptStartedMs = undefined;
    p.step = 'deleting';
    p.lastError = `attempt ${p.attempt - 1} timed out waiting for ${step}`;
    return { deletes, events, progress: p, outcome: 'attempt-failed' };
  }
  return { deletes, events, progress: p, outcome: 'waiting', requeueAfterMs: s.pollIntervalMs };
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
  const ref = (kind: DeleteAction['kind']) => (o: { metadata: { namespace?: string; name: string; uid?: string } }): DeleteAction => ({
    kind,
    namespace: o.metadata.namespace ?? '',
    name: o.metadata.name,
    uid: o.metadata.uid,
  });
  return [
    ...(sat.snapshots ?? []).filter((x) => !x.metadata.deletionTimestamp).map(ref('VolumeSnapshot')),
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
  return { deletes: [], events: [{ type: 'Warning', reason: SELF_DESTRUCT_REASON, message }], progress: p, outcome: 'self-destruct' };
}
