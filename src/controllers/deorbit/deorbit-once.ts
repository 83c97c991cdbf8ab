// Single-cluster deorbit: the same passes as the operator, driven by a loop instead of a work queue,
// with progress printed as it goes. Ends with 0 when the cluster is clean, 1 when the time is up
// (or the cluster's API stayed unreachable) with the list of what is left. A dry run is one pass of
// the same decision with nothing sent: it prints what the real run would delete and wait for.
import type { Clock } from '../../base/clock.ts';
import { actionName, listText } from './deorbit-events.ts';
import { runDeorbitPass, type DeorbitPorts } from './deorbit-pass.ts';
import { backoffDelayMs } from '../runtime/backoff.ts';
import { INITIAL_PROGRESS, type DeorbitProgress, type DeorbitSettings, type DeorbitTarget, type SelfDestructReason } from './deorbit-types.ts';

export interface DeorbitOnceOptions {
  ports: DeorbitPorts;
  /** hangTimeoutMs is the command's --timeout. */
  settings: DeorbitSettings;
  target: DeorbitTarget;
  clock: Clock;
  print: (line: string) => void;
  signal?: AbortSignal;
}

export interface DeorbitOnceResult {
  code: 0 | 1;
  progress: DeorbitProgress;
}

export async function runDeorbitOnce(o: DeorbitOnceOptions): Promise<DeorbitOnceResult> {
  let progress = structuredClone(INITIAL_PROGRESS);
  let failures = 0;
  let lastSummary = '';
  const stamp = (): string => `[+${Math.round((o.clock.now() - o.target.deletionStartedMs) / 1000)}s]`;
  for (;;) {
    // The signal stops a pass between its deletes too (Ctrl-C), not only the wait between passes.
    const { decision, events } = await runDeorbitPass({
      nowMs: o.clock.now(),
      settings: o.settings,
      target: o.target,
      progress,
      ports: o.ports,
      signal: o.signal,
    });
    progress = decision.progress;
    for (const ev of events) o.print(`${stamp()} ${ev.type === 'Warning' ? 'WARNING ' : ''}${ev.reason}: ${ev.message}`);
    const r = progress.remaining;
    const summary = `step ${progress.step}, attempt ${progress.attempt}: snapshots ${r.snapshots}, LB services ${r.services}, volumes ${r.volumes}, load balancers ${r.loadBalancers}`;
    if (summary !== lastSummary && decision.outcome === 'waiting') o.print(`${stamp()} ${summary}`);
    lastSummary = summary;
    if (decision.outcome === 'done') {
      o.print(
        `${stamp()} done: the cluster's volumes and load balancers are gone${progress.retainedVolumes.length ? `; retained volumes ${listText(progress.retainedVolumes)}` : ''}`,
      );
      return { code: 0, progress };
    }
    if (decision.outcome === 'self-destruct') {
      const l = progress.leftovers;
      o.print(`${stamp()} gave up (${GIVE_UP_TEXT[progress.selfDestructReason ?? 'DeorbitHanging']}); left over:`);
      o.print(`  volumes ${listText(l.volumes)}`);
      o.print(`  load balancers ${listText(l.loadBalancers)}`);
      o.print(`  floating IPs ${listText(l.floatingIps)}`);
      if (progress.retainedVolumes.length) o.print(`  retained volumes ${listText(progress.retainedVolumes)}`);
      if (progress.lastError) o.print(`  last error: ${progress.lastError}`);
      return { code: 1, progress };
    }
    let waitMs = decision.requeueAfterMs ?? o.settings.pollIntervalMs;
    if (decision.outcome === 'failed' || decision.outcome === 'attempt-failed') {
      failures++;
      // Errors retry sooner than the poll at first, never later than it.
      waitMs = Math.min(o.settings.pollIntervalMs, backoffDelayMs(failures, { baseMs: 1000, maxMs: o.settings.pollIntervalMs }));
      if (progress.lastError) o.print(`${stamp()} retrying in ${Math.round(waitMs / 1000)}s after: ${progress.lastError}`);
    } else {
      failures = 0;
    }
    await o.clock.sleep(waitMs, o.signal);
  }
}

const GIVE_UP_TEXT: Record<SelfDestructReason, string> = {
  DeorbitHanging: 'timeout',
  APIUnavailable: 'cluster API unavailable',
  CloudDeleteFailed: 'the cloud kept failing to delete some of it',
  ClaimsInUse: 'pods still mount claims',
};

/**
 * One pass of the real run's decision with nothing deleted. Exit 0 when it could judge the cluster
 * (whatever it would delete), 1 when it could not (the reason is printed; the real run would hold).
 */
export async function runDeorbitDryRun(o: DeorbitOnceOptions): Promise<DeorbitOnceResult> {
  const { decision, wouldDelete } = await runDeorbitPass({
    nowMs: o.clock.now(),
    settings: o.settings,
    target: o.target,
    progress: structuredClone(INITIAL_PROGRESS),
    ports: o.ports,
    dryRun: true,
    signal: o.signal,
  });
  const p = decision.progress;
  o.print('dry run: nothing is deleted; this is what `kubeward deorbit` would do with the same flags');
  if (decision.outcome === 'failed') {
    o.print(`would hold: ${p.heldReason ? `${p.heldReason}: ` : ''}${p.lastError ?? 'the cluster or the cloud could not be read'}`);
    return { code: 1, progress: p };
  }
  o.print(`would delete in the first pass (budget ${o.settings.maxDeletesPerPass} per pass): ${wouldDelete.length}`);
  for (const a of wouldDelete) o.print(`  delete ${actionName(a)}`);
  if (decision.deferred.length > 0) {
    o.print(`would delete in later passes (held back by the budget): ${decision.deferred.length}`);
    for (const a of decision.deferred) o.print(`  delete ${actionName(a)}`);
  }
  const l = p.leftovers;
  o.print(
    `would wait for: Cinder volumes ${listText(l.volumes)}; load balancers ${listText(l.loadBalancers)}; floating IPs on them ${listText(l.floatingIps)}`,
  );
  if (p.retainedVolumes.length) o.print(`would leave (Retain or unclaimed): volumes ${listText(p.retainedVolumes)}`);
  for (const ev of decision.events.filter((e) => e.type === 'Warning')) o.print(`note ${ev.reason}: ${ev.message}`);
  return { code: 0, progress: p };
}
