// The demo's run: three apiserver stand-ins, the proxy in front of them and the watcher on the
// first, a steady client load, then the outage script, with a live table and a summary. Loopback
// only, no root; ends by itself.
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from '../admin/metrics.ts';
import { systemClock } from '../base/clock.ts';
import { KubewardError, describeError } from '../base/errors.ts';
import { createLogger } from '../base/logger.ts';
import { probeHttps } from '../probe/https-probe.ts';
import { startProxy, type ProxyHandle } from '../proxy/start-proxy.ts';
import type { NativeRelaySource } from '../proxy/relay/native-relay.ts';
import { StateFiles } from '../watch/state-files.ts';
import { WatchMetrics } from '../watch/watch-metrics.ts';
import { Watcher } from '../watch/watcher.ts';
import { demoScenario, expectsEjection, type DemoEvent } from './demo-scenario.ts';
import { startLoad } from './demo-load.ts';
import { renderSummary, renderTable, type DemoSnapshot, type EventRow } from './demo-table.ts';
import { createTestCa } from './openssl-ca.ts';
import { ApiserverStandin } from './apiserver-standin.ts';

const VIP = '192.0.2.10'; // a documentation address: only a file name here, never a destination

/**
 * Runs the whole demo; returns its exit code. Everything it starts is stopped by the end or by
 * `shutdown`. `nativeRelay`: the process's (its proxy relays in C when the addon is built).
 */
