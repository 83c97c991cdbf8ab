// kubeward_build_info: which build runs where (value 1, the facts in labels), so a dashboard or an
// alert can join any series with the version, commit, Node version and the proxy's data path.
import { Gauge, type Registry } from './metrics.ts';

export interface BuildFacts {
  version: string;
  /** The source commit the build was made from; "unknown" when the build did not record one. */
  commit: string;
  nodeVersion: string;
  /** The proxy's data path (native, handle, socket), asked at each scrape: it is chosen at start. Empty in modes without a proxy. */
  relay: () => string;
}

export function registerBuildInfo(registry: Registry, facts: BuildFacts): void {
  new Gauge({
    name: 'kubeward_build_info',
    help: 'Always 1; the labels name the running build: version, source commit, Node.js version and the proxy relay path.',
    labelNames: ['version', 'commit', 'node_version', 'relay'],
    registers: [registry],
    collect() {
      this.reset();
      this.set({ version: facts.version, commit: facts.commit, node_version: facts.nodeVersion, relay: facts.relay() }, 1);
    },
  });
}
