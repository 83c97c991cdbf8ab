// Renders the desired ruleset as one `nft -f` transaction that replaces our table whole (pure).
import type { DesiredRuleset, Family, NatHook, NatRule, PortMatch } from './desired-ruleset.ts';

export const NFT_TABLE = 'kubeward-routes';
const TABLE_REF = `inet ${NFT_TABLE}`;

/**
 * `add` then `delete` then the full table, in one file: nft applies a file as one transaction, so
 * the kernel goes from the old table to the new one with no moment in between. The leading `add`
 * makes `delete` valid when the table does not exist yet (nft 1.0.6 has no `destroy`).
 */
export function renderNftRuleset(ruleset: DesiredRuleset): string {
  const lines = [`add table ${TABLE_REF}`, `delete table ${TABLE_REF}`, `table ${TABLE_REF} {`];
  // Any `ct` expression makes the kernel keep conntrack on in this network namespace. Without it,
  // withdrawing the last redirect can turn conntrack off, and established redirected connections
  // lose their NAT binding (their packets then leak to the load balancer and are reset). The
  // chain is never jumped to, so it costs nothing per packet.
  lines.push('\tchain conntrack-pin {', '\t\tct state new comment "keeps conntrack on so NAT bindings outlive withdrawn redirects"', '\t}');
  for (const hook of ['prerouting', 'output'] as const)
    lines.push(
      '',
      ...natChain(
        hook,
        ruleset.nat.filter((r) => r.hook === hook),
      ),
    );
  if (ruleset.forwardDrop.length) {
    lines.push('', '\tchain forward {', '\t\ttype filter hook forward priority 0; policy accept;');
    for (const d of ruleset.forwardDrop) lines.push(`\t\t${ipKeyword(d.family)} saddr ${nftSet(d.sources)} drop`);
    lines.push('\t}');
  }
  lines.push('}');
  return lines.join('\n') + '\n';
}

/** Removes our table, whether or not it exists. */
export function renderNftCleanup(): string {
  return `add table ${TABLE_REF}\ndelete table ${TABLE_REF}\n`;
}

/** `nft` arguments that list our table, without counters, for drift comparison. */
export const NFT_LIST_ARGS = ['-s', 'list', 'table', 'inet', NFT_TABLE] as const;

function natChain(hook: NatHook, rules: NatRule[]): string[] {
  // Numeric -100, not `dstnat`: nft 1.0.6 rejects the `dstnat` keyword on the output hook.
  const lines = [`\tchain ${hook} {`, `\t\ttype nat hook ${hook} priority -100; policy accept;`];
  for (const r of rules) lines.push(`\t\t${ipKeyword(r.family)} daddr ${nftSet(r.vips)}${portMatch(r.ports)} ${natStatement(r)}`);
  lines.push('\t}');
  return lines;
}

function natStatement(r: NatRule): string {
  return r.to === undefined ? 'redirect' : `dnat ${ipKeyword(r.family)} to ${r.to}`;
}

function portMatch(ports: PortMatch): string {
  return ports === 'all' ? '' : ` tcp dport ${nftSet(ports.map(String))}`;
}

function ipKeyword(family: Family): string {
  return family === 4 ? 'ip' : 'ip6';
}

function nftSet(items: readonly string[]): string {
  return `{ ${items.join(', ')} }`;
}
