// A small cloud in network namespaces: an emulated internal load balancer ("lb"), two or three
// control-plane nodes (m1, m2, m3), an outside client ("cl") and a health checker ("hc").
//
//   cl 198.51.100.10 ─┐                 ┌─ m1 10.0.1.11  2001:db8:1::11
//   hc 192.0.2.35   ──┤── lb (router) ──┼─ m2 10.0.2.12  2001:db8:2::12
//                                       └─ m3 10.0.3.13  2001:db8:3::13
//
// Azure style: lb DNATs VIP:6443 to the backends it considers healthy (client address kept), so a
// backend that picks itself gets its own SYN back with src = dst (the hairpin failure).
// GCP style: lb routes the VIP (destination unchanged) to the backends; a programmed backend's own
// VIP traffic is sent back to itself (policy rule), and replies with src = VIP are allowed (DSR).
// Addresses exist only inside these namespaces.
import { LabNet } from './lab-net.ts';
import { NsAgent } from './ns-agent.ts';

export const VIP4 = '10.0.0.100';
export const VIP6 = '2001:db8:100::100';
/** A second forwarded IP on the same nodes: an ingress load balancer (GCP scenarios). */
export const INGRESS_VIP = '10.0.0.200';
/**
 * The ports the emulated Azure LB forwards: OpenShift's internal API LB carries the apiserver
 * (6443) and the machine-config server (22623).
 */
export const LB_PORTS = [6443, 22623] as const;
/** Where the lab's metadata server listens (an address on lb's loopback). */
export const METADATA_IP = '10.0.9.1';

export type CloudStyle = 'azure' | 'gcp';

export interface Master {
  name: string;
  ip4: string;
  ip6: string;
  /** lb's interface towards this master. */
  lbIf: string;
  agent: NsAgent;
}

const FORWARDING = { 'net.ipv4.ip_forward': '1', 'net.ipv6.conf.all.forwarding': '1' };

export class CloudLab {
  readonly net = new LabNet();
  readonly style: CloudStyle;
  readonly masters: Master[] = [];
  client!: NsAgent;
  hc!: NsAgent;

  private constructor(style: CloudStyle) {
    this.style = style;
  }

  static async create(style: CloudStyle, masterCount = 2): Promise<CloudLab> {
    await LabNet.sweepStale();
    const lab = new CloudLab(style);
    try {
      await lab.#build(masterCount);
    } catch (err) {
      await lab.destroy();
      throw err;
    }
    return lab;
  }

