// `kubeward watch`: probes the local apiserver and publishes <VIP>.up / <VIP>.down state files.
// Composition root: flags → config → probe, files, lock, DNS → Watcher; close order written below.
import { lookup } from 'node:dns/promises';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { systemClock } from '../base/clock.ts';
import { KubewardError, UsageError, describeError } from '../base/errors.ts';
import { formatDuration } from '../base/duration.ts';
import { boolean, duration, integer, ipAddress } from '../config/fields.ts';
import { probeHttps, type HttpsProbeOptions } from '../probe/https-probe.ts';
import { acquireLock } from '../sys/dir-lock.ts';
import { StateFiles } from '../watch/state-files.ts';
import { canonicalIp } from '../watch/state-record.ts';
import { VipSource } from '../watch/vip-source.ts';
import { WatchMetrics } from '../watch/watch-metrics.ts';
import { Watcher } from '../watch/watcher.ts';
import { flagNameOf } from '../config/load-config.ts';
import { buildModeCommand, type DaemonHandle, type ModeConfig, type ModeContext, type ModeSpec } from './mode-command.ts';
import type { ProbeResult } from '../probe/probe-result.ts';

const fields = {
  healthUrl: z.url({ protocol: /^https$/, error: 'expected an https:// URL such as https://localhost:6443/readyz' }).prefault('https://localhost:6443/readyz'),
  vip: z.array(ipAddress).prefault([]),
  vipFromDns: z.string().min(1).optional(),
  dnsRefresh: duration({ min: 1000 }).prefault('1m'),
  stateDir: z.string().min(1).prefault('/run/cloud-routes'),
  lockFile: z.string().min(1).optional(),
  lockTimeout: duration().prefault('5m'),
  interval: duration({ min: 100 }).prefault('2s'),
  timeout: duration({ min: 50 }).prefault('3s'),
  rise: integer(1, 100).prefault(1),
  fall: integer(1, 100).prefault(8),
  fastDownOnRefused: boolean.prefault(true),
  heartbeat: duration({ min: 100 }).prefault('5s'),
  caFile: z.string().min(1).optional(),
  insecureSkipTlsVerify: boolean.prefault(false),
  clientCert: z.string().min(1).optional(),
  clientKey: z.string().min(1).optional(),
  tokenFile: z.string().min(1).optional(),
  tlsServerName: z.string().min(1).optional(),
  onExit: z.enum(['down', 'keep'], { error: 'expected down or keep' }).prefault('down'),
};

export type WatchConfig = ModeConfig<typeof fields>;

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

const spec: ModeSpec<typeof fields> = {
  name: 'watch',
  summary: 'probe the local apiserver and publish <VIP>.up / <VIP>.down state files',
  helpAfter,
  adminPort: 9450,
  fields,
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
    { key: 'heartbeat', value: '<duration>', help: 'how often the state files are rewritten with a fresh heartbeat', defaultText: '5s' },
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
    ca: c.caFile ? await readFlagFile('caFile', c.caFile) : undefined,
    cert: c.clientCert ? await readFlagFile('clientCert', c.clientCert) : undefined,
    key: c.clientKey ? await readFlagFile('clientKey', c.clientKey) : undefined,
    tokenFile: c.tokenFile,
    servername: c.tlsServerName,
  };
  const files = new StateFiles(c.stateDir);
  try {
    await files.ensureDir();
  } catch (err) {
    throw new UsageError(`--state-dir ${c.stateDir}: cannot create it (${describeError(err)})`, { cause: err });
  }
  const lockPath = c.lockFile ?? join(c.stateDir, 'apiserver-watcher.lock');
  const lock = await acquireLock({
    path: lockPath,
    timeoutMs: c.lockTimeout,
    onWait: () => log.warn({ lock: lockPath, timeout: formatDuration(c.lockTimeout) }, 'another watcher holds the lock; waiting'),
  });
  log.info({ lock: lockPath }, 'lock acquired');

  const vips: VipSource = new VipSource({
    staticVips: c.vip.map((v) => canonicalIp(v)!),
    dnsHost: c.vipFromDns,
    refreshMs: c.dnsRefresh,
    resolve: async (host) => (await lookup(host, { all: true })).map((a) => a.address),
    clock: systemClock,
    log,
    onChange: () => watcher.vipsChanged(),
  });
  const dnsError = await vips.start();
  if (vips.current.length === 0) {
    await lock.release();
    throw new KubewardError('E_STATE', `--vip-from-dns ${c.vipFromDns}: no VIP found (${dnsError ?? 'no addresses'}) and no --vip given`);
  }
  const watcher = new Watcher({
    intervalMs: c.interval,
    heartbeatMs: c.heartbeat,
    hysteresis: { rise: c.rise, fall: c.fall, fastDownOnRefused: c.fastDownOnRefused },
    probe: hooks.probe ?? ((signal) => probeHttps(probeOpts, signal)),
    files,
    vips: () => vips.current,
    clock: systemClock,
    log,
    metrics: new WatchMetrics(registry),
    pid: process.pid,
  });
  // Close order: stop probing and publish the exit state, stop DNS refresh, release the lock
  // (only after the last write), then the admin listener.
  const w = watcher;
  shutdown.add('stop probing and publish exit state', () => w.stop(c.onExit, 'signal'), c.timeout + 5000);
  shutdown.add('stop VIP refresh', () => vips.close());
  shutdown.add('release lock', () => lock.release());
  log.info({ healthUrl: c.healthUrl, vips: vips.current, stateDir: c.stateDir, interval: formatDuration(c.interval), rise: c.rise, fall: c.fall }, 'watching');
  watcher.start();
  return {
    readiness: () => w.readiness(),
    status: () => ({ ...w.status(), healthUrl: c.healthUrl, stateDir: c.stateDir, lockFile: lockPath, onExit: c.onExit, dnsError: vips.lastDnsError ?? null }),
  };
}

async function readFlagFile(key: string, path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new UsageError(`${flagNameOf(key)} ${path}: cannot read it (${describeError(err)})`, { cause: err });
  }
}

export const watchCommand = () => buildModeCommand(spec);
/** The mode's declaration, for kubeward agent (a watch section has the same keys). */
export { spec as watchMode };
