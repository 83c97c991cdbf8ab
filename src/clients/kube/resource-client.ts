// Typed CRUD, paging and watch for one kind of object, on top of KubeClient. One ResourceKind per
// API resource (core or group), so the controllers name what they touch and nothing else.
import { KubeApiError } from './kube-api-error.ts';
import type { KubeClient, Query } from './kube-client.ts';
import type { KubeList, KubeObject, WatchEvent } from './kube-types.ts';

export interface ResourceKind {
  /** "" for the core group. */
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
}

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size; the client follows `continue` until the list is complete. */
  limit?: number;
  /**
   * Metadata only (PartialObjectMetadata, as client-go's metadata informers ask): the objects come
   * without spec, status or data, so a cache of Secrets never holds or receives their contents.
   */
  metadataOnly?: boolean;
}

const METADATA_LIST = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
const METADATA_ONE = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

/** Per-call bounds: an abort signal (a leader's fence, a controller stopping) and a deadline. */
export interface CallOptions {
  signal?: AbortSignal;
  /** 0 or missing: the client's default deadline. */
  timeoutMs?: number;
}

export type PatchType = 'merge' | 'json' | 'strategic';
const PATCH_CONTENT_TYPE: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
};

export class ResourceClient<T extends KubeObject> {
  readonly kind: ResourceKind;
  readonly #kube: KubeClient;

  constructor(kube: KubeClient, kind: ResourceKind) {
    this.#kube = kube;
    this.kind = kind;
  }

  /** The collection path; namespace undefined means all namespaces (or a cluster-scoped kind). */
  path(namespace?: string, name?: string, subresource?: string): string {
    const k = this.kind;
    let p = k.group === '' ? `/api/${k.version}` : `/apis/${k.group}/${k.version}`;
    if (k.namespaced && namespace !== undefined) p += `/namespaces/${encodeURIComponent(namespace)}`;
    p += `/${k.plural}`;
    if (name !== undefined) p += `/${encodeURIComponent(name)}`;
    if (subresource) p += `/${subresource}`;
    return p;
  }

  /** Every object, following `continue` tokens; the list's resourceVersion is the last page's. */
  async list(namespace?: string, opts: ListOptions = {}, call: CallOptions = {}): Promise<KubeList<T>> {
    const items: T[] = [];
    let cont: string | undefined;
    let rv: string | undefined;
    do {
      const page = await this.#kube.request<KubeList<T>>('GET', this.path(namespace), {
        query: { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector, limit: opts.limit ?? 500, continue: cont },
        ...(opts.metadataOnly ? { accept: METADATA_LIST } : {}),
        ...call,
      });
      // The apiserver writes an empty PartialObjectMetadataList as `"items": null` (Go's nil slice;
      // a full list says []): that, from a body that names itself a list, is an empty page.
      if (page?.items === null && typeof page.kind === 'string' && page.kind.endsWith('List')) page.items = [];
      // A 200 without an items list (a proxy's `{}`) is not an empty collection: nothing may act on it.
      if (!Array.isArray(page?.items)) {
        throw new KubeApiError({ method: 'GET', path: this.path(namespace), status: 200, reason: 'UnexpectedBody', message: 'the answer has no "items" list' });
      }
      items.push(...page.items);
      cont = page.metadata?.continue || undefined;
      rv = page.metadata?.resourceVersion;
    } while (cont);
    return { metadata: { resourceVersion: rv }, items };
  }

  get(namespace: string | undefined, name: string, call: CallOptions = {}): Promise<T> {
    return this.#kube.request<T>('GET', this.path(namespace, name), { ...call });
  }

  create(obj: T, call: CallOptions = {}): Promise<T> {
    return this.#kube.request<T>('POST', this.path(obj.metadata.namespace), { body: this.#withType(obj), ...call });
  }

  /** PUT with the object's resourceVersion: fails with a conflict if someone wrote in between. */
  replace(obj: T, call: CallOptions = {}): Promise<T> {
    return this.#kube.request<T>('PUT', this.path(obj.metadata.namespace, obj.metadata.name), { body: this.#withType(obj), ...call });
  }

  replaceStatus(obj: T, call: CallOptions = {}): Promise<T> {
    return this.#kube.request<T>('PUT', this.path(obj.metadata.namespace, obj.metadata.name, 'status'), { body: this.#withType(obj), ...call });
  }

  patch(namespace: string | undefined, name: string, patch: unknown, type: PatchType = 'merge', subresource?: string, call: CallOptions = {}): Promise<T> {
    return this.#kube.request<T>('PATCH', this.path(namespace, name, subresource), { body: patch, contentType: PATCH_CONTENT_TYPE[type], ...call });
  }

  /** DELETE; `uid`/`resourceVersion` preconditions make it delete exactly the object that was seen. */
  delete(namespace: string | undefined, name: string, opts: { uid?: string; propagationPolicy?: string } & CallOptions = {}): Promise<unknown> {
    const body: Record<string, unknown> = { kind: 'DeleteOptions', apiVersion: 'v1' };
    if (opts.uid) body.preconditions = { uid: opts.uid };
    if (opts.propagationPolicy) body.propagationPolicy = opts.propagationPolicy;
    return this.#kube.request('DELETE', this.path(namespace, name), { body, signal: opts.signal, timeoutMs: opts.timeoutMs });
  }

  watch(
    namespace: string | undefined,
    query: Query,
    onEvent: (ev: WatchEvent<T>) => void,
    opts: { signal?: AbortSignal; idleMs: number; metadataOnly?: boolean },
  ): Promise<void> {
    return this.#kube.watch<T>(this.path(namespace), { allowWatchBookmarks: true, ...query }, onEvent, {
      signal: opts.signal,
      idleMs: opts.idleMs,
      accept: opts.metadataOnly ? METADATA_ONE : undefined,
    });
  }

  #withType(obj: T): T {
    const k = this.kind;
    return { ...obj, apiVersion: k.group === '' ? k.version : `${k.group}/${k.version}`, kind: k.kind };
  }
}
