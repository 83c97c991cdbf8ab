// Turns a one-shot command's declaration (kubeward plan's subcommands, check-cert) into a commander
// command: --config and the common flags are accepted as in every mode (there is no admin
// listener), the declared flags are added as a mode's are, bad usage prints one line per problem and
// exits 2, a failure one line and exits 1.
import { Command } from 'commander';
import type { core } from 'zod/mini';
import { UsageError, describeError, isKubewardError } from '../base/errors.ts';
import type { RawConfig } from '../config/load-config.ts';
import type { ModeConfig, OneShotDeclaration } from '../config/mode-declaration.ts';
import { addFlag, loadModeConfig, type ModeSpec } from './mode-command.ts';

/** Output is for stdout; warnings and problems go to stderr. Injected so tests can capture them. */
export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}
export const processIo: Io = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) };

export function oneShotCommand<F extends core.$ZodShape>(
  decl: OneShotDeclaration<F>,
  run: (config: ModeConfig<F>, io: Io) => Promise<number>,
  io: Io = processIo,
): Command {
  const { path } = decl;
  const name = path.split(' ').pop()!;
  const cmd = new Command(name).description(decl.summary).allowExcessArguments(false);
  cmd.option('--config <file>', 'YAML file with any of the keys below (camelCase); flags override it');
  cmd.option('--log-format <json|text>', 'accepted as in every mode; this command prints results, not logs');
  cmd.option('--log-level <level>', 'accepted as in every mode');
  cmd.option('--admin-address <off>', 'one-shot command: there is no admin listener (default: off)');
  for (const f of decl.flags) addFlag(cmd, f);
  if (decl.helpAfter) cmd.addHelpText('after', '\n' + decl.helpAfter.trimEnd());
  if (decl.positional) cmd.argument(`[${decl.positional.name}]`, decl.positional.help);
  cmd.action(async (...params: unknown[]) => {
    const c = params[params.length - 1] as Command;
    const opts = c.opts() as RawConfig;
    if (decl.positional !== undefined && c.args[0] !== undefined) opts[decl.positional.key] = c.args[0];
    const modeSpec: ModeSpec<F> = { name, summary: decl.summary, flags: [], fields: decl.fields, adminPort: null, check: decl.check, run: async () => 0 };
    try {
      const config = await loadModeConfig(modeSpec, opts, 'off');
      if (config.adminAddress !== 'off') throw new UsageError('--admin-address: this is a one-shot command without an admin listener; leave it off');
      process.exitCode = await run(config, io);
    } catch (err) {
      if (isKubewardError(err, 'E_USAGE')) {
        for (const line of err.message.split('\n')) io.err(`kubeward ${path}: ${line}\n`);
        process.exitCode = 2;
        return;
      }
      io.err(`kubeward ${path}: ${describeError(err)}\n`);
      process.exitCode = 1;
    }
  });
  return cmd;
}
