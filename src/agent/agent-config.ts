// kubeward agent's settings: the modes it runs and in which order they stop, the section fields
// (each checked by its mode's own schema once loaded), the help text and the check. The command
// (src/cli/agent.ts), --help and docs/agent.md come from here.
import { optional, record, string, unknown } from 'zod/mini';
import { filePath } from '../config/fields.ts';
import type { ModeConfig, ModeDeclaration } from '../config/mode-declaration.ts';

/**
 * The modes an agent runs, in start order. Each is imported only when its section is present, so
 * an agent without routes never loads the routes code (and a proxy without discovery never loads
 * the Kubernetes client).
 */
export const MODES = ['proxy', 'watch', 'routes'] as const;
export type AgentMode = (typeof MODES)[number];
/** Shutdown order: the quick, node-visible steps first, the proxy's drain (up to its grace) last. */
export const SHUTDOWN_ORDER: readonly AgentMode[] = ['watch', 'routes', 'proxy'];

/** A section: any object; it is checked by its mode's own schema once the mode is loaded. */
const section = optional(record(string(), unknown(), { error: 'expected a mapping of the mode\'s keys (see "kubeward <mode> --help")' }));
export const agentFields = { proxy: section, watch: section, routes: section, handoverSocket: optional(filePath('a unix socket path')) };
export type AgentConfig = ModeConfig<typeof agentFields>;

const helpAfter = `
The config file has a section per mode, each with the keys of that mode alone (camelCase, as in
"kubeward <mode> --config"); log and admin settings are top-level and shared:

  logFormat: json
  adminAddress: 127.0.0.1:9456
  proxy:  { listen: ["127.0.0.1:6443"], upstream: ["10.0.0.11:6443", "10.0.0.12:6443"], caFile: /etc/kubernetes/pki/ca.crt }
  watch:  { vip: [10.0.0.100], healthUrl: "https://10.0.0.11:6443/readyz", caFile: /etc/kubernetes/pki/ca.crt }
  routes: { provider: azure }

Any combination of sections runs; /metrics, /readyz (ready when every mode is) and /status (one
entry per mode) are served once. With proxy and watch, the watcher uses the proxy's checks of the
health URL's upstream instead of probing it again when the two are the same request (README).
SIGHUP reloads the proxy section. The proxy runs as one process here (workers: 1).`;

/** The agent's settings: help, the section fields, admin port and the check that a section is there. */
export const agentDeclaration: ModeDeclaration<typeof agentFields> = {
  name: 'agent',
  summary: 'proxy, watch and routes in one process from one config file (one admin listener, logger, registry, shutdown)',
  helpAfter,
  adminPort: 9456,
  fields: agentFields,
  flags: [
    {
      key: 'handoverSocket',
      value: '<path>',
      help: "upgrades without a gap: take the proxy's and the admin listening sockets from the agent serving this unix socket, which then leaves its VIP files and rules to this one; its directory must be this uid's, mode 0700",
    },
  ],
  check: (c) => {
    if (!MODES.some((m) => c[m] !== undefined)) return `--config FILE: no mode section; give at least one of ${MODES.join(', ')}`;
    // The agent hands over once, for all its modes; a section's own would be ignored.
    const inSection = MODES.find((m) => c[m] !== undefined && Object.hasOwn(c[m], 'handoverSocket'));
    if (inSection) return `${inSection}.handoverSocket: the agent hands over all its listeners at once; set handoverSocket at the top level`;
    return undefined;
  },
};
