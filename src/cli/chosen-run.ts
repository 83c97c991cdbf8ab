// The run a parsed command chose. A mode's commander action only records it here and main() starts
// it once commander's parse has returned, so the command tree (every option, help text and parser)
// is garbage while the daemon runs instead of held by the action's frame. Its own file: main.ts
// imports it without loading what a mode's command carries (zod, the logger, the admin server).

let chosen: (() => Promise<number>) | undefined;

export function chooseRun(run: () => Promise<number>): void {
  chosen = run;
}

/** The run the last parse chose (once: it is cleared), or undefined (help, version, a one-shot command). */
export function takeChosenRun(): (() => Promise<number>) | undefined {
  const run = chosen;
  chosen = undefined;
  return run;
}
