// The demo's script: what happens to which stand-in, and when, as fractions of the run. Pure.

export type DemoAction = 'kill' | 'restart' | 'fail-readyz' | 'hang-readyz' | 'heal-readyz';

export interface DemoEvent {
  atMs: number;
  target: number; // index of the stand-in
  action: DemoAction;
  /** What a person watching should understand. */
  says: string;
}

const SCRIPT: readonly { at: number; target: number; action: DemoAction; says: string }[] = [
  { at: 0.12, target: 0, action: 'kill', says: 'apiserver-1 is killed (connections reset, port closed)' },
  { at: 0.3, target: 1, action: 'fail-readyz', says: 'apiserver-2 starts a graceful shutdown (/readyz 503, still serving)' },
  { at: 0.45, target: 0, action: 'restart', says: 'apiserver-1 comes back' },
  { at: 0.55, target: 2, action: 'hang-readyz', says: 'apiserver-3 hangs (/readyz never answers)' },
  { at: 0.7, target: 2, action: 'heal-readyz', says: 'apiserver-3 answers again' },
  { at: 0.75, target: 1, action: 'heal-readyz', says: 'apiserver-2 finished restarting (/readyz 200)' },
];

export function demoScenario(durationMs: number): DemoEvent[] {
  return SCRIPT.map((s) => ({ atMs: Math.round(s.at * durationMs), target: s.target, action: s.action, says: s.says }));
}

/** Whether an action should make the proxy take the upstream out (and so is timed). */
export function expectsEjection(action: DemoAction): boolean {
  return action === 'kill' || action === 'fail-readyz' || action === 'hang-readyz';
}
