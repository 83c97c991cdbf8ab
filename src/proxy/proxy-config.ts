// kubeward proxy's configuration: the zod fields (flags and file), the typed config they resolve
// to, and the checks across keys (duplicate listen addresses, missing upstreams). Defaults live here.
import { readFile } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import { z } from 'zod';
import { UsageError, describeError } from '../base/errors.ts';
import { flagNameOf } from '../config/load-config.ts';
import { caBundleProblem, checkToken, clientPairProblem } from '../probe/tls-material.ts';
import { boolean, duration, filePath, formatHostPort, hostPort, integer, isHostName, upstreamHostPort, type HostPort } from '../config/fields.ts';

export const HEALTH_CHECK_TYPES = ['readyz', 'tls', 'tcp'] as const;
export type HealthCheckType = (typeof HEALTH_CHECK_TYPES)[number];

export interface HealthCheckConfig {
  type: HealthCheckType;
  /** HTTP path for readyz checks: /readyz for kube-apiserver, /health for etcd. */
  path: string;
  caFile?: string;
  clientCert?: string;
  clientKey?: string;
  tokenFile?: string;
  insecureSkipTlsVerify: boolean;
  /** TLS name to verify when upstreams are addressed by IP but the certificate names a host. */
  serverName?: string;
  intervalMs: number;
  timeoutMs: number;
  rise: number;
  fall: number;
}

/** A health check with its PEM files read (in-process callers may fill ca/cert/key directly). */
export interface LoadedHealthCheck extends HealthCheckConfig {
  ca?: string;
  cert?: string;
  key?: string;
}

export interface FrontendConfig {
  name: string;
  listen: HostPort[];
  upstreams: HostPort[];
  healthCheck: HealthCheckConfig | LoadedHealthCheck;
  connectTimeoutMs: number;
  /** 0 means no idle timeout. */
  idleTimeoutMs: number;
  /**
   * A connection whose client has sent bytes but whose upstream sent none within this long marks
   * the upstream down at once (a hung server: the kernel accepts, nothing answers). 0 or absent:
   * off (in-process callers); the config file and flags resolve it per check type.
   */
  firstByteTimeoutMs?: number;
  /** Further upstreams tried for one client connection after a failed connect; undefined: each upstream once. */
  maxRetries?: number;
  drainSpreadMs: number;
  /** How long a recovered upstream's share of new connections ramps up; 0 turns slow start off. Absent: DEFAULTS.slowStart. */
  slowStartMs?: number;
  /** Absent: on, with the defaults. */
  rebalance?: RebalanceConfig;
  /** Absent: the upstream list is the configured one (static). */
  discovery?: DiscoveryConfig;
  /**
   * Most client connections open at once; the next is closed at accept. Absent: derived from the
   * process's file descriptor limit, keeping a reserve for checks (see fd-budget.ts).
   */
  maxConnections?: number;
}

export interface DiscoveryConfig {
  type: 'kubernetes';
  /** Credentials; absent: the pod's service account (in-cluster). The server is always this frontend. */
  kubeconfig?: string;
  /** Changes closer together than this are applied as one. */
  debounceMs: number;
  /** Where the last good list is kept across restarts. */
  cacheFile: string;
}

export interface RebalanceConfig {
  enabled: boolean;
  /** Largest difference in connections between healthy upstreams that is left alone. */
  thresholdConnections: number;
  /** At most one connection closed per interval (jittered ±50%) per frontend. */
  intervalMs: number;
  /** Connections younger than this are never closed (requests in flight, clients that just moved). */
  minAgeMs: number;
}

export interface ProxyConfig {
  frontends: FrontendConfig[];
  shutdownGraceMs: number;
}

export const DEFAULTS = {
  listen: '127.0.0.1:6443',
  healthCheck: 'readyz',
  healthPath: '/readyz',
  interval: '1s',
  timeout: '1s',
  rise: 2,
  fall: 2,
  connectTimeout: '1s',
  idleTimeout: '10m',
  /** For TLS upstreams (readyz and tls checks), whose handshake answers at once; off for tcp. */
  firstByteTimeout: '1s',
  drainSpread: '5s',
  shutdownGrace: '30s',
  slowStart: '30s',
  rebalance: true,
  rebalanceThreshold: 2,
  rebalanceInterval: '1s',
  rebalanceMinAge: '30s',
  discovery: 'static',
  discoveryDebounce: '1s',
  cacheFile: '/var/lib/kubeward/proxy-upstreams.json',
  workers: 1,
} as const;

