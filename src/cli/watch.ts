// `kubeward watch`: probes the local apiserver and publishes <VIP>.up / <VIP>.down state files.
// Composition root: config (src/watch/watch-config.ts) → probe, files, lock, DNS → Watcher; close
// order written below.
import { lookup } from 'node:dns/promises';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { systemClock } from '../base/clock.ts';
import { KubewardError, UsageError, describeError, isKubewardError } from '../base/errors.ts';
import { formatDuration } from '../base/duration.ts';
import { probeHttps, type HttpsProbeOptions } from '../probe/https-probe.ts';
import { ProbeTlsContext } from '../probe/probe-tls-context.ts';
import { caBundleProblem, checkToken, clientPairProblem } from '../probe/tls-material.ts';
import { acquireLock } from '../sys/dir-lock.ts';
import { StateFiles } from '../watch/state-files.ts';
import { defaultHeartbeatDir } from '../watch/state-record.ts';
import { VipSource } from '../watch/vip-source.ts';
import { WatchMetrics } from '../watch/watch-metrics.ts';
import { Watcher } from '../watch/watcher.ts';
import { watchDeclaration, type WatchConfig, type watchFields } from '../watch/watch-config.ts';
import { flagNameOf } from '../config/load-config.ts';
import { buildModeCommand, type DaemonHandle, type ModeContext, type ModeSpec } from './mode-command.ts';
import type { ProbeResult } from '../probe/probe-result.ts';

const spec: ModeSpec<typeof watchFields> = {
  ...watchDeclaration,
  run: (c, ctx) => runWatchMode(c, ctx),
  // The state directory is left alone here: creating it is a write, and the run reports it.
  checkFiles: async (c) => void (await loadTlsMaterial(c)),
};

/** The watch mode's run; kubeward agent may pass the probe (the proxy's check results). */
export async function runWatchMode(
  c: WatchConfig,
  { log, registry, shutdown, handover }: ModeContext<WatchConfig>,
  hooks: { probe?: (signal: AbortSignal) => Promise<ProbeResult> } = {},
): Promise<DaemonHandle> {
  const probeOpts: HttpsProbeOptions = {
    url: new URL(c.healthUrl),
    timeoutMs: c.timeout,
    insecureSkipTlsVerify: c.insecureSkipTlsVerify,
    ...(await loadTlsMaterial(c)),
    tokenFile: c.tokenFile && resolve(c.tokenFile),
    servername: c.tlsServerName,
    tlsContext: new ProbeTlsContext(),
  };
  const stateDir = resolve(c.stateDir);
  const files = new StateFiles(stateDir, c.heartbeatDir === 'state-dir' ? undefined : resolve(c.heartbeatDir ?? defaultHeartbeatDir(stateDir)));
  try {
    await files.ensureDir();
  } catch (err) {
    throw new UsageError(`--state-dir ${c.stateDir}: cannot create it (${describeError(err)})`, { cause: err });
  }
  // With --handover-socket the admin listener is the predecessor's socket, taken already: tell it
  // now, before the lock. The predecessor holds the lock until its watcher stops, which it does only
  // on hearing this (leaving its files to this watcher); waiting for the lock first would wait for it.
  handover?.accepting();
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
  // After a hand-over (--handover-socket) the files stay as they are: the successor's
  // watcher, started as this one stops, takes them over at its first verdict, and publishing down
  // here would withdraw the VIP for those seconds although the apiserver is as healthy as before.
  // The heartbeat in the files stays fresh for --stale-after, longer than the successor's rise.
  shutdown.add('stop probing and publish exit state', () => w.close(handover?.handedOver ? 'keep' : c.onExit, shutdown.reason ?? 'signal'), c.timeout + 5000);
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
