// `kubeward watch`: probes the local apiserver and publishes <VIP>.up / <VIP>.down state files.
// Composition root: flags → config → probe, files, lock, DNS → Watcher; close order written below.
import { lookup } from 'node:dns/promises';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { array, enum as zEnum, optional, prefault, refine, string, url } from 'zod/mini';
import { systemClock } from '../base/clock.ts';
import { KubewardError, UsageError, describeError, isKubewardError } from '../base/errors.ts';
import { formatDuration } from '../base/duration.ts';
import { boolean, duration, filePath, integer, isHostName } from '../config/fields.ts';
import { probeHttps, type HttpsProbeOptions } from '../probe/https-probe.ts';
import { caBundleProblem, checkToken, clientPairProblem } from '../probe/tls-material.ts';
import { acquireLock } from '../sys/dir-lock.ts';
import { StateFiles } from '../watch/state-files.ts';
import { defaultHeartbeatDir, isDirectoryPath } from '../watch/state-record.ts';
import { vipAddress } from '../watch/vip-address.ts';
import { VipSource } from '../watch/vip-source.ts';
import { WatchMetrics } from '../watch/watch-metrics.ts';
import { Watcher } from '../watch/watcher.ts';
import { flagNameOf } from '../config/load-config.ts';
import { buildModeCommand, type DaemonHandle, type ModeConfig, type ModeContext, type ModeSpec } from './mode-command.ts';
import type { ProbeResult } from '../probe/probe-result.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const hostName = (what: string) => string().check(refine((n: string) => isHostName(n), { error: `expected ${what} (letters, digits, - and .)` }));

export const watchFields = {
  healthUrl: prefault(
    url({ protocol: /^https$/, error: 'expected an https:// URL such as https://localhost:6443/readyz' }).check(
      // Userinfo would be logged and shown in /status with the URL; credentials go in files.
      refine((u: string) => !/^https:\/\/[^/]*@/i.test(u), { error: 'a user or password in the URL is not accepted (it would show in logs and /status); use --token-file or --client-cert/--client-key' }),
    ),
    'https://localhost:6443/readyz',
  ),
  vip: prefault(array(vipAddress), []),
  vipFromDns: optional(hostName('a DNS name')),
  dnsRefresh: prefault(duration({ min: 1000 }), '1m'),
  stateDir: prefault(filePath('a directory path'), '/run/cloud-routes'),
  lockFile: optional(filePath()),
  lockTimeout: prefault(duration(), '5m'),
  interval: prefault(duration({ min: 100, max: HOUR }), '2s'),
  timeout: prefault(duration({ min: 50, max: 5 * MINUTE }), '3s'),
  rise: prefault(integer(1, 100), 1),
  fall: prefault(integer(1, 100), 8),
  fastDownOnRefused: prefault(boolean, true),
  heartbeat: prefault(duration({ min: 100, max: HOUR }), '5s'),
  heartbeatDir: optional(string().check(refine((d: string) => d === 'state-dir' || isDirectoryPath(d), { error: 'expected an absolute directory path or state-dir' }))),
  caFile: optional(filePath()),
  insecureSkipTlsVerify: prefault(boolean, false),
  clientCert: optional(filePath()),
  clientKey: optional(filePath()),
  tokenFile: optional(filePath()),
  tlsServerName: optional(hostName('a DNS name (the name in the apiserver certificate)')),
  onExit: prefault(zEnum(['down', 'keep'], { error: 'expected down or keep' }), 'down'),
};

export type WatchConfig = ModeConfig<typeof watchFields>;

const helpAfter = `
The watcher decides whether this node's kube-apiserver may receive the node's own traffic to the
API VIP, and says so with files: <VIP>.up or <VIP>.down in --state-dir, one JSON line each
(state, since, reason, pid, generation, heartbeat). "kubeward routes" (or any consumer of
OpenShift's apiserver-watcher files) turns them into packet rules.

Verdict: up after --rise consecutive HTTP 200s, down after --fall consecutive failures; a refused
connection (the apiserver process is gone) is down at once unless --no-fast-down-on-refused. Nothing
is written before the first verdict. On SIGTERM/SIGINT every VIP goes .down unless --on-exit keep.
One watcher per state directory: the lock file is waited for up to --lock-timeout.

Examples:
  kubeward watch --vip 10.0.0.100 --ca-file /etc/kubernetes/pki/ca.crt
  kubeward watch --vip-from-dns api-int.example.com --insecure-skip-tls-verify --fall 6 --interval 1s
`;