export const DISCOVERY_TYPES = ['static', 'kubernetes'] as const;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** The largest --max-connections; the real cap is also bounded by the process's file descriptor limit. */
export const MAX_CONNECTIONS_LIMIT = 1_000_000;

const checkType = z.enum(HEALTH_CHECK_TYPES, { error: 'expected readyz, tls or tcp' });
const path = z.string().regex(/^\//, 'expected a path starting with /, like /readyz');
const file = filePath();

/** Keys shared by the top level (defaults for every frontend) and each frontend. */
const tuning = {
  interval: duration({ min: 50, max: HOUR }).optional(),
  timeout: duration({ min: 10, max: 5 * MINUTE }).optional(),
  rise: integer(1, 100).optional(),
  fall: integer(1, 100).optional(),
  connectTimeout: duration({ min: 10, max: 5 * MINUTE }).optional(),
  idleTimeout: duration().optional(),
  firstByteTimeout: duration({ max: 5 * MINUTE }).optional(),
  maxRetries: integer(0, 100).optional(),
  drainSpread: duration({ max: HOUR }).optional(),
  slowStart: duration({ max: HOUR }).optional(),
  rebalance: boolean.optional(),
  rebalanceThreshold: integer(0, 100_000).optional(),
  rebalanceInterval: duration({ min: 10, max: HOUR }).optional(),
  rebalanceMinAge: duration().optional(),
  discovery: z.enum(DISCOVERY_TYPES, { error: 'expected static or kubernetes' }).optional(),
  kubeconfig: file.optional(),
  discoveryDebounce: duration({ max: 5 * MINUTE }).optional(),
  cacheFile: file.optional(),
  maxConnections: integer(1, MAX_CONNECTIONS_LIMIT).optional(),
};

const healthCheckObject = z.strictObject({
  type: checkType.optional(),
  path: path.optional(),
  caFile: file.optional(),
  clientCert: file.optional(),
  clientKey: file.optional(),
  tokenFile: file.optional(),
  insecureSkipTlsVerify: boolean.optional(),
  serverName: z.string().refine((n) => isHostName(n), { error: 'expected a DNS name (the name in the upstream certificate)' }).optional(),
  interval: tuning.interval,
  timeout: tuning.timeout,
  rise: tuning.rise,
  fall: tuning.fall,
});

const frontendObject = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'expected a short name of lowercase letters, digits, - or _'),
  listen: z.array(hostPort, { error: 'expected a list of HOST:PORT' }).min(1, 'list at least one HOST:PORT to listen on'),
  upstreams: z.array(upstreamHostPort, { error: 'expected a list of HOST:PORT' }).min(1, 'list at least one upstream HOST:PORT'),
  healthCheck: healthCheckObject.optional(),
  connectTimeout: tuning.connectTimeout,
  idleTimeout: tuning.idleTimeout,
  firstByteTimeout: tuning.firstByteTimeout,
  maxRetries: tuning.maxRetries,
  drainSpread: tuning.drainSpread,
  slowStart: tuning.slowStart,
  rebalance: tuning.rebalance,
  rebalanceThreshold: tuning.rebalanceThreshold,
  rebalanceInterval: tuning.rebalanceInterval,
  rebalanceMinAge: tuning.rebalanceMinAge,
  discovery: tuning.discovery,
  kubeconfig: tuning.kubeconfig,
  discoveryDebounce: tuning.discoveryDebounce,
  cacheFile: tuning.cacheFile,
  maxConnections: tuning.maxConnections,
});

export const proxyFields = {
  listen: z.array(hostPort).optional(),
  upstream: z.array(upstreamHostPort).optional(),
  healthCheck: checkType.optional(),
  healthPath: path.optional(),
  caFile: file.optional(),
  clientCert: file.optional(),
  clientKey: file.optional(),
  tokenFile: file.optional(),
  insecureSkipTlsVerify: boolean.optional(),
  ...tuning,
  shutdownGrace: duration({ max: HOUR }).optional(),
  watchConfig: boolean.optional(),
  reusePort: boolean.optional(),
  workers: z.union([z.literal('auto'), integer(1, 64)], { error: 'expected a whole number from 1 to 64, or auto' }).optional(),
  frontends: z.array(frontendObject, { error: 'expected a list of frontends (name, listen, upstreams, ...)' }).optional(),
};

type Raw = z.output<z.ZodObject<typeof proxyFields>>;
type RawFrontend = z.output<typeof frontendObject>;

/** The frontend the flags describe (--listen/--upstream) is called this. */
export const FLAGS_FRONTEND = 'default';

