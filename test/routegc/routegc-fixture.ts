// An emulated cloud for routegc and flight tests: a network with a router, servers on it, a fake
// Node list, and a RouteGcRunner wired to the real OpenStack client with a metrics registry.
import { Registry } from '../../src/admin/metrics.ts';
import { createLogger } from '../../src/base/logger.ts';
import { resolveCloudConfig } from '../../src/clients/openstack/cloud-config.ts';
import { createOpenStackClient, type OpenStackClientHandle } from '../../src/clients/openstack/create-openstack-client.ts';
import type { Condition } from '../../src/clients/kube/kube-types.ts';
import type { ClusterNode } from '../../src/controllers/managed-cluster/cluster-view.ts';
import type { ClusterNodes } from '../../src/controllers/managed-cluster/cluster-adapters.ts';
import type { ClusterEvent } from '../../src/controllers/managed-cluster/cluster-events.ts';
import { OpenStackEmulator, type EmulatorOptions } from '../../testkit/openstack/openstack-emulator.ts';
import { ContractFixture, type TestNet } from '../openstack/contract-fixture.ts';

export class FakeNodes implements ClusterNodes {
  nodes: ClusterNode[] = [];
  failing = false;
  conditions: { node: string; condition: Omit<Condition, 'lastTransitionTime'> }[] = [];
  async list(): Promise<ClusterNode[]> {
    if (this.failing) throw new Error("the cluster's API is down");
    return this.nodes.map((n) => ({ ...n }));
  }
  async setCondition(node: string, condition: Omit<Condition, 'lastTransitionTime'>): Promise<boolean> {
    this.conditions.push({ node, condition });
    return true;
  }
}

export interface Cloud {
  emu: OpenStackEmulator;
  os: OpenStackClientHandle;
  fx: ContractFixture;
  net: TestNet;
  routerId: string;
  nodes: FakeNodes;
  events: ClusterEvent[];
  registry: Registry;
  logs: string[];
  /** Adds a server (with the metadata its provisioner writes, if any) and returns its id and fixed IP. */
  server(name: string, metadata?: Record<string, string>): Promise<{ id: string; ip: string }>;
  routes(): Promise<string[]>;
  count(method: string, pathPart: string): number;
  metric(name: string): Promise<number>;
}

export async function openCloud(t: { after(fn: () => Promise<void>): void }, emuOpts: EmulatorOptions = {}): Promise<Cloud> {
  const emu = new OpenStackEmulator({ maxRoutes: 30, ...emuOpts });
  await emu.start();
  t.after(() => emu.close());
  const config = resolveCloudConfig({
    env: {
      OS_AUTH_URL: emu.authUrl,
      OS_USERNAME: 'admin',
      OS_PASSWORD: 'admin',
      OS_PROJECT_NAME: 'admin',
      OS_USER_DOMAIN_NAME: 'Default',
      OS_PROJECT_DOMAIN_NAME: 'Default',
    },
  });
  const logs: string[] = [];
  const log = createLogger({ format: 'json', level: 'debug', write: (l) => void logs.push(l) });
  // The client keeps the real clock: its retry backoff must not wait on a clock the test moves by hand.
  const os = createOpenStackClient({ config, log, retry: { baseDelayMs: 5, maxDelayMs: 20, attemptTimeoutMs: 3000, maxAttempts: 2 } });
  const fx = new ContractFixture(os);
  const net = await fx.network('10.0.0.0/24');
  const routerId = await fx.router(net);
  const cloud: Cloud = {
    emu,
    os,
    fx,
    net,
    routerId,
    nodes: new FakeNodes(),
    events: [],
    registry: new Registry(),
    logs,
    server: async (name, metadata) => {
      const id = await fx.server(name, net.networkId, metadata);
      const s = await os.nova.getServer(id);
      const ip = Object.values(s!.addresses).flat()[0]!.addr;
      return { id, ip };
    },
    routes: async () => (await os.neutron.getRouter(routerId))!.routes.map((r) => `${r.destination}>${r.nexthop}`).sort(),
    count: (method, part) => emu.requests.filter((r) => r.method === method && r.path.includes(part)).length,
    metric: async (name) => {
      const m = (await cloud.registry.getMetricsAsJSON()).find((x) => x.name === name);
      return (m?.values ?? []).reduce((s, v) => s + v.value, 0);
    },
  };
  return cloud;
}
