// flight's ManagedCluster condition in operator mode (pure): one summary of the last round, built on
// the shared condition helper.
import { describeError } from '../../base/errors.ts';
import { clipMessage, type ConditionWish } from '../managed-cluster/cluster-conditions.ts';

export const FLIGHT_CONDITION = 'FlightHealthy';

/** What one flight round left behind, as far as the summary needs it. */
export interface FlightRoundSummary {
  done: { kind: string }[];
  failed: { action: { kind: string }; error: string }[];
  findings: { reason: string }[];
  nodeConditions: { type: string; status: string }[];
  /** Why the round did nothing destructive, when it refused. */
  refusal?: { code: string; message: string };
}

/** flight's summary: False when a repair failed, the round could not run, or it found what it cannot repair. */
export function flightConditions(outcome: { round: FlightRoundSummary } | { error: unknown }): ConditionWish[] {
  if ('error' in outcome)
    return [
      {
        type: FLIGHT_CONDITION,
        status: 'False',
        reason: 'RoundFailed',
        message: clipMessage(`the instance list could not be read, nothing was repaired: ${describeError(outcome.error)}`),
      },
    ];
  const r = outcome.round;
  const wish = (status: 'True' | 'False', reason: string, message: string): ConditionWish[] => [
    { type: FLIGHT_CONDITION, status, reason, message: clipMessage(message) },
  ];
  // An owner change is no doubtful view: it needs a person's adoption, so it has a reason of its own.
  if (r.refusal?.code === 'OwnerChanged') return wish('False', 'OwnerChanged', r.refusal.message);
  if (r.refusal) return wish('False', 'Refused', `no reboot, deletion, label or rule change (${r.refusal.code}): ${r.refusal.message}`);
  if (r.failed.length)
    return wish('False', 'RepairsFailed', `${r.failed.length} repair(s) failed: ${r.failed.map((f) => `${f.action.kind} (${f.error})`).join('; ')}`);
  const problems = countBy([
    ...r.findings.map((f) => f.reason),
    ...r.nodeConditions.filter((c) => c.status === 'True').map((c) => c.type.replace(/^kubeward\.io\//, '')),
  ]);
  if (problems.length) return wish('False', 'ProblemsFound', `found and not repaired: ${problems.join(', ')}`);
  if (r.done.length) return wish('True', 'Repaired', `repaired in the last round: ${countBy(r.done.map((a) => a.kind)).join(', ')}`);
  return wish('True', 'NothingToRepair', 'the last round found nothing to repair');
}

function countBy(items: string[]): string[] {
  const n = new Map<string, number>();
  for (const i of items) n.set(i, (n.get(i) ?? 0) + 1);
  return [...n].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => (v > 1 ? `${k} ×${v}` : k));
}
