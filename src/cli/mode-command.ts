// Turns a mode's declaration (flags, schema, run) into a commander command. Every flag is the
// kebab-case form of a config key, so "every flag has a config key" holds by construction.
import { resolve } from 'node:path';
import { Command, Option } from 'commander';
import { prefault, strictObject } from 'zod/mini';
import type { core } from 'zod/mini';
import type { Registry } from '../admin/metrics.ts';
import { createLogger, type Logger } from '../base/logger.ts';
import { Shutdown, exitOnSignals, exitOnUncaught, exitSoon, ignoreStraySignals, untilSignal } from '../base/lifecycle.ts';
import { UsageError, describeError, isKubewardError } from '../base/errors.ts';
import { adminAddress, commonFields, formatHostPort, type HostPort } from '../config/fields.ts';
import { flagNameOf, mergeConfig, readConfigFile, type RawConfig } from '../config/load-config.ts';
import { chooseRun } from './chosen-run.ts';
import { createMetricsRegistry } from '../admin/metrics-registry.ts';
import type { ModeConfig, ModeDeclaration, ModeFlag } from '../config/mode-declaration.ts';
import { loadAdminToken } from '../admin/admin-token.ts';
import { registerBuildInfo } from '../admin/build-info.ts';
import type { MetricsServer } from '../admin/metrics-server.ts';
import { giveBackMemory } from '../base/give-back-memory.ts';
import { startMetricsListener } from './metrics-listener.ts';
// A JSON import, so that the production bundle carries the version inline (as main.ts does).
import pkg from '../../package.json' with { type: 'json' };
import { startAdminServer, type AdminRoute, type AdminServer, type Readiness } from '../admin/admin-server.ts';
import type { ListenerHandover, HandoverSession } from '../handover/handover-session.ts';
import { NativeAddon } from '../proxy/relay/native-addon.ts';
import { addonCandidates } from '../proxy/relay/native-relay.ts';
import type { HandoverServer } from '../handover/handover-server.ts';

/** The longest timer Node keeps (about 24.8 days): a step that ends only at a signal. */
const UNBOUNDED_STEP_MS = 2 ** 31 - 1;

/** What a long-running mode hands back once started. */
export interface DaemonHandle {
  readiness(): Readiness;
  status(): unknown;
  adminRoutes?: AdminRoute[];
  /** Resolves with an exit code if the daemon stops by itself (a fatal error); never for signals. */
  finished?: Promise<number>;
  /** The proxy's data path, for kubeward_build_info (modes with a proxy). */
  relay?: () => string;
}

export interface ModeContext<C = unknown> {
  log: Logger;
  registry: Registry;
  /** Add close steps here, in the order they must run. The admin listener closes after them. */
  shutdown: Shutdown;
  /** The admin listener's bound address, if any (some modes report it). */
  adminAddress?: HostPort;
  /** The --config file, if one was given (modes that reload watch it). */
  configPath?: string;
  /** Reads the config again (file under the same flags) and checks it; throws UsageError. For reloads. */
  reloadConfig?: () => Promise<C>;
  /** --handover-socket: the listener hand-over with the predecessor and, later, the successor. */
  handover?: ModeHandover;
  /** The process's one load of the native addon (the proxy's relay; the hand-over has its own use). */
  nativeAddon?: NativeAddon;
}

/** What a mode sees of the listener hand-over (src/handover/handover-session.ts). */
export interface ModeHandover extends ListenerHandover {
  /** Every listener of the mode accepts: the predecessor may stop (idempotent; runMode calls it after run() too). */
  accepting(): void;
  /** A successor took the listeners: leave in place what it keeps (the watcher's files, the rules). */
  readonly handedOver: boolean;
}

export type { CommonConfig, ModeConfig, ModeFlag } from '../config/mode-declaration.ts';

