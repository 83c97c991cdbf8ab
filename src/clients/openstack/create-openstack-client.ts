// Wires a cloud's config into a ready OpenStackClient: one Keystone session shared by every service.
import type { CallFence } from '../../base/call-fence.ts';
import { systemClock, type Clock } from '../../base/clock.ts';
import type { Logger } from '../../base/logger.ts';
import { loadCloudConfig, type CloudConfig } from './cloud-config.ts';
import type { LookupEnvironment } from './clouds-file-lookup.ts';
import type { FetchFn, SenderDeps } from './http-sender.ts';
import { InternTable } from '../../base/intern.ts';
import { KeystoneSession } from './keystone-session.ts';
import { nodeFetch } from './node-fetch.ts';
import { OpenStackHttp } from './openstack-http.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-policy.ts';
import type { OpenStackClient } from './openstack-client.ts';
import { KeystoneClient } from './keystone-client.ts';
import { NovaClient } from './nova-client.ts';
import { NeutronClient } from './neutron-client.ts';
import { CinderClient } from './cinder-client.ts';
import { OctaviaClient } from './octavia-client.ts';

/**
 * The compute microversion kubeward speaks (tags, embedded flavors, and from 2.69 on the servers of a
 * down cell listed with status UNKNOWN instead of silently left out, which would make a partial list
 * look complete). A cloud config may name a newer one, never an older one.
 */
export const DEFAULT_COMPUTE_API_VERSION = '2.69';

/** The cloud config's compute_api_version, raised to DEFAULT_COMPUTE_API_VERSION when older. */
export function computeApiVersionFor(configured: string | undefined): string {
  const parse = (v: string) => /^(\d+)\.(\d+)$/.exec(v)?.slice(1).map(Number) as [number, number] | undefined;
  const want = parse(DEFAULT_COMPUTE_API_VERSION)!;
  const have = configured === undefined ? undefined : parse(configured);
  if (!have || have[0] < want[0] || (have[0] === want[0] && have[1] < want[1])) return DEFAULT_COMPUTE_API_VERSION;
  return configured!;
}

export interface OpenStackClientOptions {
  config: CloudConfig;
  log: Logger;
  clock?: Clock;
  /** Default: `shared`'s transport. */
  fetch?: FetchFn;
  /** What clients of one process share (see OpenStackShared); default: a set of this client's own. */
  shared?: OpenStackShared;
  /** Overrides of DEFAULT_RETRY_POLICY (attempts, backoff, per-attempt timeout). */
  retry?: Partial<RetryPolicy>;
  random?: () => number;
  /** Renew the token this long before it expires (default 5 min, at most half its lifetime). */
  renewBeforeMs?: number;
  /** Page size for Nova and Cinder lists; the services' own maximum when absent. */
  pageSize?: number;
  /**
   * Checked just before every request that changes something (reboot, delete, tag, route or rule
   * change...): the operator's lease by its own clock. Authentication itself is never fenced.
   */
  fence?: CallFence;
}

export interface OpenStackClientHandle extends OpenStackClient {
  /** The raw authenticated transport, for calls the typed clients do not cover (test fixtures). */
  readonly http: OpenStackHttp;
  readonly session: KeystoneSession;
}

/**
 * What every OpenStack client of a process shares when its composition root hands the same object
 * to each (the operator: one client per cluster): one node:http(s) transport, so each cloud endpoint
 * is one pool of keep-alive connections, and one table of catalog strings.
 */
export interface OpenStackShared {
  fetch: FetchFn;
  intern: (s: string) => string;
}

/** `fetch`: a transport of the caller's (tests); default a new node:http(s) one (node-fetch.ts). */
export function createOpenStackShared(fetch: FetchFn = nodeFetch()): OpenStackShared {
  return { fetch, intern: new InternTable().intern };
}

export function createOpenStackClient(opts: OpenStackClientOptions): OpenStackClientHandle {
  const shared = opts.shared ?? createOpenStackShared(opts.fetch);
  const deps: SenderDeps = {
    fetch: opts.fetch ?? shared.fetch,
    clock: opts.clock ?? systemClock,
    log: opts.log.child({ cloud: opts.config.cloudName }),
    policy: { ...DEFAULT_RETRY_POLICY, ...opts.retry },
    random: opts.random,
  };
  // The token request is a POST that changes nothing of the cloud's: the session goes unfenced.
  const session = new KeystoneSession({ config: opts.config, deps, renewBeforeMs: opts.renewBeforeMs, intern: shared.intern });
  const http = new OpenStackHttp(session, { ...deps, fence: opts.fence }, computeApiVersionFor(opts.config.computeApiVersion));
  return {
    http,
    session,
    keystone: new KeystoneClient(http, session),
    nova: new NovaClient(http, opts.pageSize),
    neutron: new NeutronClient(http),
    cinder: new CinderClient(http, opts.pageSize),
    octavia: new OctaviaClient(http),
    invalidateToken: () => session.invalidate(),
    close: (reason) => http.close(reason),
  };
}

/** Looks the cloud up (clouds.yaml, OS_* variables) and creates the client; for the CLI's modes. */
export async function openStackClientFor(
  cloudName: string | undefined,
  where: LookupEnvironment,
  opts: Omit<OpenStackClientOptions, 'config'>,
): Promise<OpenStackClientHandle> {
  return createOpenStackClient({ ...opts, config: await loadCloudConfig({ cloudName, where }) });
}
