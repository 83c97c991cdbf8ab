// Creates the networks, routers, ports, groups and servers the contract tests need through the raw REST
// API (the same calls on both targets), and removes them again in dependency order.
import { randomBytes } from 'node:crypto';
import type { OpenStackClientHandle } from '../../src/clients/openstack/create-openstack-client.ts';
import type { ApiRequest } from '../../src/clients/openstack/openstack-http.ts';
import type { ServiceType } from '../../src/clients/openstack/service-catalog.ts';
import { suiteFixture } from '../../testkit/suite-fixture.ts';
import { waitFor } from '../../testkit/wait-for.ts';
import type { AddressRange } from '../../testkit/openstack/ip-math.ts';
import type { ContractTarget, TargetSession } from './contract-targets.ts';

type Obj = Record<string, unknown>;

export interface TestNet {
  networkId: string;
  subnetId: string;
  cidr: string;
  gateway: string;
}

/** Addresses .100 to .199 of a /24 (see ContractFixture.network). */
export function portPool(cidr: string): AddressRange {
  const m = /^(\d+\.\d+\.\d+)\.0\/24$/.exec(cidr);
  if (!m) throw new Error(`the fixture's networks are /24s, not ${cidr}`);
  return { start: `${m[1]}.100`, end: `${m[1]}.199` };
}

export class ContractFixture {
  readonly prefix = `kw-ct-${randomBytes(3).toString('hex')}`;
  readonly #c: OpenStackClientHandle;
  readonly #undo: (() => Promise<unknown>)[] = [];

  constructor(client: OpenStackClientHandle) {
    this.#c = client;
  }