export interface ModeSpec<F extends core.$ZodShape> extends ModeDeclaration<F> {
  /** Daemons return a handle; one-shot modes return their exit code. */
  run: (config: ModeConfig<F>, ctx: ModeContext<ModeConfig<F>>) => Promise<DaemonHandle | number>;
  /**
   * Reads and checks what the config names (certificates, keys, tokens, kubeconfigs, tools) without
   * binding, creating or writing anything; throws UsageError. Runs before the admin listener binds
   * and before run(), and alone under --check-config.
   */
  checkFiles?: (config: ModeConfig<F>, where: { configPath?: string }) => Promise<void>;
}

export function buildModeCommand<F extends core.$ZodShape>(spec: ModeSpec<F>): Command {
  const cmd = new Command(spec.name).description(spec.summary).allowExcessArguments(false);
  cmd.option('--config <file>', 'YAML file with any of the keys below (camelCase: --health-url is healthUrl); flags override it');
  cmd.option('--log-format <json|text>', 'json lines for collectors, text for people (default: json)');
  cmd.option('--log-level <level>', 'trace, debug, info, warn, error or silent (default: info)');
  const adminDefault = spec.adminPort === null ? 'off' : `127.0.0.1:${spec.adminPort}`;
  cmd.option('--admin-address <host:port|off>', `serves /metrics, /healthz, /readyz, /status (default: ${adminDefault})`);
  if (spec.checkFiles)
    cmd.option('--check-config', 'check the config, the files it names and their certificates, then exit: 0 usable, 2 not (binds and writes nothing)');
  cmd.option('--metrics-address <host:port|off>', '/metrics over TLS for scrapers the apiserver authorizes (TokenReview, SubjectAccessReview) (default: off)');
  cmd.option('--metrics-tls-cert-file <file>', "the metrics listener's PEM certificate (chain)");
  cmd.option('--metrics-tls-key-file <file>', "the metrics listener's PEM key");
  cmd.option('--metrics-kubeconfig <file>', 'kubeconfig of the apiserver that reviews scrape tokens (default: the pod service account)');
  cmd.option('--admin-token-file <file>', 'bearer token /status and drain/undrain ask for (mode 0600; created with a random token if missing)');
  for (const f of spec.flags) addFlag(cmd, f);
  if (spec.helpAfter) cmd.addHelpText('after', '\n' + spec.helpAfter.trimEnd());
  // Recorded, not run: main() starts it after the parse (chosen-run.ts).
  cmd.action((opts: RawConfig) => chooseRun(cmd, () => runMode(spec, opts, adminDefault)));
  return cmd;
}

/** Adds a declared flag to a command (one-shot commands share this: src/cli/one-shot-command.ts). */
export function addFlag(cmd: Command, f: ModeFlag): void {
  const name = flagNameOf(f.key);
  const help = f.help + (f.defaultText !== undefined ? ` (default: ${f.defaultText})` : '');
  if (f.value === undefined) {
    cmd.addOption(new Option(name, help));
    if (f.negatable) cmd.addOption(new Option(`--no-${name.slice(2)}`, `turn ${name} off`));
    return;
  }
  const opt = new Option(`${f.short === undefined ? '' : `${f.short}, `}${name} ${f.value}`, help + (f.repeatable ? '; repeatable' : ''));
  if (f.repeatable) opt.argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), v]);
  cmd.addOption(opt);
}

