// kubeward proxy's configuration: the zod fields (flags and file), the typed config they resolve
// to, the checks across keys (duplicate listen addresses, missing upstreams), and the flags' help
// text. Defaults live here; the command (src/cli/proxy.ts), --help and docs/proxy.md come from it.
import { readFile } from 'node:fs/promises';
import { resolve as resolvePath } from 'node:path';
import { array, enum as zEnum, literal, optional, refine, regex, string, strictObject, union, minLength } from 'zod/mini';
import type { output, ZodMiniObject } from 'zod/mini';
import type { ModeDeclaration } from '../config/mode-declaration.ts';
import { UsageError, describeError } from '../base/errors.ts';
import { flagNameOf } from '../config/load-config.ts';
import { caBundleProblem, checkToken, clientPairProblem } from '../probe/tls-material.ts';
import {
  boolean,
  checkHostPort,
  duration,
  filePath,
  formatHostPort,
  hostPort,
  integer,
  isHostName,
  Refused,
  textField,
  upstreamHostPort,
  type HostPort,
} from '../config/fields.ts';
import { isIP } from 'node:net';
import type { NameAndPort } from './dns-upstreams.ts';
import type { PaceConfig } from './recovery-pace.ts';
import { parseKubeVersion, type KubeMinor } from './version-skew.ts';

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
  /** New connections per second to an upstream in its slow-start window (0: off). Absent: the defaults. */
  recovery?: PaceConfig;
  /** The node's kubelet version: upstreams older than it are used only while no other is up. Absent: no preference. */
  kubeletVersion?: KubeMinor;
  /** DNS names whose addresses are upstreams too, re-resolved every dnsRefreshMs (dns-upstreams.ts). */
  upstreamDns?: NameAndPort[];
  dnsRefreshMs?: number;
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
  /** New connections per second a recovering upstream may take, and the burst: see docs/design/recovery-pacing.md. */
  recoveryRate: 100,
  recoveryBurst: 20,
  rebalance: true,
  rebalanceThreshold: 2,
  rebalanceInterval: '1s',
  rebalanceMinAge: '30s',
  dnsRefresh: '30s',
  discovery: 'static',
  discoveryDebounce: '1s',
  cacheFile: '/var/lib/kubeward/proxy-upstreams.json',
  workers: 1,
  workerAccept: 'reuseport',
} as const;

export const DISCOVERY_TYPES = ['static', 'kubernetes'] as const;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** The largest --max-connections; the real cap is also bounded by the process's file descriptor limit. */
export const MAX_CONNECTIONS_LIMIT = 1_000_000;

/** NAME:PORT of --upstream-dns: a DNS name (an address belongs in --upstream) and a port. */
const dnsHostPort = textField((text): NameAndPort | Refused => {
  const r = checkHostPort(text, 1);
  if ('problem' in r) return new Refused(r.problem);
  if (isIP(r.host) !== 0 || !isHostName(r.host))
    return new Refused(`${JSON.stringify(text)}: expected a DNS name and a port, like api.cluster.internal:6443 (give an address with --upstream)`);
  return { name: r.host, port: r.port };
});