const spec: ModeSpec<typeof watchFields> = {
  name: 'watch',
  summary: 'probe the local apiserver and publish <VIP>.up / <VIP>.down state files',
  helpAfter,
  adminPort: 9450,
  fields: watchFields,
  flags: [
    { key: 'healthUrl', value: '<url>', help: 'the local apiserver health endpoint', defaultText: 'https://localhost:6443/readyz' },
    { key: 'vip', value: '<ip>', help: 'an API VIP (IPv4 or IPv6) to publish state for', repeatable: true },
    { key: 'vipFromDns', value: '<host>', help: 'also publish for every A/AAAA record of this name, re-resolved every --dns-refresh' },
    { key: 'dnsRefresh', value: '<duration>', help: 'how often --vip-from-dns is looked up again', defaultText: '1m' },
    { key: 'stateDir', value: '<dir>', help: 'where state files go (created with mode 0755)', defaultText: '/run/cloud-routes' },
    { key: 'lockFile', value: '<file>', help: 'exclusive lock; the default is the one OpenShift\'s watcher takes, so the two exclude each other', defaultText: '<state-dir>/apiserver-watcher.lock' },
    { key: 'lockTimeout', value: '<duration>', help: 'how long to wait for another watcher to let go', defaultText: '5m' },
    { key: 'interval', value: '<duration>', help: 'time between probe starts (never two at once)', defaultText: '2s' },
    { key: 'timeout', value: '<duration>', help: 'deadline for one probe', defaultText: '3s' },
    { key: 'rise', value: '<n>', help: 'consecutive successes that declare up', defaultText: '1' },
    { key: 'fall', value: '<n>', help: 'consecutive failures that declare down', defaultText: '8' },
    { key: 'fastDownOnRefused', help: 'a refused connection declares down at once', defaultText: 'on', negatable: true },
    { key: 'heartbeat', value: '<duration>', help: 'how often a fresh heartbeat is written', defaultText: '5s' },
    {
      key: 'heartbeatDir',
      value: '<dir|state-dir>',
      help: 'where heartbeats go (<VIP>.beat), kept out of --state-dir so OpenShift\'s consumers of it are not woken every beat; state-dir rewrites the state files instead (kubeward routes before 2026-11)',
      defaultText: '<state-dir>-heartbeat',
    },
    { key: 'caFile', value: '<file>', help: 'CA bundle that signed the apiserver certificate' },
    { key: 'insecureSkipTlsVerify', help: 'do not verify the apiserver certificate (what OpenShift\'s watcher does)' },
    { key: 'clientCert', value: '<file>', help: 'client certificate, for apiservers without anonymous access' },
    { key: 'clientKey', value: '<file>', help: 'key of --client-cert' },
    { key: 'tokenFile', value: '<file>', help: 'bearer token file, read on every probe' },
    { key: 'tlsServerName', value: '<name>', help: 'TLS server name to send and verify', defaultText: 'the URL host' },
    { key: 'onExit', value: '<down|keep>', help: 'on SIGTERM/SIGINT, publish down for every VIP, or leave the files', defaultText: 'down' },
  ],
  check: (c) => {
    if (c.vip.length === 0 && !c.vipFromDns) return 'no VIP: give --vip IP (repeatable) and/or --vip-from-dns HOST';
    if (!c.caFile && !c.insecureSkipTlsVerify) {
      return '--ca-file FILE (the cluster CA, usually /etc/kubernetes/pki/ca.crt) or --insecure-skip-tls-verify is required';
    }
    if (c.caFile && c.insecureSkipTlsVerify) return '--ca-file and --insecure-skip-tls-verify contradict each other; give one';
    if (Boolean(c.clientCert) !== Boolean(c.clientKey)) return '--client-cert and --client-key go together';
    return undefined;
  },
  run: (c, ctx) => runWatchMode(c, ctx),
};

