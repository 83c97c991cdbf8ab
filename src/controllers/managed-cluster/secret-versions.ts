// The resourceVersion of every Secret the operator may read credentials from, kept by an informer
// that stores metadata only: a cluster's clients are rebuilt when a credential Secret's
// resourceVersion changes, and the Secret itself is read only then, never on every cycle. The Secret
// data never stays in this cache.
import type { Clock } from '../../base/clock.ts';
import type { Logger } from '../../base/logger.ts';
import { Informer, resourceSource } from '../../clients/kube/informer.ts';
import type { Secret } from '../../clients/kube/kube-types.ts';
import type { ResourceClient } from '../../clients/kube/resource-client.ts';

export interface SecretVersionSource {
  /** The resourceVersion the cache holds for the Secret, or undefined (not synced yet, or no such Secret). */
  version(namespace: string, name: string): string | undefined;
}

export class SecretVersions implements SecretVersionSource {
  /** One informer per watched namespace (a namespaced install may list Secrets there only), or one under "" for all. */
  readonly #informers = new Map<string, Informer<Secret>>();

  /** namespaces: the namespaces to watch; a string is one; undefined or empty: every namespace (cluster-wide list rights). */
  constructor(o: { secrets: ResourceClient<Secret>; namespace?: string | readonly string[]; clock: Clock; log: Logger }) {
    const namespaces = typeof o.namespace === 'string' ? [o.namespace] : (o.namespace ?? []);
    for (const ns of namespaces.length > 0 ? namespaces : [undefined]) {
      const informer = new Informer<Secret>({
        name: ns === undefined ? 'secrets' : `secrets in ${ns}`,
        // Metadata only on the wire too: the Secrets' contents never reach this cache.
        source: resourceSource(o.secrets, ns, { metadataOnly: true }),
        clock: o.clock,
        log: o.log,
        transform: (s) => ({
          metadata: { name: s.metadata.name, namespace: s.metadata.namespace, uid: s.metadata.uid, resourceVersion: s.metadata.resourceVersion },
        }),
      });
      this.#informers.set(ns ?? '', informer);
    }
  }

  start(): void {
    for (const i of this.#informers.values()) i.start();
  }

  async close(): Promise<void> {
    await Promise.all([...this.#informers.values()].map((i) => i.close()));
  }

  version(namespace: string, name: string): string | undefined {
    const informer = this.#informers.get(namespace) ?? this.#informers.get('');
    if (!informer?.hasSynced()) return undefined;
    return informer.get(`${namespace}/${name}`)?.metadata.resourceVersion;
  }
}