async function runMode<F extends core.$ZodShape>(spec: ModeSpec<F>, allOpts: RawConfig, adminDefault: string): Promise<number> {
  const { checkConfig, ...opts } = allOpts;
  let config: ModeConfig<F>;
  try {
    config = await loadModeConfig(spec, opts, adminDefault);
    // Everything the config names is checked before anything binds: a bad file is exit 2 with no
    // listener opened and no state written, so a restart loop does not flap the node's API path.
    await spec.checkFiles?.(config, { configPath: typeof opts.config === 'string' ? opts.config : undefined });
  } catch (err) {
    if (isConfigError(err)) {
      process.stderr.write(`kubeward ${spec.name}: ${oneLine(err.message)}\n`);
      return 2;
    }
    throw err;
  }
  if (checkConfig === true) {
    const from = typeof opts.config === 'string' ? `--config ${opts.config} and flags` : 'flags';
    process.stdout.write(`kubeward ${spec.name}: config ok (${from}; the files it names read and checked)\n`);
    return 0;
  }
  const log = createLogger({ format: config.logFormat, level: config.logLevel, base: { mode: spec.name } });
  const registry = createMetricsRegistry(spec.name);
  let handle: DaemonHandle | undefined;
  // KUBEWARD_COMMIT: set by the image build (deploy/Containerfile) to the source commit.
  registerBuildInfo(registry, {
    version: pkg.version,
    commit: process.env.KUBEWARD_COMMIT || 'unknown',
    nodeVersion: process.version,
    relay: () => handle?.relay?.() ?? '',
  });
  const shutdown = new Shutdown(log);
  exitOnSignals(shutdown, log);
  exitOnUncaught(shutdown, log);
  ignoreStraySignals(log);
  let admin: AdminServer | undefined;
  let metrics: MetricsServer | undefined;
  let handover: HandoverSession | undefined;
  // The process's one load of the native addon (KUBEWARD_NATIVE_RELAY: a sanitizer build), for the
  // hand-over here and the proxy's relay.
  const nativeAddon = new NativeAddon(addonCandidates(process.env.KUBEWARD_NATIVE_RELAY || undefined));
  let handoverServer: HandoverServer | undefined;
  try {
    handover = await startHandover(config, log, nativeAddon);
    // First of the steps: from the moment this process stops, a successor binds instead of asking.
    if (handover) shutdown.add('hand-over socket: close', () => handoverServer?.close());
    // Inside the try: an admin address in use is bad usage (exit 2, one line), not a crash.
    const token = config.adminTokenFile === undefined || config.adminAddress === 'off' ? undefined : await loadAdminToken(config.adminTokenFile);
    admin =
      config.adminAddress === 'off'
        ? undefined
        : await startAdminServer({
            address: config.adminAddress,
            registry,
            log,
            token,
            readiness: () => handle?.readiness() ?? { ready: false, reason: 'starting' },
            status: () => handle?.status() ?? { starting: true },
            routes: () => handle?.adminRoutes ?? [],
            // A mode that shares its listen addresses (proxy --reuse-port) shares the admin address too.
            reusePort: (config as { reusePort?: unknown }).reusePort === true,
            handover,
          }).catch((err: unknown) => {
            const where = formatHostPort(config.adminAddress as HostPort);
            throw new UsageError(`--admin-address ${where}: cannot listen (${describeError(err)}); pick a free port or "off"`, { cause: err });
          });
    metrics = await startMetricsListener(config, registry, log, (config as { reusePort?: unknown }).reusePort === true, handover);
    const configPath = typeof opts.config === 'string' ? opts.config : undefined;
    const reloadConfig = () => loadModeConfig(spec, opts, adminDefault);
    const result = await spec.run(config, { log, registry, shutdown, adminAddress: admin?.address, configPath, reloadConfig, handover, nativeAddon });
    if (typeof result === 'number') {
      await shutdown.run('finished');
      await metrics?.close();
      await admin?.close();
      return result;
    }
    handle = result;
    // Start-up is a load too: what loading the chunks, the config and the listeners left in V8's
    // heap and malloc's goes back once the daemon serves (docs/design/memory-after-load.md).
    log.debug(giveBackMemory(nativeAddon.mallocTrim()), 'start-up done: memory given back');
    if (handover) {
      const session = handover;
      session.accepting();
      const { serveHandover } = await import('../handover/handover-server.ts');
      // The successor accepts on the same sockets: stop accepting here and run the shutdown (the
      // proxy drains what it has); the hand-over wins over nothing else, so a SIGTERM joins it.
      handoverServer = await serveHandover({
        session,
        log,
        onHandedOver: () => {
          session.stopAccepting();
          // The last step: this process stays, holding no listener, until the signal that ends its
          // pod. A static pod's preStop hook (await-successor) sees the hand-over and returns, and
          // kubelet's SIGTERM follows; a DaemonSet's old pod (maxSurge) stays until its controller
          // deletes it. Exiting here would have kubelet restart the container (restartPolicy
          // Always), and the restarted process would take the listeners back from its successor.
          // Listened for from now: kubelet's SIGTERM may come while the drain still runs.
          const signalled = untilSignal();
          shutdown.add(
            'handed over: wait for SIGTERM',
            async () => {
              log.info({}, 'listeners handed over; this process does nothing more and exits at SIGTERM or SIGINT');
              await signalled;
            },
            UNBOUNDED_STEP_MS,
          );
          void shutdown.run('listeners handed over to a successor');
        },
      });
    }
    const listener = admin;
    const metricsListener = metrics;
    if (metricsListener) shutdown.add('metrics listener', () => metricsListener.close());
    if (listener) shutdown.add('admin listener', () => listener.close());
    // A signal ends the daemon through the shutdown steps (exit 0); a fatal stop ends it with its code.
    const code = await Promise.race([handle.finished ?? new Promise<number>(() => {}), shutdown.finished.then(() => 0)]);
    await shutdown.run('daemon stopped');
    exitSoon(code);
    return code;
  } catch (err) {
    // Printed once, as one line (no log line besides it: both would land on stderr).
    const code = isConfigError(err) ? 2 : 1;
    if (code === 2) process.stderr.write(`kubeward ${spec.name}: ${oneLine((err as Error).message)}\n`);
    else log.fatal({ err: describeError(err), code: isKubewardError(err) ? err.code : undefined }, 'fatal error');
    await shutdown.run(code === 2 ? 'bad usage' : 'fatal error');
    await metrics?.close();
    await admin?.close();
    // Whatever the failed start left behind (a lock child, a timer) must not keep the process alive.
    exitSoon(code);
    return code;
  }
}

