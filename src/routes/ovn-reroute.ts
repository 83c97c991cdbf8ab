// OVN-Kubernetes shared-gateway mode: pods' traffic leaves through OVN, past the host's nat rules,
// so pods on a control-plane node still hairpin on the VIP. OpenShift's scripts (machine-config-
// operator templates/master/00-master/{gcp,azure}/files/opt-libexec-openshift-*-routes-sh.yaml,
// `add_routes` / `remove_stale_routes`; OCPBUGS-9972, OCPBUGS-17841) add, per VIP that is not
// down, a logical router policy on `ovn_cluster_router` at priority 1010:
//   match `inport == "rtos-<hostname>" && ip4.dst == <VIP>` (ip6.dst for IPv6), reroute to the
//   node's ovn-k8s-mp0 address,
// which sends the pod's packet into the host, where our redirect applies. They run ovn-nbctl in
// the ovnkube-controller container through `crictl exec`. The same here, with two differences on
// purpose: only policies of exactly our form for this host are ever deleted (OpenShift's clean-up
// deletes every priority-1010 policy), and every value that goes into a match is validated.
// Planning is pure; the adapter at the end runs the commands.
import { hostname } from 'node:os';
import { KubewardError, describeError } from '../base/errors.ts';
import { checkVip, printable } from '../watch/vip-address.ts';
import { isMissingTool, parseJson, type CommandRunner } from './rules-backend.ts';

export const OVN_PRIORITY = 1010;
export const OVN_ROUTER = 'ovn_cluster_router';
const MP0 = 'ovn-k8s-mp0';

export interface RouterPolicy {
  priority: number;
  match: string;
  action: string;
  nexthop?: string;
}

/** `ovn-nbctl lr-policy-list <router>` output → policies; lines of another shape are skipped. */
export function parsePolicyList(text: string): RouterPolicy[] {
  const out: RouterPolicy[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*(\d+)\s+(.+?)\s+(allow|drop|reroute)(?:\s+(\S+))?\s*$/.exec(line);
    if (!m) continue;
    out.push({ priority: Number(m[1]), match: m[2]!, action: m[3]!, ...(m[4] ? { nexthop: m[4] } : {}) });
  }
  return out;
}

/** A Kubernetes node name as OVN names its router port (`rtos-<node>`): RFC 1123, nothing that could end a match string. */
export function isNodeName(name: string): boolean {
  return typeof name === 'string' && name.length <= 253 && /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name);
}

export function policyMatch(node: string, vip: string): string {
  return `inport == "rtos-${node}" && ${vip.includes(':') ? 'ip6' : 'ip4'}.dst == ${vip}`;
}

/** Our own policy's VIP, if the match is exactly our form for this node. */
export function ownPolicyVip(node: string, match: string): string | undefined {
  const m = /^inport == "rtos-([^"]+)" && ip([46])\.dst == (\S+)$/.exec(match.trim());
  if (!m || m[1] !== node) return undefined;
  const r = checkVip(m[3]!);
  return r.ok && String(r.family) === m[2] ? r.vip : undefined;
}

export interface ReroutePlan {
  add: { match: string; nexthop: string }[];
  del: { match: string }[];
}

/**
 * What to change so that exactly the up VIPs with a management-port address of their family have
 * our reroute policy, pointing at that address. Policies of other software are never touched.
 */
export function planReroutes(input: {
  node: string;
  upVips: readonly string[];
  mp0: { 4?: string; 6?: string };
  policies: readonly RouterPolicy[];
}): ReroutePlan {
  const want = new Map<string, string>();
  for (const vip of input.upVips) {
    const nexthop = input.mp0[vip.includes(':') ? 6 : 4];
    if (nexthop !== undefined) want.set(policyMatch(input.node, vip), nexthop);
  }
  const plan: ReroutePlan = { add: [], del: [] };
  const have = new Map<string, string | undefined>();
  for (const p of input.policies) {
    if (p.priority !== OVN_PRIORITY || ownPolicyVip(input.node, p.match) === undefined) continue;
    const match = p.match.trim();
    if (want.get(match) === p.nexthop && p.action === 'reroute' && !have.has(match)) have.set(match, p.nexthop);
    else plan.del.push({ match });
  }
  for (const [match, nexthop] of want) if (!have.has(match)) plan.add.push({ match, nexthop });
  return plan;
}

