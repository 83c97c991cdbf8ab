// Pure rules about the cloud objects deorbit waits for: which recorded Cinder volumes and proven
// Octavia load balancers are still there, which deorbit deletes again itself (a volume in
// error_deleting, or one its CSI driver left behind after its PV went; a load balancer in ERROR once
// its Service is gone), and which have failed often enough to be reported by ID and waited for no more.
import { DEFAULT_CLOUD_RETRIES, type CloudLoadBalancer, type CloudRetry, type CloudVolume, type DeleteAction, type DeorbitSettings } from './deorbit-types.ts';

/** Statuses in which a volume no longer being deleted by anyone needs deorbit's own delete. */
const ORPHANED_VOLUME_STATUSES = new Set(['available', 'error']);

export interface CloudLeftoverInput {
  nowMs: number;
  settings: Pick<DeorbitSettings, 'maxCloudRetries' | 'pollIntervalMs'>;
  /** Volume IDs recorded before their claims were deleted. */
  trackedVolumes: readonly string[];
  /** Volume IDs that existing PVs still keep waiting (claims deleted earlier, or never recorded). */
  pvWaits: readonly string[];
  volumes: readonly CloudVolume[];
  /** Volume IDs some PV of the cluster still names (its CSI driver is still at work on them). */
  pvVolumeIds: ReadonlySet<string>;
  /** The cluster's proven load balancers that still exist. */
  loadBalancers: readonly CloudLoadBalancer[];
  /** LoadBalancer Services are still there (their cloud controller deletes their load balancers). */
  lbServicesLeft: boolean;
  retries: readonly CloudRetry[];
}

export interface CloudLeftovers {
  waitingVolumes: string[];
  waitingLoadBalancers: string[];
  /** Deletes to send again, within the retry budget. */
  retryDeletes: DeleteAction[];
  /** Objects whose deletes are spent: reported by ID, no longer waited for. */
  failed: { id: string; kind: CloudRetry['kind']; message: string }[];
  retries: CloudRetry[];
}

export function judgeCloudLeftovers(i: CloudLeftoverInput): CloudLeftovers {
  const out: CloudLeftovers = { waitingVolumes: [], waitingLoadBalancers: [], retryDeletes: [], failed: [], retries: [] };
  const prior = new Map(i.retries.map((r) => [`${r.kind}/${r.id}`, r]));
  const volumes = new Map(i.volumes.map((v) => [v.id, v]));
  const judge = (kind: CloudRetry['kind'], id: string, status: string, needsDelete: boolean): void => {
    const r = prior.get(`${kind}/${id}`);
    if (!needsDelete) {
      (kind === 'volume' ? out.waitingVolumes : out.waitingLoadBalancers).push(id);
      if (r) out.retries.push(r);
      return;
    }
    const due = !r || i.nowMs - r.lastMs >= i.settings.pollIntervalMs;
    if (r && r.count >= (i.settings.maxCloudRetries ?? DEFAULT_CLOUD_RETRIES)) {
      out.retries.push(r);
      if (due) {
        const what = kind === 'volume' ? 'Cinder volume' : 'Octavia load balancer';
        out.failed.push({ id, kind, message: `${what} ${id} is still ${status} after ${r.count} deletes by deorbit; left in the cloud for an administrator` });
      } else {
        (kind === 'volume' ? out.waitingVolumes : out.waitingLoadBalancers).push(id);
      }
      return;
    }
    (kind === 'volume' ? out.waitingVolumes : out.waitingLoadBalancers).push(id);
    if (!due) {
      out.retries.push(r!);
      return;
    }
    out.retries.push({ id, kind, count: (r?.count ?? 0) + 1, lastMs: i.nowMs });
    out.retryDeletes.push({ kind: kind === 'volume' ? 'CinderVolume' : 'LoadBalancer', namespace: '', name: id });
  };
  for (const id of [...new Set([...i.trackedVolumes, ...i.pvWaits])].sort()) {
    const v = volumes.get(id);
    if (!v) continue; // Cinder answered 404 (listed without it, and a GET by ID found nothing)
    const orphaned = i.trackedVolumes.includes(id) && !i.pvVolumeIds.has(id) && ORPHANED_VOLUME_STATUSES.has(v.status);
    judge('volume', id, v.status, v.status === 'error_deleting' || orphaned);
  }
  for (const lb of [...i.loadBalancers].sort((a, b) => a.id.localeCompare(b.id))) {
    judge('loadbalancer', lb.id, lb.provisioningStatus, lb.provisioningStatus === 'ERROR' && !i.lbServicesLeft);
  }
  out.waitingVolumes.sort();
  out.waitingLoadBalancers.sort();
  return out;
}

/**
 * The retry records once some due deletes were not sent (held back by the pass's budget, or after
 * a failed delete ended the pass): each goes back to its record before this pass, so that only a
 * delete actually sent counts towards the ones after which deorbit gives up on an object.
 */
export function uncountUnsent(counted: readonly CloudRetry[], before: readonly CloudRetry[], unsent: readonly DeleteAction[]): CloudRetry[] {
  const key = (kind: CloudRetry['kind'], id: string): string => `${kind}/${id}`;
  const notSent = new Set(
    unsent.filter((a) => a.kind === 'CinderVolume' || a.kind === 'LoadBalancer').map((a) => key(a.kind === 'CinderVolume' ? 'volume' : 'loadbalancer', a.name)),
  );
  const prior = new Map(before.map((r) => [key(r.kind, r.id), r]));
  return counted.flatMap((r) => {
    const k = key(r.kind, r.id);
    if (!notSent.has(k)) return [r];
    const was = prior.get(k);
    return was ? [was] : [];
  });
}