export function resolveProxyConfig(raw: Raw): ProxyConfig {
  const frontends: FrontendConfig[] = [];
  if (raw.upstream?.length) {
    frontends.push(resolveFrontend(raw, { name: FLAGS_FRONTEND, listen: raw.listen ?? [parseDefaultListen()], upstreams: raw.upstream }));
  }
  for (const f of raw.frontends ?? []) frontends.push(resolveFrontend(raw, f));
  return { frontends, shutdownGraceMs: raw.shutdownGrace ?? ms(DEFAULTS.shutdownGrace) };
}

function resolveFrontend(top: Raw, f: Pick<RawFrontend, 'name' | 'listen' | 'upstreams'> & Partial<RawFrontend>): FrontendConfig {
  const hc = f.healthCheck ?? {};
  const type = hc.type ?? top.healthCheck ?? DEFAULTS.healthCheck;
  return {
    name: f.name,
    listen: f.listen,
    upstreams: f.upstreams,
    healthCheck: {
      type,
      path: hc.path ?? top.healthPath ?? DEFAULTS.healthPath,
      caFile: hc.caFile ?? top.caFile,
      clientCert: hc.clientCert ?? top.clientCert,
      clientKey: hc.clientKey ?? top.clientKey,
      tokenFile: hc.tokenFile ?? top.tokenFile,
      insecureSkipTlsVerify: hc.insecureSkipTlsVerify ?? top.insecureSkipTlsVerify ?? false,
      serverName: hc.serverName,
      intervalMs: hc.interval ?? top.interval ?? ms(DEFAULTS.interval),
      timeoutMs: hc.timeout ?? top.timeout ?? ms(DEFAULTS.timeout),
      rise: hc.rise ?? top.rise ?? DEFAULTS.rise,
      fall: hc.fall ?? top.fall ?? DEFAULTS.fall,
    },
    connectTimeoutMs: f.connectTimeout ?? top.connectTimeout ?? ms(DEFAULTS.connectTimeout),
    idleTimeoutMs: f.idleTimeout ?? top.idleTimeout ?? ms(DEFAULTS.idleTimeout),
    // Only TLS upstreams are sure to answer a client's first bytes at once (the handshake); a plain
    // TCP service may legitimately think for longer before its first byte.
    firstByteTimeoutMs: f.firstByteTimeout ?? top.firstByteTimeout ?? (type === 'tcp' ? 0 : ms(DEFAULTS.firstByteTimeout)),
    maxRetries: f.maxRetries ?? top.maxRetries,
    drainSpreadMs: f.drainSpread ?? top.drainSpread ?? ms(DEFAULTS.drainSpread),
    slowStartMs: f.slowStart ?? top.slowStart ?? ms(DEFAULTS.slowStart),
    rebalance: {
      enabled: f.rebalance ?? top.rebalance ?? DEFAULTS.rebalance,
      thresholdConnections: f.rebalanceThreshold ?? top.rebalanceThreshold ?? DEFAULTS.rebalanceThreshold,
      intervalMs: f.rebalanceInterval ?? top.rebalanceInterval ?? ms(DEFAULTS.rebalanceInterval),
      minAgeMs: f.rebalanceMinAge ?? top.rebalanceMinAge ?? ms(DEFAULTS.rebalanceMinAge),
    },
    discovery:
      (f.discovery ?? top.discovery ?? DEFAULTS.discovery) === 'kubernetes'
        ? {
            type: 'kubernetes',
            kubeconfig: f.kubeconfig ?? top.kubeconfig,
            debounceMs: f.discoveryDebounce ?? top.discoveryDebounce ?? ms(DEFAULTS.discoveryDebounce),
            cacheFile: f.cacheFile ?? top.cacheFile ?? DEFAULTS.cacheFile,
          }
        : undefined,
    maxConnections: f.maxConnections ?? top.maxConnections,
  };
}

/** The frontend's slow start and rebalancing settings, with the defaults for what an in-process caller left out. */
export function herdSettings(f: FrontendConfig): { slowStartMs: number; rebalance: RebalanceConfig } {
  return {
    slowStartMs: f.slowStartMs ?? ms(DEFAULTS.slowStart),
    rebalance: f.rebalance ?? {
      enabled: DEFAULTS.rebalance,
      thresholdConnections: DEFAULTS.rebalanceThreshold,
      intervalMs: ms(DEFAULTS.rebalanceInterval),
      minAgeMs: ms(DEFAULTS.rebalanceMinAge),
    },
  };
}