  async #build(masterCount: number): Promise<void> {
    const { net } = this;
    const links: { ns: string; lbIf: string; lb: [string, string]; node: [string, string] }[] = [];
    for (let i = 1; i <= masterCount; i++) {
      const m = { name: `m${i}`, ip4: `10.0.${i}.1${i}`, ip6: `2001:db8:${i}::1${i}`, lbIf: `v-m${i}` };
      links.push({ ns: m.name, lbIf: m.lbIf, lb: [`10.0.${i}.1/24`, `2001:db8:${i}::1/64`], node: [`${m.ip4}/24`, `${m.ip6}/64`] });
      this.masters.push({ ...m, agent: undefined as unknown as NsAgent });
    }
    links.push({ ns: 'cl', lbIf: 'v-cl', lb: ['198.51.100.1/24', '2001:db8:c::1/64'], node: ['198.51.100.10/24', '2001:db8:c::10/64'] });
    links.push({ ns: 'hc', lbIf: 'v-hc', lb: ['192.0.2.1/24', '2001:db8:d::1/64'], node: ['192.0.2.35/24', '2001:db8:d::35/64'] });
    await net.addNamespaces({
      lb: { ...FORWARDING, 'net.ipv4.conf.all.send_redirects': '0', 'net.ipv4.conf.default.send_redirects': '0' },
      ...Object.fromEntries(this.masters.map((m) => [m.name, FORWARDING])),
      cl: {},
      hc: {},
    });
    await net.batch(
      undefined,
      links.map((l) => net.vethLine('lb', l.lbIf, l.ns, 'eth0')),
    );
    const lbLines = ['link set lo up', `addr add ${METADATA_IP}/32 dev lo`];
    for (const l of links) {
      lbLines.push(`link set ${l.lbIf} up`, `addr add ${l.lb[0]} dev ${l.lbIf}`, `addr add ${l.lb[1]} dev ${l.lbIf} nodad`);
      await net.batch(l.ns, [
        'link set lo up',
        'link set eth0 up',
        `addr add ${l.node[0]} dev eth0`,
        `addr add ${l.node[1]} dev eth0 nodad`,
        `route add default via ${l.lb[0].split('/')[0]}`,
        `route add default via ${l.lb[1].split('/')[0]}`,
      ]);
    }
    await net.batch('lb', lbLines);
    for (const m of this.masters) m.agent = new NsAgent(net, m.name);
    this.client = new NsAgent(net, 'cl');
    this.hc = new NsAgent(net, 'hc');
    await this.#antiSpoofing();
    await this.setBackends(this.masters.map((m) => m.name));
  }

  /** The fabric accepts from a node only its own addresses and the VIPs (DSR replies carry src = VIP). */
  async #antiSpoofing(): Promise<void> {
    const rules = this.masters.flatMap((m) => [
      `iifname "${m.lbIf}" ip saddr != { ${m.ip4}, ${VIP4}, ${INGRESS_VIP} } drop`,
      `iifname "${m.lbIf}" ip6 saddr != { ${m.ip6}, ${VIP6} } drop`,
    ]);
    await this.net.nft('lb', `table inet fabric {\n chain forward {\n  type filter hook forward priority 0; policy accept;\n  ${rules.join('\n  ')}\n }\n}\n`);
  }

  master(name: string): Master {
    const m = this.masters.find((x) => x.name === name);
    if (!m) throw new Error(`no master ${name}`);
    return m;
  }

  /** The load balancer's healthy set: new connections to the VIPs go to these nodes only. */
  async setBackends(names: string[]): Promise<void> {
    const ms = names.map((n) => this.master(n));
    if (this.style === 'azure') return this.#azureBackends(ms);
    for (const [vip, family] of [
      [VIP4, 4],
      [INGRESS_VIP, 4],
      [VIP6, 6],
    ] as const) {
      const hops = ms.flatMap((m) => ['nexthop', 'via', family === 4 ? m.ip4 : m.ip6]);
      const route = ms.length ? hops : ['unreachable'];
      await this.net.ip('lb', `-${family}`, 'route', 'replace', ...(ms.length ? [vip, ...route] : [...route, vip]));
    }
  }

  async #azureBackends(ms: Master[]): Promise<void> {
    const target = (family: 4 | 6): string => {
      const ips = ms.map((m) => (family === 4 ? m.ip4 : m.ip6));
      if (ips.length === 1) return ips[0]!;
      return `numgen inc mod ${ips.length} map { ${ips.map((ip, i) => `${i} : ${ip}`).join(', ')} }`;
    };
    const rules = ms.length
      ? [
          `ip daddr ${VIP4} tcp dport { ${LB_PORTS.join(', ')} } dnat ip to ${target(4)}`,
          `ip6 daddr ${VIP6} tcp dport { ${LB_PORTS.join(', ')} } dnat ip6 to ${target(6)}`,
        ]
      : [`ip daddr ${VIP4} drop`, `ip6 daddr ${VIP6} drop`];
    await this.net.nft(
      'lb',
      `add table inet azlb\ndelete table inet azlb\ntable inet azlb {\n chain pre {\n  type nat hook prerouting priority -100; policy accept;\n  ${rules.join('\n  ')}\n }\n}\n`,
    );
  }

  /**
   * GCP: while the LB has this node programmed, the node's own traffic to a forwarded IP comes back
   * to the node itself, whatever the healthy set says.
   */
  async setSelfRoute(name: string, on: boolean): Promise<void> {
    const m = this.master(name);
    const table = String(100 + this.masters.indexOf(m) + 1);
    for (const [vip, family, src] of [
      [VIP4, 4, m.ip4],
      [INGRESS_VIP, 4, m.ip4],
      [VIP6, 6, m.ip6],
    ] as const) {
      const rule = ['rule', on ? 'add' : 'del', 'from', src, 'to', vip, 'lookup', table, 'priority', '100'];
      if (on) await this.net.ip('lb', `-${family}`, 'route', 'replace', vip, 'via', src, 'table', table);
      await this.net.ip('lb', `-${family}`, ...rule);
    }
  }

  async destroy(): Promise<void> {
    await this.net.destroy();
  }
}