export async function runDemo(
  durationMs: number,
  live: boolean,
  shutdown: { add(name: string, run: () => Promise<void> | void): void },
  nativeRelay: NativeRelaySource,
): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'kubeward-demo-'));
  const logFile = join(dir, 'demo.log');
  const logStream = createWriteStream(logFile);
  const log = createLogger({ format: 'json', level: 'info', write: (l) => logStream.write(l) });
  const stop = new AbortController();
  shutdown.add('stop the demo', () => stop.abort());

  const ca = await createTestCa('kubeward-demo-ca', dir).catch((err: unknown) => {
    throw new KubewardError('E_EXEC', `the demo makes its certificates with openssl, which failed: ${describeError(err)} (apt-get install openssl)`, {
      cause: err,
    });
  });
  const cert = await ca.issueServer('apiserver', ['DNS:localhost', 'IP:127.0.0.1']);
  const standins = [1, 2, 3].map((n) => new ApiserverStandin({ cert: cert.cert, key: cert.key, name: `apiserver-${n}` }));
  for (const s of standins) await s.open();
  const truth = standins.map(() => 'serving');

  const proxy = await startProxy(
    {
      frontends: [
        {
          name: 'apiserver',
          listen: [{ host: '127.0.0.1', port: 0 }],
          upstreams: standins.map((s) => ({ host: s.host, port: s.port })),
          healthCheck: {
            type: 'readyz',
            path: '/readyz',
            insecureSkipTlsVerify: false,
            ca: ca.cert,
            serverName: 'localhost',
            intervalMs: 500,
            timeoutMs: 500,
            rise: 2,
            fall: 2,
          },
          connectTimeoutMs: 500,
          idleTimeoutMs: 600_000,
          drainSpreadMs: 1000,
        },
      ],
      shutdownGraceMs: 1000,
    },
    { log, nativeRelay },
  );
  const proxyPort = proxy.addresses.get('apiserver')![0]!.port;
  const files = new StateFiles(join(dir, 'cloud-routes'));
  const watcher = new Watcher({
    intervalMs: 500,
    heartbeatMs: 2000,
    hysteresis: { rise: 1, fall: 3, fastDownOnRefused: true },
    probe: (signal) =>
      probeHttps({ url: new URL(`https://127.0.0.1:${standins[0]!.port}/readyz`), timeoutMs: 500, ca: ca.cert, servername: 'localhost' }, signal),
    files,
    vips: () => [VIP],
    clock: systemClock,
    log,
    metrics: new WatchMetrics(new Registry()),
    pid: process.pid,
  });
  watcher.start();
  const load = startLoad({ host: '127.0.0.1', port: proxyPort, ca: ca.cert, intervalMs: 40, watches: 3, signal: stop.signal });

  const started = performance.now();
  const events = demoScenario(durationMs);
  const rows: EventRow[] = events.map((e) => ({ atMs: e.atMs, says: e.says, timed: expectsEjection(e.action), happened: false }));
  const timers = events.map((e, i) => setTimeout(() => void act(e, rows[i]!), e.atMs));
  const act = async (e: DemoEvent, row: EventRow): Promise<void> => {
    const s = standins[e.target]!;
    if (e.action === 'kill') await s.close();
    else if (e.action === 'restart') await s.open();
    else s.setReadyz(e.action === 'fail-readyz' ? 'fail' : e.action === 'hang-readyz' ? 'hang' : 'ok');
    truth[e.target] = {
      kill: 'killed',
      restart: 'serving',
      'fail-readyz': 'readyz 503, still serving',
      'hang-readyz': '/readyz hangs',
      'heal-readyz': 'serving',
    }[e.action];
    row.happened = true;
    if (!live) process.stdout.write(`${(e.atMs / 1000).toFixed(1)}s  ${e.says}\n`);
    if (row.timed) await timeEjection(proxy, `${s.host}:${s.port}`, row, stop.signal, live);
  };

  const snapshot = async (): Promise<DemoSnapshot> => {
    const stats = proxy.stats()[0]!;
    const status = watcher.status();
    return {
      elapsedMs: Math.min(performance.now() - started, durationMs),
      durationMs,
      upstreams: standins.map((s, i) => {
        const u = stats.upstreams.find((x) => x.upstream === `${s.host}:${s.port}`);
        return { name: s.name, address: `${s.host}:${s.port}`, proxyState: u?.state ?? '?', active: u?.active ?? 0, total: u?.total ?? 0, truth: truth[i]! };
      }),
      load: { ...load.counters },
      watcher: {
        target: standins[0]!.name,
        state: String(status.state),
        reason: String(status.reason),
        files: (await files.list()).filter((f) => f.startsWith(VIP)),
      },
      events: rows,
    };
  };

  const redraw = live ? setInterval(() => void snapshot().then((s) => process.stdout.write('\x1b[H\x1b[2J' + renderTable(s, true) + '\n')), 250) : undefined;
  if (!live) process.stdout.write(`kubeward demo: 3 apiservers behind the proxy on 127.0.0.1:${proxyPort}, ${(durationMs / 1000).toFixed(0)}s\n`);
  await new Promise<void>((resolve) => {
    const end = setTimeout(resolve, durationMs);
    stop.signal.addEventListener(
      'abort',
      () => {
        clearTimeout(end);
        resolve();
      },
      { once: true },
    );
  });
  clearInterval(redraw);
  for (const t of timers) clearTimeout(t);
  const final = await snapshot();
  stop.abort();
  await load.done;
  await proxy.close();
  await watcher.close('keep', 'demo over');
  for (const s of standins) await s.close();
  process.stdout.write((live ? '\x1b[H\x1b[2J' : '\n') + renderTable(final, live) + '\n' + renderSummary(final) + '\n');
  await new Promise<void>((r) => logStream.end(() => r()));
  process.stdout.write(`  component logs: ${logFile}\n`);
  await rm(join(dir, 'cloud-routes'), { recursive: true, force: true });
  return 0;
}

/** Polls until the proxy marks the upstream down; records how long it took from the event. */
async function timeEjection(proxy: ProxyHandle, key: string, row: EventRow, signal: AbortSignal, live: boolean): Promise<void> {
  const t0 = performance.now();
  while (!signal.aborted && performance.now() - t0 < 20_000) {
    const u = proxy.stats()[0]!.upstreams.find((x) => x.upstream === key);
    if (u?.state === 'down') {
      row.ejectedAfterMs = performance.now() - t0;
      if (!live) process.stdout.write(`       → the proxy stopped using ${key} after ${(row.ejectedAfterMs / 1000).toFixed(1)}s\n`);
      return;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}
