// kubeward routes' settings: defaults, the zod fields (flags and file), the flags' help, and the
// checks across keys. The command (src/cli/routes.ts), --help and docs/routes.md all come from here.
import { isIP } from 'node:net';
import { array, enum as zEnum, literal, number, optional, prefault, refine, string, union, url } from 'zod/mini';
import { Refused, boolean, duration, filePath, integer, ipAddress, readWith } from '../config/fields.ts';
import type { ModeDeclaration } from '../config/mode-declaration.ts';
import { canonicalIp } from '../base/ip.ts';
import { isDirectoryPath } from '../watch/state-record.ts';
import { cidrField, printable, vipAddress } from '../watch/vip-address.ts';
import type { PortMatch } from './desired-ruleset.ts';
import { DEFAULT_METADATA_URL } from './gcp-vip-source.ts';
import { isNodeName } from './ovn-reroute.ts';
import { peerAddress } from './peer-address.ts';

/** The defaults, once: the fields fill them in and --help shows them. */
export const DEFAULTS = {
  backend: 'nftables',
  stateDir: '/run/cloud-routes',
  resync: '10s',
  staleAfter: '30s',
  ports: 'all',
  natTarget: 'redirect',
  metadataTimeout: '2s',
  ovnReroute: 'auto',
  downPeerPort: 6443,
  downPeerCheck: 'readyz',
  downPeerInterval: '2s',
  downPeerWindow: '30s',
} as const;

export const GCP_HEALTH_CHECKERS = ['35.191.0.0/16', '130.211.0.0/22'];

/** "6443", "6443,22623", [6443, 22623] or "all". iptables multiport takes at most 15 ports. */
const ports = readWith(union([string(), number(), array(union([string(), number()]))]), (v): PortMatch | Refused => {
  if (v === 'all') return 'all';
  const parts = (Array.isArray(v) ? v : String(v).split(',')).map((p) => String(p).trim());
  const nums = parts.map(Number);
  if (parts.some((p) => !/^\d{1,5}$/.test(p)) || nums.some((n) => n < 1 || n > 65535) || nums.length > 15) {
    return new Refused(`"${String(v)}" is not a port list; write 6443, 6443,22623 (at most 15) or all`);
  }
  return [...new Set(nums)].sort((a, b) => a - b);
});

/** A directory: absolute, no control characters (it is logged, and a name with a newline would forge log lines). */
const directory = string({ error: 'expected an absolute directory path' }).check(
  refine((s: string) => isDirectoryPath(s), {
    error: (iss) => `"${printable(String(iss.input))}" is not an absolute path without control characters`,
  }),
);

export const routesFields = {
  provider: zEnum(['gcp', 'azure'], {
    error: (iss) => (iss.input === undefined ? 'required: give --provider gcp or --provider azure' : 'expected gcp or azure'),
  }),
  backend: prefault(zEnum(['nftables', 'iptables'], { error: 'expected nftables or iptables' }), DEFAULTS.backend),
  stateDir: prefault(directory, DEFAULTS.stateDir),
  heartbeatDir: optional(directory),
  vip: prefault(array(vipAddress), []),
  resync: prefault(duration({ min: 100 }), DEFAULTS.resync),
  staleAfter: prefault(duration(), DEFAULTS.staleAfter),
  ports: prefault(ports, DEFAULTS.ports),
  withoutStateFile: optional(zEnum(['up', 'down'], { error: 'expected up or down' })),
  natTarget: prefault(zEnum(['redirect', 'node-ip'], { error: 'expected redirect or node-ip' }), DEFAULTS.natTarget),
  nodeIp: prefault(array(ipAddress), []),
  healthCheckerCidr: prefault(
    array(
      union([literal('none'), cidrField], { error: (iss) => `"${printable(String(iss.input))}" is not a CIDR such as 35.191.0.0/16 (no zone ids), or none` }),
    ),
    GCP_HEALTH_CHECKERS,
  ),
  metadataUrl: optional(union([literal('off'), url({ protocol: /^https?$/, error: 'expected an http:// URL or off' })])),
  metadataTimeout: prefault(duration({ min: 50 }), DEFAULTS.metadataTimeout),
  removeConflictingRoutes: prefault(boolean, false),
  cleanupOnExit: prefault(boolean, false),
  cleanUp: prefault(boolean, false),
  handoverSocket: optional(filePath('a unix socket path')),
  ovnReroute: prefault(zEnum(['auto', 'off'], { error: 'expected auto or off' }), DEFAULTS.ovnReroute),
  downPeer: prefault(array(peerAddress), []),
  downPeerPort: prefault(integer(1, 65535), DEFAULTS.downPeerPort),
  downPeerCheck: prefault(zEnum(['readyz', 'tcp'], { error: 'expected readyz or tcp' }), DEFAULTS.downPeerCheck),
  downPeerInterval: prefault(duration({ min: 200, max: 60_000 }), DEFAULTS.downPeerInterval),
  downPeerWindow: prefault(duration({ min: 1000, max: 3_600_000 }), DEFAULTS.downPeerWindow),
  ovnNodeName: optional(
    string({ error: 'expected a node name' }).check(
      refine((n: string) => isNodeName(n), {
        error: (iss) => `"${printable(String(iss.input))}" is not a node name (RFC 1123: lower-case letters, digits, - and .)`,
      }),
    ),
  ),
};