/** `ip -j addr show dev ovn-k8s-mp0` → its global address per family. */
export function parseMp0Addresses(json: string): { 4?: string; 6?: string } {
  const out: { 4?: string; 6?: string } = {};
  const data = parseJson(json, 'ip -j addr');
  if (!Array.isArray(data)) return out;
  for (const link of data as { addr_info?: { family?: string; local?: string; scope?: string }[] }[]) {
    for (const a of link?.addr_info ?? []) {
      if (a.scope !== 'global' || typeof a.local !== 'string') continue;
      const r = checkVip(a.local);
      if (!r.ok) continue;
      out[r.family] ??= r.vip;
    }
  }
  return out;
}

export interface OvnRerouteStatus {
  /** Whether the ovnkube-controller container was found at the last look. */
  ovnFound: boolean;
  node: string;
  policies: string[];
  lastChange?: ReroutePlan;
}

/**
 * Keeps our reroute policies in line with the up VIPs. When no ovnkube-controller container runs
 * (or crictl is not installed) there is nothing to do. Errors are thrown to the caller, which runs
 * this as a best-effort check, as OpenShift's GCP script does (`|| true`, OCPBUGS-20499).
 */
export class OvnReroute {
  readonly #run: CommandRunner;
  readonly #node: string;
  #status: OvnRerouteStatus;

  constructor(run: CommandRunner, node = hostname()) {
    this.#run = run;
    this.#node = node;
    this.#status = { ovnFound: false, node, policies: [] };
  }

  get status(): OvnRerouteStatus {
    return this.#status;
  }

  async sync(upVips: readonly string[]): Promise<void> {
    const container = await this.#container();
    if (container === undefined) {
      this.#status = { ...this.#status, ovnFound: false };
      return;
    }
    // Checked only where it matters: a host name that is no node name cannot go into a match.
    if (!isNodeName(this.#node))
      throw new KubewardError('E_USAGE', `the host name "${printable(this.#node)}" is not a node name (RFC 1123); give --ovn-node-name`);
    const mp0 = parseMp0Addresses((await this.#run(['ip', '-j', 'addr', 'show', 'dev', MP0], { timeoutMs: 5000 })).stdout);
    const policies = parsePolicyList(await this.#nbctl(container, ['lr-policy-list', OVN_ROUTER]));
    const plan = planReroutes({ node: this.#node, upVips, mp0, policies });
    for (const d of plan.del) await this.#nbctl(container, ['lr-policy-del', OVN_ROUTER, String(OVN_PRIORITY), d.match]);
    for (const a of plan.add) await this.#nbctl(container, ['lr-policy-add', OVN_ROUTER, String(OVN_PRIORITY), a.match, 'reroute', a.nexthop]);
    const kept = policies.filter((p) => p.priority === OVN_PRIORITY && ownPolicyVip(this.#node, p.match) !== undefined).map((p) => p.match.trim());
    const now = [...kept.filter((m) => !plan.del.some((d) => d.match === m)), ...plan.add.map((a) => a.match)];
    this.#status = {
      ovnFound: true,
      node: this.#node,
      policies: now,
      ...(plan.add.length || plan.del.length ? { lastChange: plan } : this.#status.lastChange ? { lastChange: this.#status.lastChange } : {}),
    };
  }

  /** Removes every policy of ours for this node (--clean-up). */
  async removeAll(): Promise<number> {
    const container = await this.#container();
    if (container === undefined || !isNodeName(this.#node)) return 0;
    const policies = parsePolicyList(await this.#nbctl(container, ['lr-policy-list', OVN_ROUTER]));
    const plan = planReroutes({ node: this.#node, upVips: [], mp0: {}, policies });
    for (const d of plan.del) await this.#nbctl(container, ['lr-policy-del', OVN_ROUTER, String(OVN_PRIORITY), d.match]);
    return plan.del.length;
  }

  /** The ovnkube-controller container id, or undefined when there is none (or no crictl). */
  async #container(): Promise<string | undefined> {
    let out: string;
    try {
      out = (await this.#run(['crictl', 'ps', '--name', 'ovnkube-controller', '--state', 'running', '-q'], { timeoutMs: 10_000 })).stdout;
    } catch (err) {
      if (isMissingTool(err)) return undefined;
      throw new KubewardError('E_EXEC', `crictl ps: ${describeError(err)}`, { cause: err });
    }
    const id = out
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l !== '');
    if (id === undefined) return undefined;
    if (!/^[0-9a-f]{12,64}$/.test(id)) throw new KubewardError('E_EXEC', `crictl ps: unexpected container id ${JSON.stringify(id.slice(0, 70))}`);
    return id;
  }

  async #nbctl(container: string, args: string[]): Promise<string> {
    return (await this.#run(['crictl', 'exec', '-i', container, 'ovn-nbctl', ...args], { timeoutMs: 10_000 })).stdout;
  }
}
