// `kubeward routes`: turns the watcher's <VIP>.up / <VIP>.down files into nftables or iptables
// rules so the node's own API VIP traffic goes to the local apiserver only while it is healthy.
// Composition root: flags → config → state directory, backend, GCP metadata, local routes → agent.
// Close order: the agent stops and (by default) removes its rules, then the admin listener closes.
import { isIP } from 'node:net';
import { array, enum as zEnum, literal, number, optional, prefault, refine, string, union, url } from 'zod/mini';
import { systemClock } from '../base/clock.ts';
import { UsageError, describeError } from '../base/errors.ts';
import { Refused, boolean, duration, ipAddress, readWith } from '../config/fields.ts';
import { execCommand } from '../sys/exec.ts';
import { canonicalIp } from '../base/ip.ts';
import { defaultHeartbeatDir, isDirectoryPath } from '../watch/state-record.ts';
import { cidrField, printable, vipAddress } from '../watch/vip-address.ts';
import { parseForeignTables } from '../routes/foreign-tables.ts';
import { isMissingTool } from '../routes/rules-backend.ts';
import { OvnReroute, isNodeName } from '../routes/ovn-reroute.ts';
import { hostname } from 'node:os';
import type { Family, PortMatch } from '../routes/desired-ruleset.ts';
import { IptablesBackend } from '../routes/iptables-backend.ts';
import { NftBackend } from '../routes/nft-backend.ts';
import { StateDirReader } from '../routes/state-dir-reader.ts';
import { DEFAULT_METADATA_URL, GcpVipSource } from '../routes/gcp-vip-source.ts';
import { listGuestAgentRoutes, removeLocalRoute } from '../routes/conflicting-routes.ts';
import { createRoutesMetrics } from '../routes/routes-metrics.ts';
import { RoutesAgent } from '../routes/routes-agent.ts';
import { buildModeCommand, type ModeConfig, type ModeSpec } from './mode-command.ts';

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

const fields = {
  provider: zEnum(['gcp', 'azure'], {
    error: (iss) => (iss.input === undefined ? 'required: give --provider gcp or --provider azure' : 'expected gcp or azure'),
  }),
  backend: prefault(zEnum(['nftables', 'iptables'], { error: 'expected nftables or iptables' }), 'nftables'),
  stateDir: prefault(directory, '/run/cloud-routes'),
  heartbeatDir: optional(directory),
  vip: prefault(array(vipAddress), []),
  resync: prefault(duration({ min: 100 }), '10s'),
  staleAfter: prefault(duration(), '30s'),
  ports: prefault(ports, 'all'),
  withoutStateFile: optional(zEnum(['up', 'down'], { error: 'expected up or down' })),
  natTarget: prefault(zEnum(['redirect', 'node-ip'], { error: 'expected redirect or node-ip' }), 'redirect'),
  nodeIp: prefault(array(ipAddress), []),
  healthCheckerCidr: prefault(array(union([literal('none'), cidrField], { error: (iss) => `"${printable(String(iss.input))}" is not a CIDR such as 35.191.0.0/16 (no zone ids), or none` })), GCP_HEALTH_CHECKERS),
  metadataUrl: optional(union([literal('off'), url({ protocol: /^https?$/, error: 'expected an http:// URL or off' })])),
  metadataTimeout: prefault(duration({ min: 50 }), '2s'),
  removeConflictingRoutes: prefault(boolean, false),
  cleanupOnExit: prefault(boolean, false),
  cleanUp: prefault(boolean, false),
  ovnReroute: prefault(zEnum(['auto', 'off'], { error: 'expected auto or off' }), 'auto'),
  ovnNodeName: optional(
    string({ error: 'expected a node name' }).check(
      refine((n: string) => isNodeName(n), {
        error: (iss) => `"${printable(String(iss.input))}" is not a node name (RFC 1123: lower-case letters, digits, - and .)`,
      }),
    ),
  ),
};

export type RoutesConfig = ModeConfig<typeof fields>;

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

Examples:
  kubeward routes --provider azure
  kubeward routes --provider gcp --remove-conflicting-routes
  kubeward routes --provider gcp --vip 10.0.0.2 --ports 6443,22623 --backend iptables
  kubeward routes --provider azure --clean-up