const helpAfter = `
Reads <VIP>.up / <VIP>.down in --state-dir (inotify plus a full resync every --resync). A VIP is up
when <VIP>.up exists, <VIP>.down does not, and its heartbeat (if the file has one) is younger than
--stale-after. Up VIPs get a NAT rule sending the node's own traffic to the local apiserver;
down VIPs do not, so that traffic goes through the cloud load balancer.
  azure: redirect in nat output and prerouting for up VIPs only. A VIP with neither file is down
         (as openshift-azure-routes.sh: only .up redirects).
  gcp:   incoming traffic to every managed VIP is always redirected (the LB health check must
         reach this node); the node's own traffic unless the VIP is down. A VIP with neither file
         is up (as openshift-gcp-routes.sh: only .down withdraws; the public API VIP never has a
         file); --without-state-file down gives kubeward's older, stricter reading. Forwarded
         packets from the health-checker ranges are dropped; Google guest agent "proto 66" local
         routes for a managed VIP are reported (and removed with --remove-conflicting-routes).
Every port and protocol of a VIP is redirected by default, as OpenShift's scripts do: the internal
API VIP carries 6443 (kube-apiserver) and 22623 (machine-config server). --ports scopes the rules.
Rules live in their own nftables table (inet kubeward-routes) or iptables chains (KUBEWARD-ROUTES-*),
replaced in one transaction per change, restored if something else removes them, and kept on exit
so a restart never reopens the hairpin: remove them with --cleanup-on-exit or --clean-up.
OVN-Kubernetes in shared-gateway mode sends pods' traffic to the VIP past the host's rules; as
OpenShift does, while an ovnkube-controller container runs (crictl), every up VIP gets an
ovn_cluster_router policy (priority 1010) rerouting this node's pods' traffic to it into the host
(--ovn-reroute off turns that off). Only policies of that exact form for this node are removed.
--down-peer (GCP's withdrawal gap, OCPBUGS-100298): for --down-peer-window after a VIP turns down,
the node's own new connections to it are sent (dnat, output hook only) to the first --down-peer whose
last check passed, instead of to the load balancer, which keeps sending them back to this node until
its health check withdraws it. With no healthy peer they take the load balancer path as before.

Examples:
  kubeward routes --provider azure
  kubeward routes --provider gcp --remove-conflicting-routes
  kubeward routes --provider gcp --vip 10.0.0.2 --ports 6443,22623 --backend iptables
  kubeward routes --provider gcp --vip 10.0.0.2 --down-peer 10.0.2.12 --down-peer 10.0.3.13
  kubeward routes --provider azure --clean-up
`;