const checkType = zEnum(HEALTH_CHECK_TYPES, { error: 'expected readyz, tls or tcp' });
const path = string().check(regex(/^\//, 'expected a path starting with /, like /readyz'));
const file = filePath();

/** Keys shared by the top level (defaults for every frontend) and each frontend. */
const tuning = {
  interval: optional(duration({ min: 50, max: HOUR })),
  timeout: optional(duration({ min: 10, max: 5 * MINUTE })),
  rise: optional(integer(1, 100)),
  fall: optional(integer(1, 100)),
  connectTimeout: optional(duration({ min: 10, max: 5 * MINUTE })),
  idleTimeout: optional(duration()),
  firstByteTimeout: optional(duration({ max: 5 * MINUTE })),
  maxRetries: optional(integer(0, 100)),
  drainSpread: optional(duration({ max: HOUR })),
  slowStart: optional(duration({ max: HOUR })),
  recoveryRate: optional(integer(0, 100_000)),
  recoveryBurst: optional(integer(1, 100_000)),
  kubeletVersion: optional(
    string().check(
      refine((v: string) => parseKubeVersion(v) !== undefined, { error: 'expected a Kubernetes version like v1.31 or 1.31.2 (kubelet --version)' }),
    ),
  ),
  rebalance: optional(boolean),
  rebalanceThreshold: optional(integer(0, 100_000)),
  rebalanceInterval: optional(duration({ min: 10, max: HOUR })),
  rebalanceMinAge: optional(duration()),
  discovery: optional(zEnum(DISCOVERY_TYPES, { error: 'expected static or kubernetes' })),
  kubeconfig: optional(file),
  discoveryDebounce: optional(duration({ max: 5 * MINUTE })),
  cacheFile: optional(file),
  maxConnections: optional(integer(1, MAX_CONNECTIONS_LIMIT)),
  dnsRefresh: optional(duration({ min: 1000, max: HOUR })),
};

const healthCheckObject = strictObject({
  type: optional(checkType),
  path: optional(path),
  caFile: optional(file),
  clientCert: optional(file),
  clientKey: optional(file),
  tokenFile: optional(file),
  insecureSkipTlsVerify: optional(boolean),
  serverName: optional(string().check(refine((n: string) => isHostName(n), { error: 'expected a DNS name (the name in the upstream certificate)' }))),
  interval: tuning.interval,
  timeout: tuning.timeout,
  rise: tuning.rise,
  fall: tuning.fall,
});

const frontendObject = strictObject({
  name: string().check(regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'expected a short name of lowercase letters, digits, - or _')),
  listen: array(hostPort, { error: 'expected a list of HOST:PORT' }).check(minLength(1, 'list at least one HOST:PORT to listen on')),
  upstreams: optional(array(upstreamHostPort, { error: 'expected a list of HOST:PORT' })),
  upstreamDns: optional(array(dnsHostPort, { error: 'expected a list of NAME:PORT' })),
  healthCheck: optional(healthCheckObject),
  connectTimeout: tuning.connectTimeout,
  idleTimeout: tuning.idleTimeout,
  firstByteTimeout: tuning.firstByteTimeout,
  maxRetries: tuning.maxRetries,
  drainSpread: tuning.drainSpread,
  slowStart: tuning.slowStart,
  recoveryRate: tuning.recoveryRate,
  recoveryBurst: tuning.recoveryBurst,
  kubeletVersion: tuning.kubeletVersion,
  rebalance: tuning.rebalance,
  rebalanceThreshold: tuning.rebalanceThreshold,
  rebalanceInterval: tuning.rebalanceInterval,
  rebalanceMinAge: tuning.rebalanceMinAge,
  discovery: tuning.discovery,
  kubeconfig: tuning.kubeconfig,
  discoveryDebounce: tuning.discoveryDebounce,
  cacheFile: tuning.cacheFile,
  maxConnections: tuning.maxConnections,
  dnsRefresh: tuning.dnsRefresh,
});

export const proxyFields = {
  listen: optional(array(hostPort)),
  upstream: optional(array(upstreamHostPort)),
  upstreamDns: optional(array(dnsHostPort)),
  healthCheck: optional(checkType),
  healthPath: optional(path),
  caFile: optional(file),
  clientCert: optional(file),
  clientKey: optional(file),
  tokenFile: optional(file),
  insecureSkipTlsVerify: optional(boolean),
  ...tuning,
  shutdownGrace: optional(duration({ max: HOUR })),
  watchConfig: optional(boolean),
  reusePort: optional(boolean),
  handoverSocket: optional(file),
  relay: optional(zEnum(['handle', 'socket', 'native'], { error: 'expected handle, socket or native' })),
  workers: optional(union([literal('auto'), integer(1, 64)], { error: 'expected a whole number from 1 to 64, or auto' })),
  workerAccept: optional(zEnum(['primary', 'reuseport'], { error: 'expected primary or reuseport' })),
  frontends: optional(array(frontendObject, { error: 'expected a list of frontends (name, listen, upstreams, ...)' })),
};

type Raw = output<ZodMiniObject<typeof proxyFields>>;
type RawFrontend = output<typeof frontendObject>;

/** The frontend the flags describe (--listen/--upstream) is called this. */
export const FLAGS_FRONTEND = 'default';

export function resolveProxyConfig(raw: Raw): ProxyConfig {
  const frontends: FrontendConfig[] = [];
  if (raw.upstream?.length || raw.upstreamDns?.length) {
    frontends.push(
      resolveFrontend(raw, { name: FLAGS_FRONTEND, listen: raw.listen ?? [parseDefaultListen()], upstreams: raw.upstream ?? [], upstreamDns: raw.upstreamDns }),
    );
  }
  for (const f of raw.frontends ?? []) frontends.push(resolveFrontend(raw, f));
  return { frontends, shutdownGraceMs: raw.shutdownGrace ?? ms(DEFAULTS.shutdownGrace) };
}

function resolveFrontend(top: Raw, f: Pick<RawFrontend, 'name' | 'listen'> & Partial<RawFrontend>): FrontendConfig {
  const hc = f.healthCheck ?? {};
  const type = hc.type ?? top.healthCheck ?? DEFAULTS.healthCheck;
  return {
    name: f.name,
    listen: f.listen,
    upstreams: f.upstreams ?? [],
    ...(f.upstreamDns?.length ? { upstreamDns: f.upstreamDns, dnsRefreshMs: f.dnsRefresh ?? top.dnsRefresh ?? ms(DEFAULTS.dnsRefresh) } : {}),
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
    recovery: {
      ratePerSec: f.recoveryRate ?? top.recoveryRate ?? DEFAULTS.recoveryRate,
      burst: f.recoveryBurst ?? top.recoveryBurst ?? DEFAULTS.recoveryBurst,
    },
    kubeletVersion: parseKubeVersion(f.kubeletVersion ?? top.kubeletVersion ?? ''),
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
export function herdSettings(f: FrontendConfig): { slowStartMs: number; pace: PaceConfig; minVersion: KubeMinor | undefined; rebalance: RebalanceConfig } {
  return {
    minVersion: f.kubeletVersion,
    slowStartMs: f.slowStartMs ?? ms(DEFAULTS.slowStart),
    pace: f.recovery ?? { ratePerSec: DEFAULTS.recoveryRate, burst: DEFAULTS.recoveryBurst },
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
  if (raw.listen?.length && !raw.upstream?.length && !raw.upstreamDns?.length)
    return '--listen needs at least one --upstream HOST:PORT (or --upstream-dns NAME:PORT) to forward to';
  const { frontends } = resolveProxyConfig(raw);
  if (frontends.length === 0) {
    return 'nothing to proxy: give --upstream HOST:PORT (repeatable), or "frontends:" in the --config file';
  }
  const workers = raw.workers === 'auto' ? 2 : (raw.workers ?? DEFAULTS.workers);
  if (raw.handoverSocket !== undefined && workers > 1 && (raw.workerAccept ?? DEFAULTS.workerAccept) === 'reuseport')
    return '--handover-socket hands over the listeners of one process; with --workers use --worker-accept primary (the primary alone listens)';
  const fromFlags = raw.upstream?.length || raw.upstreamDns?.length ? 1 : 0;
  const key = (i: number, sub: string) => (i < fromFlags ? `--${sub === 'listen' ? 'listen' : 'upstream'}` : `frontends[${i - fromFlags}].${sub}`);
  const names = new Set<string>();
  const listens = new Map<string, string>();
  for (const [i, f] of frontends.entries()) {
    if (names.has(f.name)) return `${key(i, 'name')}: the frontend name "${f.name}" is used twice; give each frontend its own name`;
    names.add(f.name);
    if (f.upstreams.length === 0 && !f.upstreamDns?.length)
      return `${key(i, 'upstreams')}: list at least one upstream HOST:PORT, or NAME:PORT under upstreamDns`;
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

// The command: help text and flags (each flag's default from DEFAULTS above).

const HELP = `
Forwards TCP (TLS stays end to end) from each listen address to a healthy upstream: least
connections across the process, a refused or timed-out connect retried on the next upstream inside
the same client connection, fail-open when every upstream is down, and the connections of a dead
or drained upstream closed spread over --drain-spread.

Examples:
  # worker node: 127.0.0.1:6443 and [::1]:6443 to three apiservers, /readyz verified against the CA
  kubeward proxy --listen 127.0.0.1:6443 --listen [::1]:6443 \\
    --upstream 10.0.0.11:6443 --upstream 10.0.0.12:6443 --upstream 10.0.0.13:6443 \\
    --ca-file /etc/kubernetes/pki/ca.crt

  # apiserver on 6443 and etcd on 2379 from one file (frontends: name, listen, upstreams,
  # healthCheck {type, path, caFile, clientCert, clientKey, ...}, connectTimeout, idleTimeout,
  # maxRetries, drainSpread, slowStart, rebalance*); top-level keys are defaults for every frontend
  kubeward proxy --config /etc/kubeward/proxy.yaml

Reload: SIGHUP (or a change of the --config file with --watch-config) re-reads the config and
applies it in place; established connections stay. A config that does not load is logged and the
running one stays. Log and admin settings are read at start only.

Admin (loopback only): POST /upstreams/<frontend>/<host:port>/drain and /undrain.
The frontend made from --listen/--upstream is named "default".`;

/** The proxy mode's settings: flags, help, fields, admin port and the checks across keys (src/cli/proxy.ts adds the run). */
export const proxyDeclaration: ModeDeclaration<typeof proxyFields> = {
  name: 'proxy',
  summary: 'node-local load balancer for kube-apiserver and etcd (127.0.0.1:6443 → healthy upstreams)',
  helpAfter: HELP,
  adminPort: 9452,
  fields: proxyFields,
  flags: [
    { key: 'listen', value: '<host:port>', repeatable: true, help: 'address to accept clients on; IPv6 in brackets', defaultText: DEFAULTS.listen },
    { key: 'upstream', value: '<host:port>', repeatable: true, help: 'an apiserver (or etcd member) to forward to' },
    {
      key: 'upstreamDns',
      value: '<name:port>',
      repeatable: true,
      help: 'a DNS name whose addresses are upstreams, re-resolved every --dns-refresh; an address that leaves the answer stays until its replacement passes its checks',
    },
    {
      key: 'dnsRefresh',
      value: '<duration>',
      help: 'how often --upstream-dns names are resolved again; a failed or empty answer keeps the last good addresses',
      defaultText: DEFAULTS.dnsRefresh,
    },
    {
      key: 'healthCheck',
      value: '<readyz|tls|tcp>',
      help: 'readyz: HTTPS GET of --health-path; tls: handshake only; tcp: connect only',
      defaultText: DEFAULTS.healthCheck,
    },
    { key: 'healthPath', value: '<path>', help: 'path of the readyz check (/health for etcd)', defaultText: DEFAULTS.healthPath },
    { key: 'caFile', value: '<file>', help: 'CA bundle that upstream certificates must chain to (checks only; clients verify their own)' },
    { key: 'clientCert', value: '<file>', help: 'client certificate for checks (anonymous auth off, etcd)' },
    { key: 'clientKey', value: '<file>', help: 'key of --client-cert' },
    { key: 'tokenFile', value: '<file>', help: 'bearer token for checks, re-read on every check' },
    { key: 'insecureSkipTlsVerify', help: 'do not verify upstream certificates in checks' },
    { key: 'interval', value: '<duration>', help: 'time between checks of one upstream, jittered ±10%', defaultText: DEFAULTS.interval },
    { key: 'timeout', value: '<duration>', help: 'longest a check may take', defaultText: DEFAULTS.timeout },
    { key: 'rise', value: '<n>', help: 'consecutive good checks that bring a down upstream back', defaultText: String(DEFAULTS.rise) },
    { key: 'fall', value: '<n>', help: 'consecutive failed checks that take an upstream down', defaultText: String(DEFAULTS.fall) },
    {
      key: 'connectTimeout',
      value: '<duration>',
      help: 'TCP connect timeout; a timeout marks the upstream down and tries the next',
      defaultText: DEFAULTS.connectTimeout,
    },
    {
      key: 'idleTimeout',
      value: '<duration>',
      help: 'close a connection after this long without a byte either way; 0 for never',
      defaultText: DEFAULTS.idleTimeout,
    },
    { key: 'maxRetries', value: '<n>', help: 'further upstreams tried for one client connection after a failed connect', defaultText: 'each upstream once' },
    {
      key: 'drainSpread',
      value: '<duration>',
      help: 'window over which the connections of a dead or drained upstream are closed',
      defaultText: DEFAULTS.drainSpread,
    },
    {
      key: 'slowStart',
      value: '<duration>',
      help: "how long a recovered upstream's share of new connections ramps up (from 10%); 0 for off",
      defaultText: DEFAULTS.slowStart,
    },
    {
      key: 'recoveryRate',
      value: '<n>',
      help: 'new connections per second an upstream in its slow-start window may take (a token bucket); a client waits up to 5s for a token, then connects anyway; 0 for off',
      defaultText: String(DEFAULTS.recoveryRate),
    },
    {
      key: 'recoveryBurst',
      value: '<n>',
      help: 'connections a recovering upstream may take at once before --recovery-rate paces them',
      defaultText: String(DEFAULTS.recoveryBurst),
    },
    {
      key: 'kubeletVersion',
      value: '<version>',
      help: "this node's kubelet version (kubelet --version): upstreams whose /version is older are used only while no other is up",
      defaultText: 'no preference',
    },
    {
      key: 'rebalance',
      negatable: true,
      help: 'close quiet connections of the busiest healthy upstream, one per --rebalance-interval, while connection counts differ by more than --rebalance-threshold',
      defaultText: 'on',
    },
    {
      key: 'rebalanceThreshold',
      value: '<n>',
      help: 'difference in connections between healthy upstreams that is left alone',
      defaultText: String(DEFAULTS.rebalanceThreshold),
    },
    {
      key: 'rebalanceInterval',
      value: '<duration>',
      help: 'at most one rebalancing close per interval per frontend, jittered ±50%',
      defaultText: DEFAULTS.rebalanceInterval,
    },
    {
      key: 'rebalanceMinAge',
      value: '<duration>',
      help: 'connections younger than this are never closed for rebalancing',
      defaultText: DEFAULTS.rebalanceMinAge,
    },
    {
      key: 'discovery',
      value: '<static|kubernetes>',
      help: 'kubernetes: follow the default/kubernetes EndpointSlices (or Endpoints), read through this proxy; the --upstream list stays as the last resort',
      defaultText: DEFAULTS.discovery,
    },
    {
      key: 'kubeconfig',
      value: '<file>',
      help: 'credentials for --discovery kubernetes (its server is replaced by the listen address); default: the pod service account',
    },
    {
      key: 'discoveryDebounce',
      value: '<duration>',
      help: 'endpoint changes closer together than this are applied as one',
      defaultText: DEFAULTS.discoveryDebounce,
    },
    {
      key: 'cacheFile',
      value: '<file>',
      help: 'the last good discovered list, written atomically and read at start before discovery',
      defaultText: DEFAULTS.cacheFile,
    },
    {
      key: 'firstByteTimeout',
      value: '<duration>',
      help: "mark an upstream down at once when a connection's client has sent bytes and the upstream none within this long; 0 for off",
      defaultText: `${DEFAULTS.firstByteTimeout} with readyz or tls checks, off with tcp`,
    },
    {
      key: 'maxConnections',
      value: '<n>',
      help: 'most client connections per frontend at once (1 to 1000000); the next is closed at accept. Also bounded by the fd limit less a reserve for checks',
      defaultText: 'from the fd limit',
    },
    { key: 'reusePort', help: 'listen with SO_REUSEPORT so several proxy processes share the listen addresses (Linux; any process of the same uid may join)' },
    {
      key: 'handoverSocket',
      value: '<path>',
      help: "upgrades without a gap: take the listening sockets (listen, admin, metrics) of the process serving this unix socket, and serve it for the next one; its directory must be this uid's, mode 0700 (Linux, native addon)",
    },
    {
      key: 'relay',
      value: '<handle|socket|native>',
      help: "the data path: handle relays on bare libuv handles (falls back to socket, logged, when this Node's internals do not fit); socket on net.Socket; native moves established connections' bytes in C (falls back to handle, logged, when the addon is missing)",
      defaultText: 'native',
    },
    {
      key: 'workers',
      value: '<n|auto>',
      help: 'processes serving the listen addresses, this one included, each with its own checks; auto: one per CPU',
      defaultText: String(DEFAULTS.workers),
    },
    {
      key: 'workerAccept',
      value: '<primary|reuseport>',
      help: 'with --workers: reuseport: every process listens (SO_REUSEPORT) and the kernel picks by a hash of the addresses; primary: this one alone accepts and hands each connection to the process with the fewest open ones (exact spread, more CPU per new connection)',
      defaultText: DEFAULTS.workerAccept,
    },
    { key: 'watchConfig', help: 'reload when the --config file changes (as on SIGHUP)' },
    { key: 'shutdownGrace', value: '<duration>', help: 'on SIGTERM, how long open connections may finish', defaultText: DEFAULTS.shutdownGrace },
  ],
  check: (config) => checkProxyConfig(config),
};

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
    if (bad)
      throw new UsageError(`${where(bad.key === 'cert' ? 'clientCert' : 'clientKey', bad.key === 'cert' ? hc.clientCert : hc.clientKey)}: ${bad.problem}`);
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
