// `kubeward routes`: turns the watcher's <VIP>.up / <VIP>.down files into nftables or iptables
// rules so the node's own API VIP traffic goes to the local apiserver only while it is healthy.
// Composition root: config (src/routes/routes-config.ts) → state directory, backend, GCP metadata, local routes → agent.
// Close order: the agent stops and (by default) removes its rules, then the admin listener closes.
import { isIP } from 'node:net';
import { systemClock } from '../base/clock.ts';
import { UsageError, describeError } from '../base/errors.ts';
import { execCommand } from '../sys/exec.ts';
import { canonicalIp } from '../base/ip.ts';
import { defaultHeartbeatDir } from '../watch/state-record.ts';
import { parseForeignTables } from '../routes/foreign-tables.ts';
import { isMissingTool } from '../routes/rules-backend.ts';
import { OvnReroute } from '../routes/ovn-reroute.ts';
import { hostname } from 'node:os';
import type { Family } from '../routes/desired-ruleset.ts';
import { IptablesBackend } from '../routes/iptables-backend.ts';
import { NftBackend } from '../routes/nft-backend.ts';
import { StateDirReader } from '../routes/state-dir-reader.ts';
import { DEFAULT_METADATA_URL, GcpVipSource } from '../routes/gcp-vip-source.ts';
import { listGuestAgentRoutes, removeLocalRoute } from '../routes/conflicting-routes.ts';
import { createRoutesMetrics } from '../routes/routes-metrics.ts';
import { RoutesAgent } from '../routes/routes-agent.ts';
import { PeerChecker } from '../routes/peer-checker.ts';
import { routesDeclaration, type routesFields } from '../routes/routes-config.ts';
import { buildModeCommand, type ModeSpec } from './mode-command.ts';

const spec: ModeSpec<typeof routesFields> = {
  ...routesDeclaration,
  // The tool the backend runs, asked for its version only: no table is read or written.
  checkFiles: async (c) => checkTool(c.backend === 'nftables' ? ['nft', '--version'] : ['iptables-restore', '--version'], c.backend),
  run: async (c, { log, registry, shutdown, handover }) => {
    const run = (argv: readonly string[], opts?: Parameters<typeof execCommand>[1]) => execCommand(argv, opts);
    const backend = c.backend === 'nftables' ? new NftBackend(run) : new IptablesBackend(run);
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
    const peers = c.downPeer.length
      ? new PeerChecker({
          peers: c.downPeer,
          port: c.downPeerPort,
          check: c.downPeerCheck,
          intervalMs: c.downPeerInterval,
          clock: systemClock,
          log,
          onChange: () => wake.agent?.requestSync('event'),
        })
      : undefined;
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
        ...(peers ? { downPeerWindowMs: c.downPeerWindow } : {}),
      },
      {
        reader,
        backend,
        vipSource: useMetadata ? new GcpVipSource(c.metadataUrl ?? DEFAULT_METADATA_URL, c.metadataTimeout, systemClock) : undefined,
        localRoutes: c.provider === 'gcp' ? { list: () => listGuestAgentRoutes(run), remove: (r) => removeLocalRoute(run, r) } : undefined,
        foreignTables: () => listForeignTables(run),
        ovn,
        peers,
        clock: systemClock,
        log,
        metrics: createRoutesMetrics(registry),
      },
    );
    wake.agent = agent;
    // After a hand-over (--handover-socket) the successor keeps these rules: even with
    // --cleanup-on-exit they stay, or the VIP would hairpin through no rule until its first sync.
    shutdown.add('routes agent', () => agent.close({ keepRules: handover?.handedOver === true }), 15_000);
    if (peers) shutdown.add('down-peer checks', () => peers.close(), 5000);
    log.info(
      {
        provider: c.provider,
        backend: c.backend,
        stateDir: c.stateDir,
        ports: c.ports,
        natTarget: c.natTarget,
        withoutStateFile,
        cleanupOnExit: c.cleanupOnExit,
      },
      'kubeward routes starting',
    );
    if (ovn) {
      log.info(
        { node: ovn.status.node, see: 'OCPBUGS-9972, OCPBUGS-17841' },
        'OVN-Kubernetes shared gateway: while an ovnkube-controller container runs, up VIPs get ovn_cluster_router reroute policies (priority 1010), as OpenShift does',
      );
    } else {
      log.warn(
        { see: 'OCPBUGS-9972, OCPBUGS-17841' },
        'not covered (--ovn-reroute off): OVN-Kubernetes shared-gateway mode sends pod traffic to the VIP past the host rules, so pods on this node still hairpin',
      );
    }
    if (c.provider === 'gcp' && withoutStateFile === 'up') {
      log.info(
        "a managed VIP with no state file is treated as up (the node's own traffic goes to the local apiserver), as gcp-routes.sh does; --without-state-file down withdraws it instead",
      );
    }
    if (peers) {
      await peers.start();
      log.info(
        { peers: c.downPeer, healthy: peers.healthy(), windowMs: c.downPeerWindow, see: 'OCPBUGS-100298' },
        "for --down-peer-window after a VIP turns down, the node's own new connections to it go to the first healthy --down-peer",
      );
    }
    await agent.start();
    return {
      readiness: () => (agent.ready ? { ready: true, reason: 'rules in force' } : { ready: false, reason: 'last sync failed or none yet' }),
      status: () => agent.status(),
    };
  },
};

/** OpenShift's tables as nft lists them; none when nft is not installed (an iptables-only host). */
async function listForeignTables(
  run: (argv: readonly string[], opts?: Parameters<typeof execCommand>[1]) => ReturnType<typeof execCommand>,
): Promise<string[]> {
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