`;

const spec: ModeSpec<typeof fields> = {
  name: 'routes',
  summary: 'program nftables/iptables so the node\'s own API VIP traffic goes to the local apiserver only while it is healthy',
  helpAfter,
  adminPort: 9451,
  fields,
  flags: [
    { key: 'provider', value: '<gcp|azure>', help: 'the cloud whose load balancer hairpin to fix (required)' },
    { key: 'backend', value: '<nftables|iptables>', help: 'how rules are programmed', defaultText: 'nftables' },
    { key: 'stateDir', value: '<dir>', help: 'where kubeward watch (or apiserver-watcher) writes <VIP>.up / <VIP>.down', defaultText: '/run/cloud-routes' },
    { key: 'heartbeatDir', value: '<dir>', help: 'where kubeward watch writes <VIP>.beat heartbeats (kept out of --state-dir)', defaultText: '<state-dir>-heartbeat' },
    { key: 'vip', value: '<ip>', help: 'a VIP to manage; default: every VIP with a state file (azure) or every forwarded IP (gcp)', repeatable: true },
    { key: 'resync', value: '<duration>', help: 'full re-read, drift check and metadata read interval', defaultText: '10s' },
    { key: 'staleAfter', value: '<duration>', help: 'a heartbeat older than this means down; 0 turns the check off', defaultText: '30s' },
    { key: 'ports', value: '<ports|all>', help: 'TCP ports the rules match, comma-separated, or all (every port and protocol, as OpenShift)', defaultText: 'all' },
    { key: 'withoutStateFile', value: '<up|down>', help: 'a managed VIP with neither file: up (gcp-routes.sh) or down (azure-routes.sh)', defaultText: 'up on gcp, down on azure' },
    { key: 'natTarget', value: '<redirect|node-ip>', help: 'redirect (loopback for the node\'s own traffic) or dnat to --node-ip, for apiservers not listening on loopback', defaultText: 'redirect' },
    { key: 'nodeIp', value: '<ip>', help: 'the node address per family, for --nat-target node-ip', repeatable: true },
    { key: 'healthCheckerCidr', value: '<cidr|none>', help: 'gcp: forwarded packets from these sources are dropped', defaultText: GCP_HEALTH_CHECKERS.join(', '), repeatable: true },
    { key: 'metadataUrl', value: '<url|off>', help: 'gcp: metadata server base; read when no --vip is given', defaultText: DEFAULT_METADATA_URL },
    { key: 'metadataTimeout', value: '<duration>', help: 'gcp: deadline for one metadata request', defaultText: '2s' },
    { key: 'removeConflictingRoutes', help: 'gcp: delete local proto 66 routes for managed VIPs instead of only reporting them' },
    { key: 'cleanupOnExit', help: 'remove our rules on SIGTERM/SIGINT (a restart then has a moment without them)', defaultText: 'off', negatable: true },
    { key: 'cleanUp', help: 'remove our rules (nftables table or iptables chains, and our OVN reroute policies) and exit; for uninstalling' },
    { key: 'ovnReroute', value: '<auto|off>', help: 'OVN-Kubernetes shared gateway: keep ovn_cluster_router reroute policies for up VIPs while an ovnkube-controller container runs (crictl), as OpenShift does', defaultText: 'auto' },
    { key: 'ovnNodeName', value: '<name>', help: 'the node name in OVN\'s router port rtos-<name>', defaultText: 'the host name' },
  ],
  check: (c) => {
    if (c.natTarget === 'node-ip' && c.nodeIp.length === 0) return '--nat-target node-ip needs --node-ip IP (one per family you use)';
    const families = c.nodeIp.map((ip) => isIP(ip));
    if (new Set(families).size !== families.length) return '--node-ip: give at most one IPv4 and one IPv6 address';
    if (c.nodeIp.some((ip) => canonicalIp(ip) === undefined)) return '--node-ip: a node address has no zone id; give it like 10.0.1.11';
    if (c.provider === 'gcp' && c.vip.length === 0 && c.metadataUrl === 'off') return '--provider gcp needs --vip IP or the metadata server (--metadata-url is off)';
    if (c.healthCheckerCidr.includes('none') && c.healthCheckerCidr.length > 1) return '--health-checker-cidr none cannot be mixed with ranges';
    if (c.heartbeatDir !== undefined && c.heartbeatDir.replace(/\/+$/, '') === c.stateDir.replace(/\/+$/, '')) {
      return '--heartbeat-dir must not be --state-dir: OpenShift\'s consumers watch the state directory, so heartbeats there wake them every beat';
    }
    return undefined;
  },
  run: async (c, { log, registry, shutdown }) => {
    const run = (argv: readonly string[], opts?: Parameters<typeof execCommand>[1]) => execCommand(argv, opts);
    const backend = c.backend === 'nftables' ? new NftBackend(run) : new IptablesBackend(run);
    await checkTool(c.backend === 'nftables' ? ['nft', '--version'] : ['iptables-restore', '--version'], c.backend);
    const ovn = c.ovnReroute === 'auto' ? new OvnReroute(run, c.ovnNodeName ?? hostname()) : undefined;
    if (c.cleanUp) {
      await backend.cleanup();
      log.info({ backend: backend.name }, 'removed our rules (--clean-up)');
      if (ovn) log.info({ removed: await ovn.removeAll() }, 'removed our OVN reroute policies (--clean-up)');
      return 0;
    }
    // The reader reports changes to the agent, which is built after it.
    const wake: { agent?: RoutesAgent } = {};
    const reader = new StateDirReader(c.stateDir, () => wake.agent?.requestSync('event'), log, c.heartbeatDir ?? defaultHeartbeatDir(c.stateDir));
    try {
      await reader.ensureWatching();
    } catch (err) {
      throw new UsageError(`--state-dir ${c.stateDir}: cannot create or watch it (${describeError(err)})`, { cause: err });
    }
    const useMetadata = c.provider === 'gcp' && c.metadataUrl !== 'off' && (c.vip.length === 0 || c.metadataUrl !== undefined);
    const nodeIps: Partial<Record<Family, string>> = {};
    for (const ip of c.nodeIp) nodeIps[isIP(ip) as Family] = canonicalIp(ip)!;
    const withoutStateFile = c.withoutStateFile ?? (c.provider === 'gcp' ? 'up' : 'down');
    const agent = new RoutesAgent(
      {
        provider: c.provider,
        staleAfterMs: c.staleAfter,
        resyncMs: c.resync,
        ports: c.ports,
        natTarget: c.natTarget,
        nodeIps,
        healthCheckerCidrs: c.healthCheckerCidr.filter((x) => x !== 'none'),
        vips: c.vip,
        removeConflictingRoutes: c.removeConflictingRoutes,
        cleanupOnExit: c.cleanupOnExit,
        withoutStateFile,
      },
      {
        reader,
        backend,
        vipSource: useMetadata ? new GcpVipSource(c.metadataUrl ?? DEFAULT_METADATA_URL, c.metadataTimeout, systemClock) : undefined,
        localRoutes: c.provider === 'gcp' ? { list: () => listGuestAgentRoutes(run), remove: (r) => removeLocalRoute(run, r) } : undefined,
        foreignTables: () => listForeignTables(run),
        ovn,
        clock: systemClock,
        log,
        metrics: createRoutesMetrics(registry),
      },
    );
    wake.agent = agent;
    shutdown.add('routes agent', () => agent.close(), 15_000);
    log.info(
      { provider: c.provider, backend: c.backend, stateDir: c.stateDir, ports: c.ports, natTarget: c.natTarget, withoutStateFile, cleanupOnExit: c.cleanupOnExit },
      'kubeward routes starting',
    );
    if (ovn) {
      log.info({ node: ovn.status.node, see: 'OCPBUGS-9972, OCPBUGS-17841' }, 'OVN-Kubernetes shared gateway: while an ovnkube-controller container runs, up VIPs get ovn_cluster_router reroute policies (priority 1010), as OpenShift does');
    } else {
      log.warn(
        { see: 'OCPBUGS-9972, OCPBUGS-17841' },
        'not covered (--ovn-reroute off): OVN-Kubernetes shared-gateway mode sends pod traffic to the VIP past the host rules, so pods on this node still hairpin',
      );
    }
    if (c.provider === 'gcp' && withoutStateFile === 'up') {
      log.info('a managed VIP with no state file is treated as up (the node\'s own traffic goes to the local apiserver), as gcp-routes.sh does; --without-state-file down withdraws it instead');
    }
    await agent.start();
    return {
      readiness: () => (agent.ready ? { ready: true, reason: 'rules in force' } : { ready: false, reason: 'last sync failed or none yet' }),
      status: () => agent.status(),
    };
  },
};

/** OpenShift's tables as nft lists them; none when nft is not installed (an iptables-only host). */
async function listForeignTables(run: (argv: readonly string[], opts?: Parameters<typeof execCommand>[1]) => ReturnType<typeof execCommand>): Promise<string[]> {
  try {
    return parseForeignTables((await run(['nft', 'list', 'tables'], { timeoutMs: 5000 })).stdout);
  } catch (err) {
    if (isMissingTool(err)) return [];
    throw err;
  }
}

async function checkTool(argv: string[], backend: string): Promise<void> {
  try {
    await execCommand(argv, { timeoutMs: 5000 });
  } catch (err) {
    throw new UsageError(`--backend ${backend}: cannot run ${argv[0]} (${describeError(err)}); install it or pick the other backend`, { cause: err });
  }
}

export function routesCommand() {
  return buildModeCommand(spec);
}

/** The mode's declaration, for kubeward agent (a routes section has the same keys). */
export { spec as routesMode };