/**
 * --handover-socket (proxy, agent): asks the running process for its listeners before anything
 * binds. Not in a proxy worker (KUBEWARD_PROXY_WORKER): the primary alone hands over.
 */
async function startHandover(config: unknown, log: Logger, nativeAddon: NativeAddon): Promise<HandoverSession | undefined> {
  const path = (config as { handoverSocket?: unknown }).handoverSocket;
  if (typeof path !== 'string' || process.env.KUBEWARD_PROXY_WORKER === '1') return undefined;
  const [{ HandoverSession }, { loadHandoverAddon }] = await Promise.all([import('../handover/handover-session.ts'), import('../handover/handover-addon.ts')]);
  return HandoverSession.start({ path: resolve(path), addon: loadHandoverAddon(nativeAddon), log });
}

/** Bad flags, keys or config files (E_USAGE, E_CONFIG): exit 2. */
function isConfigError(err: unknown): err is Error {
  return isKubewardError(err, 'E_USAGE') || isKubewardError(err, 'E_CONFIG');
}

/** A message as one line: anything after a line break is folded in. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' | ');
}

/** Parses flags and the config file into the mode's typed config; throws UsageError. */
export async function loadModeConfig<F extends core.$ZodShape>(spec: ModeSpec<F>, opts: RawConfig, adminDefault: string): Promise<ModeConfig<F>> {
  const { config: configPath, ...flags } = opts;
  const fileData = typeof configPath === 'string' ? await readConfigFile(configPath) : {};
  const schema = strictObject({ ...commonFields, adminAddress: prefault(adminAddress, adminDefault), ...spec.fields });
  const cfg = mergeConfig(schema, fileData, flags, configPath as string | undefined) as ModeConfig<F>;
  const problem = spec.check?.(cfg);
  if (problem) throw new UsageError(problem);
  return cfg;
}
