// Renders the desired ruleset as `iptables-restore --noflush` input for one family (pure): our own
// chains are declared (which flushes them) and refilled, jumps from the built-in chains are added
// only when missing, and nothing of other software is touched.
import type { DesiredRuleset, Family, NatRule, PortMatch } from './desired-ruleset.ts';

export const CHAIN_PREFIX = 'KUBEWARD-ROUTES-';
const JUMP_COMMENT = '-m comment --comment "kubeward routes"';

interface OwnChain {
  table: 'nat' | 'filter';
  chain: string;
  /** The built-in chain that jumps to it; undefined for chains that are never jumped to. */
  from?: string;
}

const PREROUTING: OwnChain = { table: 'nat', chain: `${CHAIN_PREFIX}PREROUTING`, from: 'PREROUTING' };
const OUTPUT: OwnChain = { table: 'nat', chain: `${CHAIN_PREFIX}OUTPUT`, from: 'OUTPUT' };
const FORWARD: OwnChain = { table: 'filter', chain: `${CHAIN_PREFIX}FORWARD`, from: 'FORWARD' };
const CT_PIN: OwnChain = { table: 'filter', chain: `${CHAIN_PREFIX}CT-PIN` };

/** Our chains and the jumps to them as found in `iptables-save` output. */
export interface IptablesCurrent {
  chains: { table: string; chain: string }[];
  /** Saved rule lines ("-A PREROUTING ... -j KUBEWARD-ROUTES-PREROUTING") per table. */
  jumps: { table: string; from: string; target: string; line: string }[];
}

export const EMPTY_CURRENT: IptablesCurrent = { chains: [], jumps: [] };

/** Extracts our chains and jumps from `iptables-save` output. */
export function parseIptablesSave(text: string): IptablesCurrent {
  const current: IptablesCurrent = { chains: [], jumps: [] };
  let table = '';
  for (const line of text.split('\n')) {
    if (line.startsWith('*')) table = line.slice(1).trim();
    const decl = /^:(\S+) /.exec(line);
    if (decl && decl[1]!.startsWith(CHAIN_PREFIX)) current.chains.push({ table, chain: decl[1]! });
    const rule = /^-A (\S+) .*-j (\S+)/.exec(line);
    if (rule && !rule[1]!.startsWith(CHAIN_PREFIX) && rule[2]!.startsWith(CHAIN_PREFIX)) {
      current.jumps.push({ table, from: rule[1]!, target: rule[2]!, line });
    }
  }
  return current;
}

/** The lines of `iptables-save` output that belong to us, counters removed: what drift is judged on. */
export function ownSavedLines(text: string): string[] {
  const own: string[] = [];
  let table = '';
  for (const line of text.split('\n')) {
    if (line.startsWith('*')) table = line.trim();
    if (line.startsWith(`:${CHAIN_PREFIX}`)) own.push(`${table} ${line.replace(/ \[\d+:\d+\]$/, '')}`);
    else if (line.startsWith('-A ') && line.includes(CHAIN_PREFIX)) own.push(`${table} ${line}`);
  }
  return own;
}

export function renderIptablesRestore(ruleset: DesiredRuleset, family: Family, current: IptablesCurrent): string {
  const drops = ruleset.forwardDrop.filter((d) => d.family === family);
  const want = [PREROUTING, OUTPUT, CT_PIN, ...(drops.length ? [FORWARD] : [])];
  const body: Record<'nat' | 'filter', string[]> = { nat: [], filter: [] };
  for (const hook of [PREROUTING, OUTPUT]) {
    for (const r of ruleset.nat.filter((n) => n.family === family && `${CHAIN_PREFIX}${n.hook.toUpperCase()}` === hook.chain)) {
      for (const vip of r.vips) body.nat.push(`-A ${hook.chain} -d ${vip}/${family === 4 ? 32 : 128}${portMatch(r.ports)} ${natTarget(r)}`);
    }
  }
  body.filter.push(
    `-A ${CT_PIN.chain} -m conntrack --ctstate NEW -m comment --comment "keeps conntrack on so NAT bindings outlive withdrawn redirects" -j RETURN`,
  );
  for (const d of drops) for (const s of d.sources) body.filter.push(`-A ${FORWARD.chain} -s ${s} -j DROP`);
  const stale = current.chains.filter((c) => !want.some((w) => w.table === c.table && w.chain === c.chain));
  const sections: string[] = [];
  for (const table of ['nat', 'filter'] as const) {
    const lines = want.filter((w) => w.table === table).map((w) => `:${w.chain} - [0:0]`);
    lines.push(...stale.filter((s) => s.table === table).map((s) => `:${s.chain} - [0:0]`));
    lines.push(...body[table]);
    for (const w of want.filter((c) => c.table === table && c.from)) lines.push(...jumpFixes(w, current));
    for (const s of stale.filter((c) => c.table === table)) lines.push(...deleteJumps(table, s.chain, current), `-X ${s.chain}`);
    sections.push(`*${table}`, ...lines, 'COMMIT');
  }
  return sections.join('\n') + '\n';
}

/** Input that removes every chain of ours found, and the jumps to them. */
export function renderIptablesCleanup(current: IptablesCurrent): string {
  const sections: string[] = [];
  for (const table of [...new Set(current.chains.map((c) => c.table))]) {
    const chains = current.chains.filter((c) => c.table === table).map((c) => c.chain);
    const lines = chains.map((c) => `:${c} - [0:0]`);
    for (const c of chains) lines.push(...deleteJumps(table, c, current));
    lines.push(...chains.map((c) => `-X ${c}`));
    sections.push(`*${table}`, ...lines, 'COMMIT');
  }
  return sections.length ? sections.join('\n') + '\n' : '';
}

/** Exactly one jump per chain: insert it first in the built-in chain when missing, delete extras. */
function jumpFixes(own: OwnChain, current: IptablesCurrent): string[] {
  const found = current.jumps.filter((j) => j.table === own.table && j.target === own.chain && j.from === own.from);
  if (found.length === 0) return [`-I ${own.from} 1 ${JUMP_COMMENT} -j ${own.chain}`];
  return found.slice(1).map((j) => j.line.replace(/^-A /, '-D '));
}

function deleteJumps(table: string, chain: string, current: IptablesCurrent): string[] {
  return current.jumps.filter((j) => j.table === table && j.target === chain).map((j) => j.line.replace(/^-A /, '-D '));
}

function portMatch(ports: PortMatch): string {
  if (ports === 'all') return '';
  return ports.length === 1 ? ` -p tcp -m tcp --dport ${ports[0]}` : ` -p tcp -m multiport --dports ${ports.join(',')}`;
}

function natTarget(r: NatRule): string {
  return r.to === undefined ? '-j REDIRECT' : `-j DNAT --to-destination ${r.to}`;
}
