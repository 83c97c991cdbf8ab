// One deorbit pass, shared by the operator and the one-shot command: observe the cluster and the
// cloud, decide (pure), record the progress first when the decision asks (new cloud IDs to wait
// for), delete what the decision says in order (stopping at the first failure in the cluster; a
// cloud delete that fails is reported and counted, the next poll judges it again), and hand back
// the events and the new progress for the caller to record. A dry run makes the same decision and
// sends nothing; the signal is the leader's fence, checked before every deletion.
import { KubeApiError } from '../../clients/kube/kube-api-error.ts';
import { OpenStackBodyError } from '../../clients/openstack/response-body.ts';
import { describeError } from '../../base/errors.ts';
import { OpenStackError } from '../../clients/openstack/openstack-error.ts';
import type { PersistentVolume } from '../../clients/kube/kube-types.ts';
import { decideDeorbit, loadBalancerIdsToConfirm } from './decide-deorbit.ts';
import { cinderVolumeId } from './volume-rules.ts';
import { isHeldClaim } from './in-use-rules.ts';
import { uncountUnsent } from './cloud-retry-rules.ts';
import type { DeorbitCloud } from './deorbit-cloud.ts';
import { actionName, deletedEvent, deleteFailedEvent } from './deorbit-events.ts';
import type { DeorbitSatellite } from './deorbit-satellite.ts';
import type {
  ClusterIdentity,
  DeleteAction,
  DeorbitDecision,
  DeorbitEvent,
  DeorbitProgress,
  DeorbitSettings,
  DeorbitTarget,
  FailureKind,
  Observation,
  RefusalReason,
  SatelliteView,
  StopReason,
} from './deorbit-types.ts';

export interface DeorbitPorts {
  satellite: DeorbitSatellite;
  cloud: DeorbitCloud;
}

export interface DeorbitPassInput {
  nowMs: number;
  settings: DeorbitSettings;
  target: DeorbitTarget;
  progress: DeorbitProgress;
  /** The clients, or why they could not be made (a missing Secret, a bad clouds.yaml...). */
  ports: DeorbitPorts | { failure: Observation & { ok: false } };
  /** The leader's fence (or a shutdown): once aborted, no further deletion is sent and the pass throws. */
  signal?: AbortSignal;
  /** Decide as the real run would, delete nothing; the deletions are in `wouldDelete`. */
  dryRun?: boolean;
  /** The identity recorded at adoption, and the live ManagedClusters that record the same (the operator's). */
  pinned?: ClusterIdentity;
  twins?: (seen: ClusterIdentity) => Promise<string[]>;
  /** Records progress before the deletions, when the decision has new cloud IDs to wait for (the operator's status). */
  recordFirst?: (progress: DeorbitProgress) => Promise<void>;
}

export interface DeorbitPassResult {
  decision: DeorbitDecision;
  /** Deletion events, then the decision's own, in the order they happened. */
  events: DeorbitEvent[];
  deleted: number;
  /** Dry run: what the real run would have deleted in this pass (the decision's deletions, in order). */
  wouldDelete: DeleteAction[];
}

