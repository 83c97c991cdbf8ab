// The run a parsed command chose. A mode's commander action only records it on its own command and
// main() takes it from the program once commander's parse has returned, so the command tree (every
// option, help text and parser) is garbage while the daemon runs instead of held by the action's
// frame. Kept on the command, not in this module: each parse has its own program. Its own file:
// main.ts imports it without loading what a mode's command carries (zod, the logger, the admin server).
import type { Command } from 'commander';

type Run = () => Promise<number>;

const CHOSEN = Symbol('kubeward chosen run');

type Chosen = Command & { [CHOSEN]?: Run };

/** Records `run` as what the parse of `command` chose. */
export function chooseRun(command: Command, run: Run): void {
  (command as Chosen)[CHOSEN] = run;
}

/** The run a mode of `program` chose in the last parse (once: it is cleared), or undefined (help, version, a one-shot command). */
export function takeChosenRun(program: Command): Run | undefined {
  for (const command of program.commands as Chosen[]) {
    const run = command[CHOSEN];
    if (run === undefined) continue;
    command[CHOSEN] = undefined;
    return run;
  }
  return undefined;
}
