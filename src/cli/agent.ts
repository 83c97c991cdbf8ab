// `kubeward agent`: proxy, watch and routes in one process from one config file, a section per mode
// with the keys of the mode alone. One logger, one metrics registry, one admin listener (all from
// mode-command.ts), one ordered shutdown: watch publishes its exit state first, routes removes its
// rules, then the proxy drains. With both proxy and watch, the watcher takes the proxy's checks of
// the local apiserver as its probes when they are the same request (src/agent/shared-check.ts).
// Settings: src/agent/agent-config.ts.
import { strictObject, unknown } from 'zod/mini';
import type { core } from 'zod/mini';
import { Shutdown } from '../base/lifecycle.ts';
import { UsageError } from '../base/errors.ts';
import { commonFields } from '../config/fields.ts';
import type { Readiness } from '../admin/admin-server.ts';
import { buildModeCommand, type DaemonHandle, type ModeConfig, type ModeContext, type ModeSpec } from './mode-command.ts';
import type { proxyFields } from '../proxy/proxy-config.ts';
import { agentDeclaration, SHUTDOWN_ORDER, type AgentConfig, type AgentMode, type agentFields } from '../agent/agent-config.ts';

const agentSpec: ModeSpec<typeof agentFields> = {
  ...agentDeclaration,
  // Every section's keys first, then every section's files: a typo in the last section stops the
  // agent before the first one binds a listener or writes a state file.
  checkFiles: async (c, where) => {
    const checks: (() => Promise<void>)[] = [];
    if (c.proxy !== undefined) {
      const { proxyMode } = await import('./proxy.ts');
      const pc = proxySection(proxyMode, c);
      checks.push(() => proxyMode.checkFiles!(pc, where));
    }
    if (c.watch !== undefined) {
      const { watchMode } = await import('./watch.ts');
      const wc = checkSection('watch', watchMode, { ...commonOf(c), ...c.watch });
      checks.push(() => watchMode.checkFiles!(wc, where));
    }
    if (c.routes !== undefined) {
      const { routesMode } = await import('./routes.ts');
      const rc = checkSection('routes', routesMode, { ...commonOf(c), ...c.routes });
      checks.push(() => routesMode.checkFiles!(rc, where));
    }
    for (const check of checks) await check();
  },
  run: async (c, ctx) => {
    const common = commonOf(c);
    const shutdowns = new Map<AgentMode, Shutdown>();
    for (const m of SHUTDOWN_ORDER) {
      if (c[m] === undefined) continue;
      const s = new Shutdown(ctx.log.child({ agentMode: m }));
      shutdowns.set(m, s);
      // The mode's own steps keep their own bounds; this bound only stops a stuck mode holding the rest.
      ctx.shutdown.add(`${m}: its shutdown steps`, () => s.run('agent shutting down'), m === 'proxy' ? 10 * 60_000 : 2 * 60_000);
    }
    const handles = new Map<AgentMode, DaemonHandle>();
    const modeCtx = <C>(m: AgentMode, reload?: () => Promise<C>): ModeContext<C> => ({
      log: ctx.log.child({ agentMode: m }),
      registry: ctx.registry,
      shutdown: shutdowns.get(m)!,
      adminAddress: ctx.adminAddress,
      configPath: ctx.configPath,
      reloadConfig: reload,
      handover: ctx.handover,
      nativeAddon: ctx.nativeAddon,
    });
    // Only with both proxy and watch: the feed from the proxy's checks to the watcher.
    const sharing = c.proxy !== undefined && c.watch !== undefined ? await import('../agent/shared-check.ts') : undefined;
    const feed = sharing ? new sharing.CheckResultFeed() : undefined;

    if (c.proxy !== undefined) {
      const { proxyMode, runProxyMode } = await import('./proxy.ts');
      const pc = proxySection(proxyMode, c);
      const reload = async () => proxySection(proxyMode, await ctx.reloadConfig!());
      handles.set('proxy', await runProxyMode(pc, modeCtx('proxy', reload), { onCheckResult: feed ? (f, u, r) => feed.push(f, u, r) : undefined }));
    }
    // The listeners accept (the proxy's and the admin one): the predecessor may stop now. Not after
    // watch: its lock is the predecessor's until that one's watcher stops, which it does only on
    // hearing this (and then leaves its files to this watcher: see watch.ts).
    ctx.handover?.accepting();
    if (c.watch !== undefined) {
      const [{ watchMode, runWatchMode }, { resolveProxyConfig }] = await Promise.all([import('./watch.ts'), import('../proxy/proxy-config.ts')]);
      const wc = checkSection('watch', watchMode, { ...common, ...c.watch });
      let probe: ((signal: AbortSignal) => Promise<import('../probe/probe-result.ts').ProbeResult>) | undefined;
      if (sharing && feed) {
        const { proxyMode } = await import('./proxy.ts');
        const decision = sharing.decideSharedCheck(wc, resolveProxyConfig(checkSection('proxy', proxyMode, { ...common, ...c.proxy })).frontends);
        if (decision.shared) {
          probe = (signal) => feed.next(decision.frontend, decision.upstream, decision.waitMs, signal);
          ctx.log.info(
            { frontend: decision.frontend, upstream: decision.upstream, healthUrl: wc.healthUrl },
            "agent: the watcher uses the proxy's checks of the local apiserver",
          );
        } else {
          ctx.log.info({ reason: decision.reason, healthUrl: wc.healthUrl }, 'agent: the watcher probes the local apiserver itself');
        }
      }
      handles.set('watch', await runWatchMode(wc, modeCtx('watch'), { probe }));
    }
    if (c.routes !== undefined) {
      const { routesMode } = await import('./routes.ts');
      const rc = checkSection('routes', routesMode, { ...common, ...c.routes });
      const h = await routesMode.run(rc, modeCtx('routes'));
      if (typeof h === 'number') throw new UsageError('routes: stopped at start');
      handles.set('routes', h);
    }
    return combine(handles);
  },
};

