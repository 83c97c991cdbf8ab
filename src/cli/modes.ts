// The list of modes. Adding a mode: write src/cli/<mode>.ts exporting its command, add a line here.
// Each mode is imported only when it runs (or for the full --help), so the proxy does not carry the
// Kubernetes client and the controllers in memory.
import type { Command } from 'commander';

export const MODE_LOADERS: Readonly<Record<string, () => Promise<Command>>> = {
  demo: async () => (await import('./demo.ts')).demoCommand(),
  proxy: async () => (await import('./proxy.ts')).proxyCommand(),
  watch: async () => (await import('./watch.ts')).watchCommand(),
  routes: async () => (await import('./routes.ts')).routesCommand(),
  plan: async () => (await import('./plan.ts')).planCommand(),
  'check-cert': async () => (await import('./check-cert.ts')).checkCertCommand(),
  operator: async () => (await import('./operator.ts')).operatorCommand(),
  deorbit: async () => (await import('./deorbit.ts')).deorbitCommand(),
  routegc: async () => (await import('./routegc.ts')).routegcCommand(),
  flight: async () => (await import('./flight.ts')).flightCommand(),
  agent: async () => (await import('./agent.ts')).agentCommand(),
};

/** The commands of every mode, or of the one named (when it is a mode). */
export async function modeCommands(only?: string): Promise<Command[]> {
  const names = only !== undefined && only in MODE_LOADERS ? [only] : Object.keys(MODE_LOADERS);
  return Promise.all(names.map((n) => MODE_LOADERS[n]!()));
}