  async call<T = Obj>(service: ServiceType, req: ApiRequest): Promise<T> {
    return (await this.#c.http.request<T>(service, req)).body;
  }

  /**
   * A network with one IPv4 subnet. Its ports get addresses .100 to .199 of the /24 only: Neutron draws
   * them at random, so the tests' addresses of no instance (a stale next hop, a Node's address) sit
   * outside that pool, where no server of the suite can have been given them.
   */
  async network(cidr = '10.0.0.0/24'): Promise<TestNet> {
    const net = await this.call<{ network: { id: string } }>('network', {
      method: 'POST',
      path: '/networks',
      body: { network: { name: `${this.prefix}-net` } },
    });
    this.#undo.push(() => this.#ignore404('network', `/networks/${net.network.id}`));
    const sub = await this.call<{ subnet: { id: string; gateway_ip: string } }>('network', {
      method: 'POST',
      path: '/subnets',
      body: { subnet: { name: `${this.prefix}-sub`, network_id: net.network.id, cidr, ip_version: 4, allocation_pools: [portPool(cidr)] } },
    });
    return { networkId: net.network.id, subnetId: sub.subnet.id, cidr, gateway: sub.subnet.gateway_ip };
  }

  /** A router with an interface on the subnet; routes are cleared before the interface goes. */
  async router(net: TestNet): Promise<string> {
    const r = await this.call<{ router: { id: string } }>('network', { method: 'POST', path: '/routers', body: { router: { name: `${this.prefix}-router` } } });
    const id = r.router.id;
    this.#undo.push(() => this.#ignore404('network', `/routers/${id}`));
    await this.call('network', { method: 'PUT', path: `/routers/${id}/add_router_interface`, body: { subnet_id: net.subnetId } });
    this.#undo.push(async () => {
      await this.#c.neutron.updateRoutes(id, []).catch(() => undefined);
      await this.call('network', { method: 'PUT', path: `/routers/${id}/remove_router_interface`, body: { subnet_id: net.subnetId } }).catch(() => undefined);
    });
    return id;
  }

  async port(networkId: string, extra: Obj = {}): Promise<Obj & { id: string; mac_address: string }> {
    const p = await this.call<{ port: Obj & { id: string; mac_address: string } }>('network', {
      method: 'POST',
      path: '/ports',
      body: { port: { name: `${this.prefix}-port`, network_id: networkId, ...extra } },
    });
    this.#undo.push(() => this.#ignore404('network', `/ports/${p.port.id}`));
    return p.port;
  }

  async securityGroup(suffix = 'sg'): Promise<Obj & { id: string; name: string }> {
    const g = await this.call<{ security_group: Obj & { id: string; name: string } }>('network', {
      method: 'POST',
      path: '/security-groups',
      body: { security_group: { name: `${this.prefix}-${suffix}` } },
    });
    this.#undo.push(() => this.#ignore404('network', `/security-groups/${g.security_group.id}`));
    return g.security_group;
  }

  /** A server on the network (flavor it.tiny, image it-image, as setup.sh creates them), waited for until ACTIVE; metadata as a provisioner writes it. */
  async server(name: string, networkId: string, metadata?: Record<string, string>): Promise<string> {
    const flavors = await this.call<{ flavors: { id: string; name: string }[] }>('compute', { method: 'GET', path: '/flavors' });
    const images = await this.call<{ images: { id: string }[] }>('image', { method: 'GET', path: '/v2/images', query: { name: 'it-image' } });
    const flavor = flavors.flavors.find((f) => f.name === 'it.tiny');
    if (!flavor || !images.images[0]) throw new Error('flavor it.tiny or image it-image missing (setup.sh creates them)');
    const s = await this.call<{ server: { id: string } }>('compute', {
      method: 'POST',
      path: '/servers',
      body: { server: { name: `${this.prefix}-${name}`, flavorRef: flavor.id, imageRef: images.images[0].id, networks: [{ uuid: networkId }], metadata } },
    });
    const id = s.server.id;
    this.#undo.push(async () => {
      await this.#c.nova.deleteServer(id);
      await waitFor(async () => (await this.#c.nova.getServer(id)) === undefined, { timeoutMs: 60_000, intervalMs: 250, what: `server ${id} gone` });
    });
    await waitFor(async () => (await this.#c.nova.getServer(id))?.status === 'ACTIVE', { timeoutMs: 60_000, intervalMs: 250, what: `server ${name} ACTIVE` });
    return id;
  }

  /** A server as server() makes it, with its first address and its creation time as Nova reports them. */
  async addressedServer(name: string, networkId: string, metadata?: Record<string, string>): Promise<{ id: string; ip: string; createdMs: number }> {
    const id = await this.server(name, networkId, metadata);
    const got = (await this.#c.nova.getServer(id))!;
    return { id, ip: Object.values(got.addresses).flat()[0]!.addr, createdMs: Date.parse(got.created) };
  }

  /** Undoes everything in reverse order; failures are collected and reported after all steps ran. */
  async cleanup(): Promise<void> {
    // Two passes: a step that failed because something created later still used its object (a group
    // added to a server after the server was made) succeeds once everything else is gone.
    let steps = this.#undo.splice(0).reverse();
    let errors: unknown[] = [];
    for (let pass = 0; pass < 2 && steps.length; pass++) {
      const failed: typeof steps = [];
      errors = [];
      for (const step of steps) {
        try {
          await step();
        } catch (err) {
          failed.push(step);
          errors.push(err);
        }
      }
      steps = failed;
    }
    if (errors.length) throw new AggregateError(errors, `contract fixture cleanup: ${errors.length} step(s) failed`);
  }

  async #ignore404(service: ServiceType, path: string): Promise<void> {
    await this.#c.http.requestOrAbsent(service, { method: 'DELETE', path });
  }
}

/** What the routegc, flight and contract suites start from on a target: a session, a fixture, one network and its router. */
export interface RoutedNetwork {
  s: TargetSession;
  fx: ContractFixture;
  net: TestNet;
  routerId: string;
  /** Removes what the fixture made, then closes the session (also when the clean-up failed). */
  close(): Promise<void>;
}

/** Opens a session on the target with a network (cidr) and a router on it; on a failure half way, what was made is removed. */
export async function openRoutedNetwork(target: ContractTarget, cidr = '10.0.0.0/24'): Promise<RoutedNetwork> {
  const s = await target.open();
  const fx = new ContractFixture(s.admin);
  const close = async () => {
    try {
      await fx.cleanup();
    } finally {
      await s.close();
    }
  };
  try {
    const net = await fx.network(cidr);
    // One router per suite: real Neutron gives a subnet's gateway address to one router only.
    const routerId = await fx.router(net);
    return { s, fx, net, routerId, close };
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}

/** Inside a describe: openRoutedNetwork for the whole suite (see suiteFixture). */
export function useRoutedNetwork(target: ContractTarget, cidr?: string): Omit<RoutedNetwork, 'close'> {
  return suiteFixture(
    `the OpenStack fixture on ${target.name}`,
    () => openRoutedNetwork(target, cidr),
    (env) => env.close(),
  );
}
