// One deorbit pass, shared by the operator and the one-shot command: observe the cluster and the
// cloud, decide (pure), delete what the decision says in order (stopping at the first failure), and
// hand back the events and the new progress for the caller to record.
import { describeError } from '../../base/errors.ts';
import { KubeApiError } from '../../clients/kube/kube-api-error.ts';
import { OpenStackError } from '../../clients/openstack/openstack-error.ts';
import { decideDeorbit } from './decide-deorbit.ts';
import type { DeorbitCloud } from './deorbit-cloud.ts';
import { deletedEvent, deleteFailedEvent } from './deorbit-events.ts';
import type { DeorbitSatellite } from './deorbit-satellite.ts';
import type { DeorbitDecision, DeorbitEvent, DeorbitProgress, DeorbitSettings, DeorbitTarget, FailureKind, Observation } from './deorbit-types.ts';

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
  signal?: AbortSignal;
}

export interface DeorbitPassResult {
  decision: DeorbitDecision;
  /** Deletion events, then the decision's own, in the order they happened. */
  events: DeorbitEvent[];
  deleted: number;
}

export async function runDeorbitPass(input: DeorbitPassInput): Promise<DeorbitPassResult> {
  const observation = 'failure' in input.ports ? input.ports.failure : await observeDeorbit(input.ports);
  const decision = decideDeorbit({ ...input, observation });
  if (decision.deletes.length === 0 || 'failure' in input.ports) return { decision, events: decision.events, deleted: 0 };
  const exec = await executeDeletes(input.ports.satellite, decision);
  if (exec.error) {
    decision.progress.lastError = exec.error;
    decision.outcome = 'failed';
    decision.requeueAfterMs = undefined;
  }
  return { decision, events: [...exec.events, ...decision.events], deleted: exec.deleted };
}

export async function observeDeorbit(ports: DeorbitPorts): Promise<Observation> {
  let satellite;
  try {
    const [snapshots, pvcs, pvs, services] = await Promise.all([
      ports.satellite.listSnapshots(),
      ports.satellite.listPvcs(),
      ports.satellite.listPvs(),
      ports.satellite.listServices(),
    ]);
    satellite = { snapshots, pvcs, pvs, services };
  } catch (err) {
    return { ok: false, source: 'cluster-api', kind: failureKind(err), message: describeError(err) };
  }
  try {
    const [volumes, loadBalancers] = await Promise.all([ports.cloud.listVolumes(), ports.cloud.listLoadBalancers()]);
    // Floating IPs matter only for load balancers that are still there.
    const floatingIps = loadBalancers && loadBalancers.length > 0 ? await ports.cloud.listFloatingIps() : [];
    return { ok: true, satellite, cloud: { volumes, loadBalancers, floatingIps } };
  } catch (err) {
    return { ok: false, source: 'cloud', kind: failureKind(err), message: describeError(err) };
  }
}

async function executeDeletes(satellite: DeorbitSatellite, decision: DeorbitDecision): Promise<{ events: DeorbitEvent[]; deleted: number; error?: string }> {
  const events: DeorbitEvent[] = [];
  let deleted = 0;
  for (const action of decision.deletes) {
    try {
      if ((await satellite.delete(action)) === 'deleted') {
        deleted++;
        events.push(deletedEvent(action));
      }
    } catch (err) {
      events.push(deleteFailedEvent(action, describeError(err)));
      return { events, deleted, error: `deleting ${action.kind} ${action.namespace}/${action.name}: ${describeError(err)}` };
    }
  }
  return { events, deleted };
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