export async function runDeorbitPass(input: DeorbitPassInput): Promise<DeorbitPassResult> {
  const observation =
    'failure' in input.ports
      ? input.ports.failure
      : await observeDeorbit(input.ports, {
          csiDrivers: input.settings.csiDrivers,
          knownLoadBalancers: input.progress.trackedLoadBalancers,
          knownVolumes: input.progress.trackedVolumes,
        });
  const seen = observation.ok ? observation.satellite.identity : undefined;
  const twins = seen && input.twins ? await input.twins(seen) : [];
  const decision = decideDeorbit({ ...input, observation, twins });
  const metrics = input.settings.metrics;
  if (!observation.ok && observation.refusal) metrics?.refused(observation.refusal);
  // A pass that could read everything but refused to act (another cluster, a twin, a re-creator).
  const stopped = decision.progress.heldReason;
  if (observation.ok && stopped && STOP_REASONS.has(stopped)) metrics?.refused(stopped);
  metrics?.heldBack(decision.heldBack);
  if (input.dryRun) return { decision, events: decision.events, deleted: 0, wouldDelete: decision.deletes };
  if (decision.deletes.length === 0 || 'failure' in input.ports) return { decision, events: decision.events, deleted: 0, wouldDelete: [] };
  // The IDs to wait for are kept before anything is deleted, so that a restart still knows them.
  if (decision.recordFirst) await input.recordFirst?.(decision.recordFirst);
  const exec = await executeDeletes(input.ports, decision, input.signal);
  if (exec.error) {
    // The deletes after the failed one were not sent: their cloud retries do not count.
    decision.progress.cloudRetries = uncountUnsent(decision.progress.cloudRetries, input.progress.cloudRetries, decision.deletes.slice(exec.attempted));
    decision.progress.lastError = exec.error;
    decision.outcome = 'failed';
    decision.requeueAfterMs = undefined;
  }
  return { decision, events: [...exec.events, ...decision.events], deleted: exec.deleted, wouldDelete: [] };
}

/** What the pass already knows that must be confirmed one by one when a list leaves it out. */
export interface ObserveHints {
  csiDrivers: readonly string[];
  /** Load balancer IDs learned from annotations on earlier passes. */
  knownLoadBalancers: readonly string[];
  /** Cinder volume IDs recorded before their claims were deleted: asked for by ID until 404. */
  knownVolumes?: readonly string[];
}

export async function observeDeorbit(ports: DeorbitPorts, hints: ObserveHints = { csiDrivers: [], knownLoadBalancers: [] }): Promise<Observation> {
  let satellite: SatelliteView;
  try {
    const [snapshots, snapshotClasses, pvcs, pvs, services, identity] = await Promise.all([
      ports.satellite.listSnapshots(),
      ports.satellite.listSnapshotClasses(),
      ports.satellite.listPvcs(),
      ports.satellite.listPvs(),
      ports.satellite.listServices(),
      ports.satellite.identity?.(),
    ]);
    satellite = { snapshots, snapshotClasses, pvcs, pvs, services, identity };
    // Pods only matter while a claim is held by its protection finalizer: read them only then.
    if (pvcs.some(isHeldClaim) && ports.satellite.listPods) {
      const [pods, replicaSets] = await Promise.all([ports.satellite.listPods(), ports.satellite.listReplicaSets?.() ?? Promise.resolve([])]);
      satellite.pods = pods;
      satellite.replicaSets = replicaSets;
    }
  } catch (err) {
    return { ok: false, source: 'cluster-api', kind: failureKind(err), message: describeError(err), refusal: refusalOf(err) };
  }
  try {
    const [listedVolumes, listedLoadBalancers] = await Promise.all([ports.cloud.listVolumes(), ports.cloud.listLoadBalancers()]);
    const volumeIds = [...new Set([...volumeIdsOf(satellite.pvs, hints.csiDrivers), ...(hints.knownVolumes ?? [])])];
    const volumes = await confirmAbsent(listedVolumes, volumeIds, (id) => ports.cloud.getVolume(id));
    const lbIds = loadBalancerIdsToConfirm(satellite, hints.knownLoadBalancers);
    const loadBalancers = listedLoadBalancers && (await confirmAbsent(listedLoadBalancers, lbIds, (id) => ports.cloud.getLoadBalancer(id)));
    // Floating IPs matter only for load balancers that are still there.
    const floatingIps = loadBalancers && loadBalancers.length > 0 ? await ports.cloud.listFloatingIps() : [];
    return { ok: true, satellite, cloud: { volumes, loadBalancers, floatingIps } };
  } catch (err) {
    return { ok: false, source: 'cloud', kind: failureKind(err), message: describeError(err), refusal: refusalOf(err) };
  }
}