/** The routes mode's settings: flags, help, fields, admin port and the checks across keys. */
export const routesDeclaration: ModeDeclaration<typeof routesFields> = {
  name: 'routes',
  summary: "program nftables/iptables so the node's own API VIP traffic goes to the local apiserver only while it is healthy",
  helpAfter,
  adminPort: 9451,
  fields: routesFields,
  flags: [
    { key: 'provider', value: '<gcp|azure>', help: 'the cloud whose load balancer hairpin to fix (required)' },
    { key: 'backend', value: '<nftables|iptables>', help: 'how rules are programmed', defaultText: DEFAULTS.backend },
    { key: 'stateDir', value: '<dir>', help: 'where kubeward watch (or apiserver-watcher) writes <VIP>.up / <VIP>.down', defaultText: DEFAULTS.stateDir },
    {
      key: 'heartbeatDir',
      value: '<dir>',
      help: 'where kubeward watch writes <VIP>.beat heartbeats (kept out of --state-dir)',
      defaultText: '<state-dir>-heartbeat',
    },
    { key: 'vip', value: '<ip>', help: 'a VIP to manage; default: every VIP with a state file (azure) or every forwarded IP (gcp)', repeatable: true },
    { key: 'resync', value: '<duration>', help: 'full re-read, drift check and metadata read interval', defaultText: DEFAULTS.resync },
    { key: 'staleAfter', value: '<duration>', help: 'a heartbeat older than this means down; 0 turns the check off', defaultText: DEFAULTS.staleAfter },
    {
      key: 'ports',
      value: '<ports|all>',
      help: 'TCP ports the rules match, comma-separated, or all (every port and protocol, as OpenShift)',
      defaultText: DEFAULTS.ports,
    },
    {
      key: 'withoutStateFile',
      value: '<up|down>',
      help: 'a managed VIP with neither file: up (gcp-routes.sh) or down (azure-routes.sh)',
      defaultText: 'up on gcp, down on azure',
    },
    {
      key: 'natTarget',
      value: '<redirect|node-ip>',
      help: "redirect (loopback for the node's own traffic) or dnat to --node-ip, for apiservers not listening on loopback",
      defaultText: DEFAULTS.natTarget,
    },
    { key: 'nodeIp', value: '<ip>', help: 'the node address per family, for --nat-target node-ip', repeatable: true },
    {
      key: 'healthCheckerCidr',
      value: '<cidr|none>',
      help: 'gcp: forwarded packets from these sources are dropped',
      defaultText: GCP_HEALTH_CHECKERS.join(', '),
      repeatable: true,
    },
    { key: 'metadataUrl', value: '<url|off>', help: 'gcp: metadata server base; read when no --vip is given', defaultText: DEFAULT_METADATA_URL },
    { key: 'metadataTimeout', value: '<duration>', help: 'gcp: deadline for one metadata request', defaultText: DEFAULTS.metadataTimeout },
    { key: 'removeConflictingRoutes', help: 'gcp: delete local proto 66 routes for managed VIPs instead of only reporting them' },
    { key: 'cleanupOnExit', help: 'remove our rules on SIGTERM/SIGINT (a restart then has a moment without them)', defaultText: 'off', negatable: true },
    { key: 'cleanUp', help: 'remove our rules (nftables table or iptables chains, and our OVN reroute policies) and exit; for uninstalling' },
    {
      key: 'handoverSocket',
      value: '<path>',
      help: "upgrades without a gap: take the admin listening socket from the routes process serving this unix socket, which then leaves its rules to this one (even with --cleanup-on-exit); its directory must be this uid's, mode 0700",
    },
    {
      key: 'ovnReroute',
      value: '<auto|off>',
      help: 'OVN-Kubernetes shared gateway: keep ovn_cluster_router reroute policies for up VIPs while an ovnkube-controller container runs (crictl), as OpenShift does',
      defaultText: DEFAULTS.ovnReroute,
    },
    {
      key: 'downPeer',
      value: '<ip>',
      help: "another control-plane node's apiserver address; for --down-peer-window after a VIP turns down, the node's own new connections to it go to the first healthy one",
      repeatable: true,
    },
    {
      key: 'downPeerPort',
      value: '<port>',
      help: 'port the --down-peer checks use (each redirected connection keeps its own port)',
      defaultText: String(DEFAULTS.downPeerPort),
    },
    {
      key: 'downPeerCheck',
      value: '<readyz|tcp>',
      help: 'how a --down-peer is checked: HTTPS GET /readyz (certificate not verified) or a TCP connect',
      defaultText: DEFAULTS.downPeerCheck,
    },
    { key: 'downPeerInterval', value: '<duration>', help: 'time between two checks of each --down-peer', defaultText: DEFAULTS.downPeerInterval },
    {
      key: 'downPeerWindow',
      value: '<duration>',
      help: "how long after a VIP turns down the node's own new connections go to a healthy --down-peer; cover the load balancer's withdrawal",
      defaultText: DEFAULTS.downPeerWindow,
    },
    { key: 'ovnNodeName', value: '<name>', help: "the node name in OVN's router port rtos-<name>", defaultText: 'the host name' },
  ],
  check: (c) => {
    if (c.natTarget === 'node-ip' && c.nodeIp.length === 0) return '--nat-target node-ip needs --node-ip IP (one per family you use)';
    // A one-shot clean-up asking for the running agent's listeners would end that agent.
    if (c.cleanUp && c.handoverSocket !== undefined) return '--clean-up runs once and takes nothing over; leave out --handover-socket';
    const families = c.nodeIp.map((ip) => isIP(ip));
    if (new Set(families).size !== families.length) return '--node-ip: give at most one IPv4 and one IPv6 address';
    if (c.nodeIp.some((ip) => canonicalIp(ip) === undefined)) return '--node-ip: a node address has no zone id; give it like 10.0.1.11';
    if (c.provider === 'gcp' && c.vip.length === 0 && c.metadataUrl === 'off')
      return '--provider gcp needs --vip IP or the metadata server (--metadata-url is off)';
    for (const peer of c.downPeer) {
      if (c.vip.includes(peer)) return `--down-peer ${peer}: that is a --vip; give another control-plane node's own address`;
      if (c.nodeIp.some((ip) => canonicalIp(ip) === peer))
        return `--down-peer ${peer}: that is this node (--node-ip); give another control-plane node's address`;
    }
    if (new Set(c.downPeer).size !== c.downPeer.length) return '--down-peer: each peer once';
    if (c.healthCheckerCidr.includes('none') && c.healthCheckerCidr.length > 1) return '--health-checker-cidr none cannot be mixed with ranges';
    if (c.heartbeatDir !== undefined && c.heartbeatDir.replace(/\/+$/, '') === c.stateDir.replace(/\/+$/, '')) {
      return "--heartbeat-dir must not be --state-dir: OpenShift's consumers watch the state directory, so heartbeats there wake them every beat";
    }
    return undefined;
  },
};
