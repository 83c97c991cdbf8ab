// iptables backend: our own chains in nat and filter, jumps from the built-in chains, one
// `iptables-restore --noflush` per family per change (ip6tables-restore for IPv6).
import { KubewardError, describeError } from '../base/errors.ts';
import type { DesiredRuleset, Family } from './desired-ruleset.ts';
import { ownSavedLines, parseIptablesSave, renderIptablesCleanup, renderIptablesRestore } from './render-iptables.ts';
import type { CommandRunner, RulesBackend } from './rules-backend.ts';

const TIMEOUT_MS = 15_000;
const TOOLS = {
  4: { save: 'iptables-save', restore: 'iptables-restore' },
  6: { save: 'ip6tables-save', restore: 'ip6tables-restore' },
} as const;

export class IptablesBackend implements RulesBackend {
  readonly name = 'iptables' as const;
  readonly #run: CommandRunner;

  constructor(run: CommandRunner) {
    this.#run = run;
  }

  async apply(ruleset: DesiredRuleset): Promise<void> {
    for (const family of [4, 6] as const) {
      const saved = await this.#save(family, family === 6);
      const current = parseIptablesSave(saved);
      // A host without IPv6 (or without ip6tables) must still work when it has nothing IPv6 to do.
      const wanted = ruleset.nat.some((r) => r.family === family) || ruleset.forwardDrop.some((d) => d.family === family);
      if (family === 6 && !wanted && current.chains.length === 0) continue;
      const text = renderIptablesRestore(ruleset, family, current);
      await this.#run([TOOLS[family].restore, '--noflush', '-w', '5'], { input: text, timeoutMs: TIMEOUT_MS });
    }
  }

  async readBack(): Promise<string> {
    const parts: string[] = [];
    for (const family of [4, 6] as const) {
      const own = ownSavedLines(await this.#save(family, family === 6));
      parts.push(...own.map((l) => `ipv${family} ${l}`));
    }
    return parts.length ? parts.join('\n') + '\n' : '';
  }

  async cleanup(): Promise<void> {
    for (const family of [4, 6] as const) {
      const text = renderIptablesCleanup(parseIptablesSave(await this.#save(family, true)));
      if (text) await this.#run([TOOLS[family].restore, '--noflush', '-w', '5'], { input: text, timeoutMs: TIMEOUT_MS });
    }
  }

  /** nat and filter tables as `iptables-save` prints them; '' when tolerant and the tool fails. */
  async #save(family: Family, tolerant: boolean): Promise<string> {
    try {
      const out: string[] = [];
      for (const table of ['nat', 'filter']) out.push((await this.#run([TOOLS[family].save, '-t', table], { timeoutMs: TIMEOUT_MS })).stdout);
      return out.join('\n');
    } catch (err) {
      if (tolerant) return '';
      throw new KubewardError('E_EXEC', `${TOOLS[family].save} failed: ${describeError(err)}`, { cause: err });
    }
  }
}
