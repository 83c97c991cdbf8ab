// kubeward flight's output: the lines a --once round prints, and the last round as /status shows it.
import { describeAction } from './flight-action-text.ts';
import type { FlightRoundResult } from './flight-round.ts';

/** A --once round as lines for people. */
export function summary(r: FlightRoundResult, dryRun: boolean): string {
  const lines = [
    ...(dryRun ? r.plan.actions.map((a) => `would ${describeAction(a)}`) : r.done.map((a) => `done: ${describeAction(a)}`)),
    ...r.failed.map((f) => `failed: ${describeAction(f.action)}: ${f.error}`),
    ...(r.plan.refusal ? [`refused (${r.plan.refusal.code}): ${r.plan.refusal.message}`] : []),
    ...r.plan.heldBack.map((a) => `held back by the budget: ${describeAction(a)}`),
    ...r.plan.findings.map((f) => `found: ${f.reason}: ${f.message}`),
    ...r.plan.conditions.filter((c) => c.status === 'True').map((c) => `node ${c.node}: ${c.type} ${c.reason}: ${c.message}`),
  ];
  return lines.length ? lines.join('\n') : 'nothing to repair';
}

/** The last round as /status shows it. */
export function roundStatus(last: FlightRoundResult) {
  return { done: last.done.map(describeAction), failed: last.failed.map((f) => `${describeAction(f.action)}: ${f.error}`), findings: last.plan.findings };
}
