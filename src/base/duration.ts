// Durations as operators write them: "500ms", "2s", "1m30s", "1h". Parsed once at the edge into milliseconds.

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/**
 * The longest delay a Node timer honours: setTimeout with more than 2^31-1 ms fires after 1 ms
 * (a TimeoutOverflowWarning), which turned "--interval 1000h" into a busy loop. No accepted duration
 * may exceed it.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/gy;

/** Parses a duration; returns undefined for anything that is not one (the caller names the field). */
export function parseDuration(text: string): number | undefined {
  const s = text.trim();
  if (s === '') return undefined;
  if (s === '0') return 0;
  PART.lastIndex = 0;
  let total = 0;
  let end = 0;
  for (let m = PART.exec(s); m !== null; m = PART.exec(s)) {
    total += Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
    end = PART.lastIndex;
  }
  if (end !== s.length || !Number.isFinite(total)) return undefined;
  return Math.round(total);
}

export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