/** Problems across keys, each naming the key and the fix; undefined when the config is usable. */
export function checkProxyConfig(raw: Raw): string | undefined {
  if (raw.listen?.length && !raw.upstream?.length) return '--listen needs at least one --upstream HOST:PORT to forward to';
  const { frontends } = resolveProxyConfig(raw);
  if (frontends.length === 0) {
    return 'nothing to proxy: give --upstream HOST:PORT (repeatable), or "frontends:" in the --config file';
  }
  const fromFlags = raw.upstream?.length ? 1 : 0;
  const key = (i: number, sub: string) => (i < fromFlags ? `--${sub === 'listen' ? 'listen' : 'upstream'}` : `frontends[${i - fromFlags}].${sub}`);
  const names = new Set<string>();
  const listens = new Map<string, string>();
  for (const [i, f] of frontends.entries()) {
    if (names.has(f.name)) return `${key(i, 'name')}: the frontend name "${f.name}" is used twice; give each frontend its own name`;
    names.add(f.name);
    for (const l of f.listen) {
      const addr = formatHostPort(l);
      const other = listens.get(addr);
      if (other && l.port !== 0) return `${key(i, 'listen')}: ${addr} is also the listen address of frontend "${other}"; each listen address may appear once`;
      listens.set(addr, f.name);
    }
    const seen = new Set<string>();
    for (const u of f.upstreams) {
      const addr = formatHostPort(u);
      if (seen.has(addr)) return `${key(i, 'upstreams')}: ${addr} is listed twice; list each upstream once`;
      seen.add(addr);
    }
    const hc = f.healthCheck;
    if (Boolean(hc.clientCert) !== Boolean(hc.clientKey)) {
      return `${i < fromFlags ? '--client-cert/--client-key' : key(i, 'healthCheck.clientCert/clientKey')}: give both or neither`;
    }
  }
  // Without a CA the check would verify against the public Web PKI, which no cluster CA is part
  // of: every upstream would be down and the proxy in permanent fail-open, without a word.
  for (const [i, f] of frontends.entries()) {
    const hc = f.healthCheck;
    if (hc.type === 'tcp' || hc.caFile || hc.insecureSkipTlsVerify) continue;
    const where = i < fromFlags ? `--health-check ${hc.type}` : `frontends[${i - fromFlags}].healthCheck (type ${hc.type})`;
    return `${where}: give --ca-file FILE (the cluster CA, usually /etc/kubernetes/pki/ca.crt; healthCheck.caFile in the file) or, to skip verification, --insecure-skip-tls-verify`;
  }
  return undefined;
}

/**
 * Reads the CA, client certificate and key files and checks them with the token file, at start and
 * on every reload: unreadable or unusable material is a UsageError naming the flag (or key), never
 * a crash at the first probe.
 */
export async function loadHealthCheck(frontend: FrontendConfig): Promise<LoadedHealthCheck> {
  const hc: LoadedHealthCheck = { ...frontend.healthCheck };
  const where = (key: 'caFile' | 'clientCert' | 'clientKey' | 'tokenFile', path?: string): string =>
    `${frontend.name === FLAGS_FRONTEND ? flagNameOf(key) : `frontend "${frontend.name}": healthCheck.${key}`}${path === undefined ? '' : ` ${path}`}`;
  const read = async (key: 'caFile' | 'clientCert' | 'clientKey' | 'tokenFile', path: string | undefined): Promise<string | undefined> => {
    if (path === undefined) return undefined;
    try {
      return await readFile(resolvePath(path), 'utf8');
    } catch (err) {
      throw new UsageError(`${where(key, path)}: cannot read (${describeError(err)})`, { cause: err });
    }
  };
  hc.ca ??= await read('caFile', hc.caFile);
  hc.cert ??= await read('clientCert', hc.clientCert);
  hc.key ??= await read('clientKey', hc.clientKey);
  if (hc.ca !== undefined) {
    const problem = caBundleProblem(String(hc.ca));
    if (problem) throw new UsageError(`${where('caFile', hc.caFile)}: ${problem}`);
  }
  if (hc.cert !== undefined && hc.key !== undefined) {
    const bad = clientPairProblem(String(hc.cert), String(hc.key));
    if (bad) throw new UsageError(`${where(bad.key === 'cert' ? 'clientCert' : 'clientKey', bad.key === 'cert' ? hc.clientCert : hc.clientKey)}: ${bad.problem}`);
  }
  if (hc.tokenFile !== undefined) {
    const token = checkToken((await read('tokenFile', hc.tokenFile))!);
    if (!token.ok) throw new UsageError(`${where('tokenFile', hc.tokenFile)}: the token ${token.problem}`);
  }
  return hc;
}

function ms(text: string): number {
  return duration().parse(text);
}

function parseDefaultListen(): HostPort {
  return hostPort.parse(DEFAULTS.listen);
}