/** The Cinder volume IDs the cluster's PVs name (only these can keep deorbit waiting). */
function volumeIdsOf(pvs: PersistentVolume[], csiDrivers: readonly string[]): string[] {
  return [...new Set(pvs.map((pv) => cinderVolumeId(pv, csiDrivers)).filter((id): id is string => id !== undefined))];
}

/**
 * The listed objects plus those of `ids` the list left out but that a GET by ID still finds: only a
 * 404 proves an object gone. A few GETs at a time, so a cluster with many tracked IDs does not
 * flood the service.
 */
async function confirmAbsent<T extends { id: string }>(listed: T[], ids: readonly string[], get: (id: string) => Promise<T | undefined>): Promise<T[]> {
  const have = new Set(listed.map((x) => x.id));
  const missing = ids.filter((id) => !have.has(id));
  const found: T[] = [];
  for (let i = 0; i < missing.length; i += CONFIRM_CONCURRENCY) {
    const batch = await Promise.all(missing.slice(i, i + CONFIRM_CONCURRENCY).map((id) => get(id)));
    for (const x of batch) if (x !== undefined) found.push(x);
  }
  return [...listed, ...found];
}

const CONFIRM_CONCURRENCY = 5;

/** An answer that was there but unreadable (not an outage): the pass holds and names it. */
export function refusalOf(err: unknown): RefusalReason | undefined {
  if (err instanceof OpenStackBodyError) return 'CloudAnswerUnreadable';
  if ((err instanceof KubeApiError && err.reason === 'UnexpectedBody') || err instanceof SyntaxError) return 'ClusterAnswerUnreadable';
  return undefined;
}

const STOP_REASONS = new Set<string>(['ClusterIdentityChanged', 'ClusterIdentityConflict', 'ServiceRecreated'] satisfies StopReason[]);

const isCloudAction = (a: DeleteAction): boolean => a.kind === 'CinderVolume' || a.kind === 'LoadBalancer';

async function executeDeletes(
  ports: DeorbitPorts,
  decision: DeorbitDecision,
  fence?: AbortSignal,
): Promise<{ events: DeorbitEvent[]; deleted: number; attempted: number; error?: string }> {
  const events: DeorbitEvent[] = [];
  let deleted = 0;
  let attempted = 0;
  for (const action of decision.deletes) {
    // The fence fell (leadership lost, shutdown): stop here, record nothing; another replica may lead.
    fence?.throwIfAborted();
    attempted++;
    try {
      const outcome = isCloudAction(action)
        ? await (action.kind === 'CinderVolume' ? ports.cloud.deleteVolume(action.name, fence) : ports.cloud.deleteLoadBalancer(action.name, fence))
        : await ports.satellite.delete(action, fence);
      if (outcome === 'deleted') {
        deleted++;
        events.push(deletedEvent(action));
      }
    } catch (err) {
      if (fence?.aborted) throw fence.reason;
      events.push(deleteFailedEvent(action, describeError(err)));
      // A cloud refusal (a volume in error_deleting) is one of the counted retries: go on with the rest.
      if (isCloudAction(action)) continue;
      return { events, deleted, attempted, error: `deleting ${actionName(action)}: ${describeError(err)}` };
    }
  }
  return { events, deleted, attempted };
}

/** Unavailable = no answer, timeouts, 5xx, 429; unauthorized = 401/403. */
export function failureKind(err: unknown): FailureKind {
  if (err instanceof KubeApiError) return err.kind === 'unavailable' ? 'unavailable' : err.kind === 'unauthorized' ? 'unauthorized' : 'other';
  if (err instanceof OpenStackError) {
    const st = err.status;
    if (st === undefined || st >= 500 || st === 429) return 'unavailable';
    if (st === 401 || st === 403) return 'unauthorized';
  }
  return 'other';
}
