// The port through which the routes agent changes the kernel: nftables or iptables behind it.
import { KubewardError } from '../base/errors.ts';
import type { DesiredRuleset } from './desired-ruleset.ts';
import type { ExecOptions, ExecResult } from '../sys/exec.ts';

export type BackendName = 'nftables' | 'iptables';

export interface RulesBackend {
  readonly name: BackendName;
  /** Replaces our rules with the desired ones in one transaction per family; throws on failure. */
  apply(ruleset: DesiredRuleset): Promise<void>;
  /**
   * Our rules as the kernel reports them now, normalised (no counters), '' when there are none.
   * Compared with the read-back right after the last apply to tell drift.
   */
  readBack(): Promise<string>;
  /** Removes everything of ours; nothing of other software. */
  cleanup(): Promise<void>;
}

/** How backends run their tools; tests and the lab pass their own. */
export type CommandRunner = (argv: readonly string[], opts?: ExecOptions) => Promise<ExecResult>;

/** The tool is not installed (execCommand keeps spawn's ENOENT as the cause). */
export function isMissingTool(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string } } | undefined;
  return e?.code === 'ENOENT' || e?.cause?.code === 'ENOENT';
}

/** JSON from a tool (`ip -j`), '' as []; anything unparsable is the project's own error, with no tool output echoed. */
export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text.trim() || '[]') as unknown;
  } catch {
    throw new KubewardError('E_EXEC', `${what} printed something that is not JSON`);
  }
}
