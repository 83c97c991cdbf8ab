// kubeward's entry point: one program, one subcommand per mode. Each mode's composition root is
// src/cli/<mode>.ts; this file only lists them and turns commander's errors into exit code 2.
import { Command, CommanderError } from 'commander';
import { takeChosenRun } from './chosen-run.ts';
import { modeCommands } from './modes.ts';
// A JSON import, so that the production bundle (npm run build) carries the version inline.
import pkg from '../../package.json' with { type: 'json' };

/** The program with every mode, or only the one about to run (see modes.ts). */
export async function buildProgram(onlyMode?: string): Promise<Command> {
  const program = new Command('kubeward')
    .description('Keeps the Kubernetes API reachable and the cloud network under a cluster honest.')
    .version(pkg.version, '--version', 'print the version and exit')
    .helpCommand(false)
    .showSuggestionAfterError(true)
    .addHelpText('after', '\nRun "kubeward <mode> --help" for the flags of a mode. Exit codes: 0 done, 1 failed, 2 bad usage or config.');
  for (const cmd of await modeCommands(onlyMode)) program.addCommand(cmd);
  applyExitOverride(program);
  return program;
}

function applyExitOverride(cmd: Command): void {
  cmd.exitOverride();
  cmd.configureOutput({ writeErr: () => {} });
  for (const sub of cmd.commands) applyExitOverride(sub);
}

/** commander's "error: unknown option '--x'\n(Did you mean --y?)" as one line, with the command's name. */
export function usageLine(err: CommanderError, commandPath: string): string {
  const text = err.message.replace(/^error: /, '').replace(/\s*\n\s*/g, ' ');
  return `${commandPath}: ${text}; see "${commandPath} --help"`;
}

export async function main(argv: string[]): Promise<void> {
  const run = await parseArguments(argv);
  // Outside commander's frame: nothing of the command tree stays reachable while a daemon runs.
  if (run) process.exitCode = await run();
}

/** Parses argv; returns the mode's run (a daemon or `demo`), or undefined when the parse did the work (help, one-shot commands) or failed. */
async function parseArguments(argv: string[]): Promise<(() => Promise<number>) | undefined> {
  const program = await buildProgram(argv[0]);
  if (argv.length === 0) {
    // No mode: nothing to do is a usage error, not success (a unit with a typo'd ExecStart).
    process.stderr.write(program.helpInformation() + '\nkubeward: no mode given; see the modes above\n');
    process.exitCode = 2;
    return undefined;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return takeChosenRun(program);
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') {
      process.exitCode = 0;
      return undefined;
    }
    if (err.code === 'commander.executeSubCommandAsync') throw err;
    const sub = argv.find((a) => !a.startsWith('-'));
    const path = sub && program.commands.some((c) => c.name() === sub) ? `kubeward ${sub}` : 'kubeward';
    process.stderr.write(usageLine(err, path) + '\n');
    process.exitCode = 2;
    return undefined;
  }
}

if (import.meta.main) {
  // `kubeward watch --help | head` closes the pipe early; that is not an error.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  await main(process.argv.slice(2));
}
