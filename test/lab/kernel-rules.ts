// Reads what the kernel of a lab namespace holds for kubeward routes: the VIPs each NAT hook
// redirects, from `nft -j` (nftables backend) or `iptables-save` (iptables backend).
import type { LabNet } from './lab-net.ts';

export type BackendName = 'nftables' | 'iptables';
type Hook = 'prerouting' | 'output';

/** VIPs our rules send to the node in this hook; [] when the table or chain is missing. */
export async function kernelNatVips(net: LabNet, ns: string, backend: BackendName, hook: Hook): Promise<string[]> {
  return backend === 'nftables' ? nftVips(net, ns, hook) : iptablesVips(net, ns, hook);
}

async function nftVips(net: LabNet, ns: string, hook: Hook): Promise<string[]> {
  const r = await net.exec(ns, ['nft', '-j', 'list', 'chain', 'inet', 'kubeward-routes', hook], { okCodes: [0, 1] });
  if (r.code !== 0) return [];
  const vips: string[] = [];
  const items = (JSON.parse(r.stdout) as { nftables: { rule?: { expr: { match?: { left: unknown; right: unknown } }[] } }[] }).nftables;
  for (const item of items) {
    for (const e of item.rule?.expr ?? []) {
      const left = JSON.stringify(e.match?.left ?? '');
      if (!left.includes('"daddr"')) continue;
      const right = e.match!.right as string | { set: string[] };
      vips.push(...(typeof right === 'string' ? [right] : right.set));
    }
  }
  return vips.sort();
}

async function iptablesVips(net: LabNet, ns: string, hook: Hook): Promise<string[]> {
  const chain = `KUBEWARD-ROUTES-${hook.toUpperCase()}`;
  const vips: string[] = [];
  for (const tool of ['iptables-save', 'ip6tables-save']) {
    const { stdout } = await net.exec(ns, [tool, '-t', 'nat']);
    for (const m of stdout.matchAll(new RegExp(`^-A ${chain} -d (\\S+)/\\d+`, 'gm'))) vips.push(m[1]!);
  }
  return vips.sort();
}

/** Addresses our output rules dnat to (down-peer redirects, or --node-ip targets), from the kernel. */
export async function kernelOutputDnatTargets(net: LabNet, ns: string, backend: BackendName): Promise<string[]> {
  if (backend === 'nftables') {
    const r = await net.exec(ns, ['nft', 'list', 'chain', 'inet', 'kubeward-routes', 'output'], { okCodes: [0, 1] });
    return r.code === 0 ? [...r.stdout.matchAll(/dnat ip6? to (\S+)/g)].map((m) => m[1]!).sort() : [];
  }
  const targets: string[] = [];
  for (const tool of ['iptables-save', 'ip6tables-save']) {
    const { stdout } = await net.exec(ns, [tool, '-t', 'nat']);
    for (const m of stdout.matchAll(/^-A KUBEWARD-ROUTES-OUTPUT .*-j DNAT --to-destination (\S+)/gm)) targets.push(m[1]!);
  }
  return targets.sort();
}
