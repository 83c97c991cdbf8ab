// Test tiers that need something from the machine: root (network namespaces, nft), a real
// kube-apiserver, the real OpenStack. A tier that skips says so in one line of the run's output
// (a skipped test named after the tier, its skip message the reason and the fix); a tier that ran
// leaves a marker file, so that .ci/run can fail when a tier it set up was skipped after all.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

export type Tier = 'root' | 'kube-apiserver' | 'openstack-real';

/**
 * Marks a tier as having run: writes $KUBEWARD_TIER_MARKERS/<tier> when that variable is set
 * (.ci/run sets it), nothing otherwise. Called where the tier's real thing was reached (an
 * apiserver started, a real OpenStack session opened), not where a test merely asked for it.
 */
export function tierRan(tier: Tier, env: NodeJS.ProcessEnv = process.env): void {
  const dir = env.KUBEWARD_TIER_MARKERS;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, tier), `${process.pid} ${process.argv[1] ?? ''}\n`, { flag: 'a' });
}

/**
 * One line in the output when this file's tier cannot run: a skipped test named after the tier,
 * with the reason as its skip message. Call at module level, next to the tier's skip condition.
 */
export function noteTierSkip(tier: Tier, reason: string | false | undefined): void {
  if (reason) test(`[tier ${tier}] not run in this file`, { skip: reason }, () => {});
}