/** The watch mode's run; kubeward agent may pass the probe (the proxy's check results). */
export async function runWatchMode(c: WatchConfig, { log, registry, shutdown }: ModeContext<WatchConfig>, hooks: { probe?: (signal: AbortSignal) => Promise<ProbeResult> } = {}): Promise<DaemonHandle> {
  const probeOpts: HttpsProbeOptions = {
    url: new URL(c.healthUrl),
    timeoutMs: c.timeout,
    insecureSkipTlsVerify: c.insecureSkipTlsVerify,
    ...(await loadTlsMaterial(c)),
    tokenFile: c.tokenFile && resolve(c.tokenFile),
    servername: c.tlsServerName,
  };
  const stateDir = resolve(c.stateDir);
  const files = new StateFiles(stateDir, c.heartbeatDir === 'state-dir' ? undefined : resolve(c.heartbeatDir ?? defaultHeartbeatDir(stateDir)));
  try {
    await files.ensureDir();
  } catch (err) {
    throw new UsageError(`--state-dir ${c.stateDir}: cannot create it (${describeError(err)})`, { cause: err });
  }
  const lockPath = resolve(c.lockFile ?? join(stateDir, 'apiserver-watcher.lock'));
  const lock = await acquireLock({
    path: lockPath,
    timeoutMs: c.lockTimeout,
    onWait: () => log.warn({ lock: lockPath, timeout: formatDuration(c.lockTimeout) }, 'another watcher holds the lock; waiting'),
  }).catch((err: unknown) => {
    const flag = c.lockFile ? `--lock-file ${c.lockFile}` : `--state-dir ${c.stateDir}`;
    throw isKubewardError(err, 'E_IO') ? new UsageError(`${flag}: ${(err as Error).message}`, { cause: err }) : err;
  });
  log.info({ lock: lockPath }, 'lock acquired');
  let vips: VipSource | undefined;
  try {
    vips = new VipSource({
      staticVips: c.vip,
      dnsHost: c.vipFromDns,
      refreshMs: c.dnsRefresh,
      resolve: async (host) => (await lookup(host, { all: true })).map((a) => a.address),
      clock: systemClock,
      log,
      onChange: () => watcher.vipsChanged(),
    });
    const dnsError = await vips.start();
    if (vips.current.length === 0) {
      throw new KubewardError('E_STATE', `--vip-from-dns ${c.vipFromDns}: no VIP found (${dnsError ?? 'no addresses'}) and no --vip given`);
    }
  } catch (err) {
    // Nothing may outlive a failed start: the refresh timer and the lock child would keep the
    // process alive after "shutdown complete", holding the lock against the next watcher.
    vips?.close();
    await lock.release();
    throw err;
  }
  const source = vips;
  const watcher = new Watcher({
    intervalMs: c.interval,
    heartbeatMs: c.heartbeat,
    hysteresis: { rise: c.rise, fall: c.fall, fastDownOnRefused: c.fastDownOnRefused },
    probe: hooks.probe ?? ((signal) => probeHttps(probeOpts, signal)),
    files,
    vips: () => source.current,
    clock: systemClock,
    log,
    metrics: new WatchMetrics(registry),
    pid: process.pid,
  });
  // Close order: stop probing and publish the exit state, stop DNS refresh, release the lock
  // (only after the last write), then the admin listener. A fatal error (the last-resort
  // handler) runs the same steps, so .down is published on the way out.
  const w = watcher;
  shutdown.add('stop probing and publish exit state', () => w.close(c.onExit, shutdown.reason ?? 'signal'), c.timeout + 5000);
  shutdown.add('stop VIP refresh', () => source.close());
  shutdown.add('release lock', () => lock.release());
  log.info({ healthUrl: c.healthUrl, vips: source.current, stateDir, interval: formatDuration(c.interval), rise: c.rise, fall: c.fall }, 'watching');
  watcher.start();
  return {
    readiness: () => w.readiness(),
    status: () => ({ ...w.status(), healthUrl: c.healthUrl, stateDir, lockFile: lockPath, onExit: c.onExit, dnsError: source.lastDnsError ?? null }),
  };
}

/** Reads and checks the CA, client certificate, key and token at start: bad material is exit 2, not a crash at the first probe. */
async function loadTlsMaterial(c: WatchConfig): Promise<Pick<HttpsProbeOptions, 'ca' | 'cert' | 'key'>> {
  const ca = c.caFile ? await readFlagFile('caFile', c.caFile) : undefined;
  const cert = c.clientCert ? await readFlagFile('clientCert', c.clientCert) : undefined;
  const key = c.clientKey ? await readFlagFile('clientKey', c.clientKey) : undefined;
  const caProblem = ca === undefined ? undefined : caBundleProblem(ca);
  if (caProblem) throw new UsageError(`--ca-file ${c.caFile}: ${caProblem}`);
  const pair = cert !== undefined && key !== undefined ? clientPairProblem(cert, key) : undefined;
  if (pair) throw new UsageError(`${pair.key === 'cert' ? `--client-cert ${c.clientCert}` : `--client-key ${c.clientKey}`}: ${pair.problem}`);
  if (c.tokenFile) {
    const token = checkToken(await readFlagFile('tokenFile', c.tokenFile));
    if (!token.ok) throw new UsageError(`--token-file ${c.tokenFile}: the token ${token.problem}`);
  }
  return { ca, cert, key };
}

async function readFlagFile(key: string, path: string): Promise<string> {
  try {
    return await readFile(resolve(path), 'utf8');
  } catch (err) {
    throw new UsageError(`${flagNameOf(key)} ${path}: cannot read it (${describeError(err)})`, { cause: err });
  }
}

export const watchCommand = () => buildModeCommand(spec);
/** The mode's declaration, for kubeward agent (a watch section has the same keys). */
export { spec as watchMode };
