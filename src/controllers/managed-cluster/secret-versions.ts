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
  readonly #informer: Informer<Secret>;

  constructor(o: { secrets: ResourceClient<Secret>; namespace?: string; clock: Clock; log: Logger }) {
    this.#informer = new Informer<Secret>({
      name: 'secrets',
      // Metadata only on the wire too: the Secrets' contents never reach this cache.
      source: resourceSource(o.secrets, o.namespace, { metadataOnly: true }),
      clock: o.clock,
      log: o.log,
      transform: (s) => ({
        metadata: { name: s.metadata.name, namespace: s.metadata.namespace, uid: s.metadata.uid, resourceVersion: s.metadata.resourceVersion },
      }),
    });
  }

  start(): void {
    this.#informer.start();
  }

  close(): Promise<void> {
    return this.#informer.close();
  }

  version(namespace: string, name: string): string | undefined {
    if (!this.#informer.hasSynced()) return undefined;
    return this.#informer.get(`${namespace}/${name}`)?.metadata.resourceVersion;
  }
}
