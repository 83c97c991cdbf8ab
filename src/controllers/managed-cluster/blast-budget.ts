// Per-cluster, per-round budgets for destructive actions (pure): whatever one round may do of each
// kind, in decision order; the rest is held back to a later round and counted, so a wrong view can
// never do more than a few actions' worth of harm before someone looks. Every controller's budget
// goes through here: flight's per kind, routegc's route removals and deorbit's deletions per pass.

export type BudgetKind = 'reboot' | 'delete' | 'metadata' | 'rule' | 'route-removal';

export type Budgets = Readonly<Record<BudgetKind, number>>;

/**
 * Small on purpose: a healthy cluster rarely needs more, a wrong view is stopped early. "rule" covers
 * security-group rule changes and adding the group to an instance (the three pod-CIDR rules and two
 * instances in one round); "metadata" counts tag and metadata calls.
 */
export const DEFAULT_BUDGETS: Budgets = { reboot: 2, delete: 1, metadata: 10, rule: 5, 'route-removal': 3 };

export interface BudgetOutcome<T> {
  allowed: T[];
  heldBack: T[];
  /** Held back per kind (only kinds that held something back). */
  heldBackByKind: Partial<Record<BudgetKind, number>>;
}

/** One budget for every item: the first `limit` in order are allowed, the rest held back. A zero or negative limit allows none. */
export function applyBudget<T>(items: readonly T[], limit: number): { allowed: T[]; heldBack: T[] } {
  const n = Math.max(0, limit);
  return { allowed: items.slice(0, n), heldBack: items.slice(n) };
}

/**
 * Keeps items in order until their kind's budget is spent. Items without a kind are not budgeted.
 * A zero or negative budget allows none of that kind.
 */
export function applyBudgets<T>(items: readonly T[], kindOf: (item: T) => BudgetKind | undefined, budgets: Budgets): BudgetOutcome<T> {
  const used: Partial<Record<BudgetKind, number>> = {};
  const out: BudgetOutcome<T> = { allowed: [], heldBack: [], heldBackByKind: {} };
  for (const item of items) {
    const kind = kindOf(item);
    if (kind === undefined) {
      out.allowed.push(item);
      continue;
    }
    const n = used[kind] ?? 0;
    if (n < Math.max(0, budgets[kind])) {
      used[kind] = n + 1;
      out.allowed.push(item);
    } else {
      out.heldBack.push(item);
      out.heldBackByKind[kind] = (out.heldBackByKind[kind] ?? 0) + 1;
    }
  }
  return out;
}
