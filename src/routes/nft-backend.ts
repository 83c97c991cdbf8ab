// nftables backend: our own `inet kubeward-routes` table, replaced whole by one `nft -f` per change.
import { KubewardError } from '../base/errors.ts';
import type { DesiredRuleset } from './desired-ruleset.ts';
import { NFT_LIST_ARGS, renderNftCleanup, renderNftRuleset } from './render-nft.ts';
import type { CommandRunner, RulesBackend } from './rules-backend.ts';

const TIMEOUT_MS = 10_000;

export class NftBackend implements RulesBackend {
  readonly name = 'nftables' as const;
  readonly #run: CommandRunner;

  constructor(run: CommandRunner) {
    this.#run = run;
  }

  async apply(ruleset: DesiredRuleset): Promise<void> {
    await this.#run(['nft', '-f', '-'], { input: renderNftRuleset(ruleset), timeoutMs: TIMEOUT_MS });
  }

  async readBack(): Promise<string> {
    const r = await this.#run(['nft', ...NFT_LIST_ARGS], { okCodes: [0, 1], timeoutMs: TIMEOUT_MS });
    if (r.code === 0) return r.stdout;
    // A missing table is drift to repair, not an error; anything else is.
    if (/No such file or directory/.test(r.stderr)) return '';
    throw new KubewardError('E_EXEC', `nft list table failed: ${r.stderr.trim().split('\n').slice(-2).join(' | ')}`);
  }

  async cleanup(): Promise<void> {
    await this.#run(['nft', '-f', '-'], { input: renderNftCleanup(), timeoutMs: TIMEOUT_MS });
  }
}
