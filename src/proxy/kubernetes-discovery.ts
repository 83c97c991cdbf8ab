// Discovery, the adapter: watches the `default/kubernetes` EndpointSlices (discovery.k8s.io v1,
// else v1beta1, else the `kubernetes` Endpoints object) through the proxy's own frontend, debounces
// changes and hands over each new non-empty list. An empty list is never applied.
import type { Clock } from '../base/clock.ts';
import { describeError } from '../base/errors.ts';
import type { Logger } from '../base/logger.ts';
import { formatHostPort, type HostPort } from '../config/fields.ts';
import { createKubeApi } from '../clients/kube/kube-api.ts';
import { discoverGroupVersion } from '../clients/kube/discovery.ts';
import { Informer, resourceSource } from '../clients/kube/informer.ts';
import { loadKubeConfig } from '../clients/kube/load-kube-config.ts';
import type { KubeObject } from '../clients/kube/kube-types.ts';
import {
  SERVICE_NAME_LABEL,
  upstreamsFromEndpoints,
  upstreamsFromEndpointSlices,
  type DiscoveredUpstreams,
  type EndpointSliceLike,
  type EndpointsLike,
} from './endpoint-upstreams.ts';
import { readKubeconfigFor } from './discovery-kubeconfig.ts';
import type { DiscoveryConfig } from './proxy-config.ts';

export interface KubernetesDiscoveryOptions {
  frontend: string;
  config: DiscoveryConfig;
  /** The frontend's own address: discovery's API server. */
  server: HostPort;
  clock: Clock;
  log: Logger;
  /** A new, non-empty list (after the debounce). */
  onList: (upstreams: HostPort[]) => void;
}

export interface DiscoveryStatus {
  source: string;
  synced: boolean;
  lastList?: string[];
  lastError?: string;
  ignoredEmpty: number;
  /** Entries of the last list that are no dialable address (host names, zone ids, bad ports), as written. */
  rejected?: string[];
}

export class KubernetesDiscovery {
  readonly #opts: KubernetesDiscoveryOptions;
  readonly #abort = new AbortController();
  #informer: Informer<KubeObject> | undefined;
  #compute: (() => DiscoveredUpstreams) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #closing: Promise<void> | undefined;
  #lastApplied = '';
  readonly status: DiscoveryStatus = { source: 'starting', synced: false, ignoredEmpty: 0 };

  constructor(opts: KubernetesDiscoveryOptions) {
    this.#opts = opts;
  }

  start(): void {
    this.#running ??= this.#run().catch((err: unknown) => {
      this.status.lastError = describeError(err);
      this.#opts.log.error({ frontend: this.#opts.frontend, err: this.status.lastError }, 'discovery stopped; the current upstream list stays');
    });
  }

  /** The list already in use (from the cache or the seeds), so an identical first list is not re-applied. */
  seed(list: readonly HostPort[]): void {
    this.#lastApplied = list.map(formatHostPort).join(',');
  }

  /** Stops discovery and waits for the loop to end. Idempotent: later calls join the first. */
  close(): Promise<void> {
    return (this.#closing ??= (async () => {
      this.#abort.abort();
      clearTimeout(this.#timer);
      await this.#informer?.close();
      await this.#running;
    })());
  }

  async #run(): Promise<void> {
    const { config, server, clock, log, frontend } = this.#opts;
    const kc = config.kubeconfig
      ? loadKubeConfig({ kind: 'text', text: await readKubeconfigFor(config.kubeconfig, server), what: `kubeconfig ${config.kubeconfig}` })
      : loadKubeConfig({ kind: 'in-cluster', host: server.host, port: String(server.port) });
    const api = createKubeApi(kc, { timeoutMs: 10_000, userAgent: 'kubeward-proxy' });
    const signal = this.#abort.signal;
    let version: string | undefined;
    for (let attempt = 0; !signal.aborted; attempt++) {
      try {
        version = await discoverGroupVersion(api.client, 'discovery.k8s.io', ['v1', 'v1beta1']);
        break;
      } catch (err) {
        this.status.lastError = describeError(err);
        const delay = Math.min(30_000, 500 * 2 ** attempt);
        log.warn({ frontend, err: this.status.lastError, retryInMs: delay }, 'discovery: API not reachable yet; the current upstream list stays');
        await clock.sleep(delay, signal).catch(() => undefined);
      }
    }
    if (signal.aborted) return;
    const kind = version
      ? { group: 'discovery.k8s.io', version, plural: 'endpointslices', kind: 'EndpointSlice', namespaced: true }
      : { group: '', version: 'v1', plural: 'endpoints', kind: 'Endpoints', namespaced: true };
    this.status.source = version ? `endpointslices.discovery.k8s.io/${version}` : 'endpoints/v1';
    const listOpts = version ? { labelSelector: `${SERVICE_NAME_LABEL}=kubernetes` } : { fieldSelector: 'metadata.name=kubernetes' };
    const informer = new Informer<KubeObject>({
      name: `proxy-${frontend}-${kind.plural}`,
      source: resourceSource(api.resource<KubeObject>(kind), 'default', listOpts),
      clock,
      log,
    });
    this.#compute = () =>
      version
        ? upstreamsFromEndpointSlices(informer.list() as unknown as EndpointSliceLike[])
        : upstreamsFromEndpoints(informer.list() as unknown as EndpointsLike[]);
    for (const ev of ['add', 'update', 'delete'] as const) informer.on(ev, () => this.#schedule());
    this.#informer = informer;
    log.info({ frontend, source: this.status.source }, 'discovery: watching the kubernetes endpoints');
    informer.start();
    const aborted = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    await Promise.race([informer.waitForSync(), aborted]);
    if (signal.aborted) return;
    this.status.synced = true;
    this.#schedule();
  }

  #schedule(): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#flush(), this.#opts.config.debounceMs);
  }

  #flush(): void {
    if (this.#abort.signal.aborted || !this.#compute) return;
    const { upstreams: list, rejected } = this.#compute();
    const { log, frontend } = this.#opts;
    const rejectedKey = rejected.join(',');
    if (rejectedKey !== (this.status.rejected ?? []).join(',')) {
      // Once per change, not per event: the same bad entry stays in the object until someone fixes it.
      if (rejected.length > 0)
        log.warn(
          { frontend, source: this.status.source, rejected },
          "discovery: endpoints that are no IP address of the slice's family (or have a bad port) are left out",
        );
      this.status.rejected = rejected.length > 0 ? rejected : undefined;
    }
    if (list.length === 0) {
      this.status.ignoredEmpty++;
      log.warn({ frontend, source: this.status.source }, 'discovery: the endpoints list no apiserver; ignored, the current upstream list stays');
      return;
    }
    const key = list.map(formatHostPort).join(',');
    this.status.lastList = list.map(formatHostPort);
    if (key === this.#lastApplied) return;
    this.#lastApplied = key;
    this.#opts.onList(list);
  }
}