function commonOf(c: AgentConfig): Record<string, unknown> {
  return { logFormat: c.logFormat, logLevel: c.logLevel, adminAddress: c.adminAddress };
}

/** The proxy section, checked; the agent runs the proxy in its own process (no workers). */
function proxySection(proxyMode: ModeSpec<typeof proxyFields>, c: AgentConfig): ModeConfig<typeof proxyFields> {
  const pc = checkSection('proxy', proxyMode, { ...commonOf(c), ...c.proxy });
  if (pc.workers !== undefined && pc.workers !== 1)
    throw new UsageError('proxy.workers: the agent runs the proxy in its own process; remove the key (or run "kubeward proxy" for workers)');
  return pc;
}

/** Checks a section with the mode's own schema and cross-key check; errors name the section. */
function checkSection<F extends core.$ZodShape>(name: AgentMode, spec: ModeSpec<F>, data: Record<string, unknown>): ModeConfig<F> {
  const schema = strictObject({ ...commonFields, adminAddress: unknown(), ...spec.fields });
  const r = schema.safeParse(data);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const where =
      issue.code === 'unrecognized_keys'
        ? `unknown key ${issue.keys.map((k) => `"${name}.${k}"`).join(', ')}; check it against "kubeward ${name} --help"`
        : `key "${[name, ...issue.path.map(String)].join('.')}": ${issue.message}`;
    throw new UsageError(`config: ${where}`);
  }
  const cfg = r.data as ModeConfig<F>;
  const problem = spec.check?.(cfg);
  if (problem) throw new UsageError(`config section ${name}: ${problem}`);
  return cfg;
}

function combine(handles: ReadonlyMap<AgentMode, DaemonHandle>): DaemonHandle {
  const readiness = (): Readiness => {
    const notReady = [...handles].map(([m, h]) => [m, h.readiness()] as const).filter(([, r]) => !r.ready);
    return notReady.length === 0
      ? { ready: true, reason: `${[...handles.keys()].join(', ')} ready` }
      : { ready: false, reason: notReady.map(([m, r]) => `${m}: ${r.reason}`).join('; ') };
  };
  const finished = [...handles.values()].flatMap((h) => (h.finished ? [h.finished] : []));
  return {
    readiness,
    status: () => Object.fromEntries([...handles].map(([m, h]) => [m, h.status()])),
    adminRoutes: [...handles.values()].flatMap((h) => h.adminRoutes ?? []),
    relay: () => handles.get('proxy')?.relay?.() ?? '',
    finished: finished.length > 0 ? Promise.race(finished) : undefined,
  };
}

export const agentCommand = () => buildModeCommand(agentSpec);
