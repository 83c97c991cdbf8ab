// What a mode declares about its settings, apart from how it runs: its flags (with help text), the
// zod fields they fill, its admin port and the checks across keys. Each mode's config module
// exports one; src/cli/mode-command.ts turns it plus a run function into a command, and
// src/config/flag-docs.ts turns it into the flag table of docs/<mode>.md.
import type { core, output, ZodMiniObject } from 'zod/mini';
import type { LogFormat, LogLevel } from '../base/logger.ts';
import type { HostPort } from './fields.ts';

export interface ModeFlag {
  /** Config key; the flag is its kebab-case form (healthUrl → --health-url). */
  key: string;
  /** A one-letter alias ("-o"), shown before the flag. */
  short?: string;
  /** Placeholder for the value (e.g. "<duration>"); absent for on/off switches. */
  value?: string;
  help: string;
  /** Shown in --help; the real default lives in the schema (test/docs-flags.test.ts checks they agree). */
  defaultText?: string;
  /** May be given several times; the values collect into a list. */
  repeatable?: boolean;
  /** An on/off switch that is on by default: --no-<flag> turns it off. */
  negatable?: boolean;
}

export interface CommonConfig {
  logFormat: LogFormat;
  logLevel: LogLevel;
  adminAddress: HostPort | 'off';
  adminTokenFile?: string;
  metricsAddress?: HostPort | 'off';
  metricsTlsCertFile?: string;
  metricsTlsKeyFile?: string;
  metricsKubeconfig?: string;
}
export type ModeConfig<F extends core.$ZodShape> = CommonConfig & output<ZodMiniObject<F>>;

/** A mode's settings: everything its command, --help and docs page come from, except the run. */
export interface ModeDeclaration<F extends core.$ZodShape> {
  name: string;
  summary: string;
  /** Longer text after the flags in --help: what it does, and examples to copy. */
  helpAfter?: string;
  flags: ModeFlag[];
  fields: F;
  /** Default admin port on 127.0.0.1; null for one-shot modes without a listener by default. */
  adminPort: number | null;
  /** Checks that involve several keys; returns the problem, naming the keys and the fix. */
  check?: (config: ModeConfig<F>) => string | undefined;
}

/**
 * A one-shot command's settings (kubeward plan's subcommands, check-cert): no admin listener, no
 * daemon; the fields, flags and checks as in a mode, and at most one positional argument.
 */
export interface OneShotDeclaration<F extends core.$ZodShape> {
  /** The command as typed after "kubeward" ("plan render"). */
  path: string;
  summary: string;
  helpAfter?: string;
  flags: ModeFlag[];
  fields: F;
  check?: (config: ModeConfig<F>) => string | undefined;
  /** The one positional argument: the config key it fills (it overrides the file like a flag), and its help. */
  positional?: { key: string; name: string; help: string };
}
