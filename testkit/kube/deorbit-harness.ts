// Shared set-up for deorbit integration tests: a management and a "satellite" kube-apiserver (real),
// the ManagedCluster CRD, an OpenStack emulator per scenario on the scenario's manual clock, the
// CSI-like and CCM-like fixtures, and a virtual-time driver that runs the deorbit reconcile as the
// work queue would (requeue after, backoff on error) while the fixtures act in between.
// The realistic satellite runs as a real cluster does around storage: every default admission plugin
// (StorageObjectInUseProtection puts the pvc- and pv-protection finalizers on), the real
// kube-controller-manager (pvc-protection, pv-protection, garbagecollector, serviceaccount), and a CSI
// stand-in that removes the PV as soon as Cinder accepts the delete, as external-provisioner does.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ManualClock, systemClock } from '../../src/base/clock.ts';
import { createSilentLogger } from '../../src/base/logger.ts';
import { EventRecorder, type EventSink } from '../../src/clients/kube/event-recorder.ts';
import { createKubeApi, type KubeApi } from '../../src/clients/kube/kube-api.ts';
import { isNotFound } from '../../src/clients/kube/kube-api-error.ts';
import { loadKubeConfig } from '../../src/clients/kube/load-kube-config.ts';
import { KINDS } from '../../src/clients/kube/resource-kinds.ts';
import type { ResourceClient } from '../../src/clients/kube/resource-client.ts';
import { resolveCloudConfig } from '../../src/clients/openstack/cloud-config.ts';
import { createOpenStackClient, type OpenStackClientHandle } from '../../src/clients/openstack/create-openstack-client.ts';
import { parse } from 'yaml';
import { openStackDeorbitCloud } from '../../src/controllers/deorbit/deorbit-cloud.ts';
import { DEFAULT_DEORBIT_SETTINGS, type DeorbitSettings } from '../../src/controllers/deorbit/deorbit-types.ts';
import { secretConnector, type CloudFactory } from '../../src/controllers/managed-cluster/cluster-connector.ts';
import { deorbitReconciler } from '../../src/controllers/managed-cluster/deorbit-reconciler.ts';
import { DEORBIT_FINALIZER, type ManagedCluster, type ManagedClusterSpec } from '../../src/controllers/managed-cluster/managed-cluster.ts';
import { backoffDelayMs } from '../../src/controllers/runtime/backoff.ts';
import { OpenStackEmulator } from '../openstack/openstack-emulator.ts';
import { FakeCcm, FakeCsi, FakeKubelet } from './cloud-fixtures.ts';
import { createSnapshotClasses, ensureNamespace, installCrd, VOLUME_SNAPSHOT_CLASS_CRD, VOLUME_SNAPSHOT_CRD } from './kube-objects.ts';
import { STORAGE_CONTROLLERS, startKubeApiserver, type KubeTestServer } from './kube-test-server.ts';

export const CRD_FILE = join(import.meta.dirname, '../../deploy/operator/base/managedcluster-crd.yaml');
const KEEP = 'test.kubeward.io/keep';

export interface Harness {
  mgmt: KubeApi;
  sat: KubeApi;
  /** The satellite's kubeconfig as text (what goes into the Secret). */
  satKubeconfig: string;
  satServers: KubeTestServer[];
  /** The satellite runs the real controller-manager and default admission plugins. */
  realistic: boolean;
  stop(): Promise<void>;
}

/** The satellite's controllers in the realistic tier; serviceaccount(-token) so pods pass admission. */
export const REALISTIC_CONTROLLERS = [...STORAGE_CONTROLLERS, 'serviceaccount', 'serviceaccount-token'];

export async function startHarness(opts: { realistic?: boolean } = {}): Promise<Harness> {
  const realistic = opts.realistic ?? false;
  const started = await Promise.allSettled([startKubeApiserver(), startKubeApiserver(undefined, realistic ? { controllers: REALISTIC_CONTROLLERS } : {})]);
  const servers = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const stopAll = () => Promise.all(servers.map((x) => x.stop())).then(() => undefined);
  const failed = started.find((r) => r.status === 'rejected');
  if (failed) {
    await stopAll();
    throw failed.reason;
  }
  const [m, s] = servers as [KubeTestServer, KubeTestServer];
  const mgmt = createKubeApi(loadKubeConfig({ kind: 'file', path: m.kubeconfigPath }));
  const sat = createKubeApi(loadKubeConfig({ kind: 'file', path: s.kubeconfigPath }));
  try {
    await installCrd(mgmt, await readFile(CRD_FILE, 'utf8'));
    await installCrd(sat, VOLUME_SNAPSHOT_CRD);
    await installCrd(sat, VOLUME_SNAPSHOT_CLASS_CRD);
    await createSnapshotClasses(sat);
  } catch (err) {
    await stopAll(); // a failed set-up must not leave apiservers running
    throw err;
  }
  return {
    mgmt,
    sat,
    satKubeconfig: await readFile(s.kubeconfigPath, 'utf8'),
    satServers: [m, s],
    realistic,
    stop: stopAll,
  };
}

/** An OpenStack client for the emulator: real time for its retries, quick ones. */
export function emulatorClient(emu: OpenStackEmulator, cloud = 'k1'): OpenStackClientHandle {
  const doc = parse(emu.cloudsYaml(cloud, 'demo')) as Record<string, unknown>;
  const config = resolveCloudConfig({ cloudName: cloud, env: {}, clouds: { path: 'emulator', doc } });
  return createOpenStackClient({
    config,
    log: createSilentLogger(),
    clock: systemClock,
    retry: { maxAttempts: 2, baseDelayMs: 20, maxDelayMs: 50, attemptTimeoutMs: 1500 },
  });
}

export const emulatorCloudFactory: CloudFactory = (doc, cloudName, source) => {
  const config = resolveCloudConfig({ cloudName, env: {}, clouds: { path: source, doc } });
  return openStackDeorbitCloud(
    createOpenStackClient({
      config,
      log: createSilentLogger(),
      clock: systemClock,
      retry: { maxAttempts: 2, baseDelayMs: 20, maxDelayMs: 50, attemptTimeoutMs: 1500 },
    }),
  );
};

export interface RecordedEvent {
  atMs: number;
  type: string;
  reason: string;
  message: string;
}

export interface ScenarioOptions {
  name: string;
  settings?: Partial<DeorbitSettings>;
  spec?: Partial<ManagedClusterSpec>;
  /** Satellite kubeconfig to put in the Secret (a fault proxy's, for example). */
  satKubeconfig?: string;
  csiDelayMs?: number;
  ccmDelayMs?: number;
  ccmRemovesFinalizer?: boolean;
}

export class Scenario {
  readonly clock: ManualClock;
  readonly emu: OpenStackEmulator;
  readonly os: OpenStackClientHandle;
  readonly events: RecordedEvent[] = [];
  readonly ns: string;
  readonly name = 'k1';
  readonly clusters: ResourceClient<ManagedCluster>;
  readonly csi: FakeCsi;
  readonly ccm: FakeCcm;
  /** Steps only on a realistic satellite, where pods are bound to a node that has no kubelet. */
  readonly kubelet: FakeKubelet | undefined;
  readonly reconcile: (key: string) => Promise<{ requeueAfterMs?: number }>;
  reconciles = 0;
  /** The scenario clock when terminate() deleted the ManagedCluster. */
  deletedAtMs = 0;
  errors: string[] = [];
  #nextAt = 0;
  #failures = 0;
  readonly #namespaces: string[] = [];

  readonly h: Harness;
  readonly o: ScenarioOptions;

  /** A scenario with its emulator started (its port goes into the clouds.yaml). */
  static async create(h: Harness, o: ScenarioOptions): Promise<Scenario> {
    const clock = new ManualClock(Math.floor(Date.now() / 1000) * 1000);
    const emu = new OpenStackEmulator({ clock });
    await emu.start();
    return new Scenario(h, o, clock, emu);
  }

  private constructor(h: Harness, o: ScenarioOptions, clock: ManualClock, emu: OpenStackEmulator) {
    this.h = h;
    this.o = o;
    this.clock = clock;
    this.ns = `s-${o.name}`;
    this.emu = emu;
    this.os = emulatorClient(this.emu);
    this.clusters = h.mgmt.resource<ManagedCluster>(KINDS.managedCluster);
    const recorder = new EventRecorder({ events: h.mgmt.events, component: 'kubeward-operator', clock: this.clock, log: createSilentLogger() });
    const sink: EventSink = {
      record: async (obj, type, reason, message) => {
        this.events.push({ atMs: this.clock.now(), type, reason, message });
        await recorder.record(obj, type, reason, message);
      },
    };
    this.csi = new FakeCsi({
      api: h.sat,
      cinder: this.os.cinder,
      clock: this.clock,
      delayMs: o.csiDelayMs ?? 30_000,
      pvRemoval: h.realistic ? 'delete-accepted' : 'volume-gone',
    });
    this.kubelet = h.realistic ? new FakeKubelet(h.sat) : undefined;
    this.ccm = new FakeCcm({
      api: h.sat,
      octavia: this.os.octavia,
      clock: this.clock,
      clusterName: this.name,
      delayMs: o.ccmDelayMs ?? 60_000,
      removeFinalizer: o.ccmRemovesFinalizer,
    });
    this.reconcile = deorbitReconciler({
      clusters: this.clusters,
      connector: secretConnector({ secrets: h.mgmt.secrets, cloudFactory: emulatorCloudFactory, kubeTimeoutMs: 2000 }),
      events: sink,
      settings: { ...DEFAULT_DEORBIT_SETTINGS, ...o.settings },
      clock: this.clock,
      log: createSilentLogger(),
    });
  }

  get key(): string {
    return `${this.ns}/${this.name}`;
  }

  get projectId(): string {
    return 'project-demo';
  }

  /** Namespace, Secrets and a Running ManagedCluster (with a test finalizer that keeps it for inspection). */
  async createCluster(): Promise<ManagedCluster> {
    return this.createClusterIn(this.ns);
  }

  /** The same cluster described in another namespace (its own Secrets, the same kubeconfig and cloud). */
  async createClusterIn(ns: string): Promise<ManagedCluster> {
    const mgmt = this.h.mgmt;
    this.#namespaces.push(ns);
    await ensureNamespace(mgmt, ns);
    const secret = (name: string, key: string, text: string) =>
      mgmt.secrets.create({ metadata: { name, namespace: ns }, data: { [key]: Buffer.from(text).toString('base64') } });
    await secret('k1-kubeconfig', 'kubeconfig', this.o.satKubeconfig ?? this.h.satKubeconfig);
    await secret('k1-openstack', 'clouds.yaml', this.emu.cloudsYaml('k1', 'demo'));
    const mc = await this.clusters.create({
      metadata: { name: this.name, namespace: ns, finalizers: [KEEP] },
      spec: {
        kubeconfigSecretRef: { name: 'k1-kubeconfig' },
        cloudCredentialsSecretRef: { name: 'k1-openstack', cloud: 'k1' },
        version: '1.30.2',
        openstack: { loadBalancerClusterName: this.name },
        // Scenarios are about deorbit itself: the cluster asks for it (harm-7 tests override this).
        deletionPolicy: 'Delete',
        ...this.o.spec,
      },
    });
    return this.clusters.replaceStatus({ ...mc, status: { phase: 'Running' } });
  }

  /** Puts other kubeconfig text into this cluster's Secret (the connector sees the new version). */
  async replaceKubeconfig(text: string): Promise<void> {
    const secret = await this.h.mgmt.secrets.get(this.ns, 'k1-kubeconfig');
    await this.h.mgmt.secrets.replace({ ...secret, data: { kubeconfig: Buffer.from(text).toString('base64') } });
  }

  /** The management cluster's own kubeconfig: another cluster than the satellite. */
  async mgmtKubeconfig(): Promise<string> {
    return readFile(this.h.satServers[0]!.kubeconfigPath, 'utf8');
  }

  /** Runs the reconcile once for another ManagedCluster (a twin in another namespace). */
  async reconcileKey(key: string): Promise<void> {
    await this.reconcile(key);
  }

  async get(): Promise<ManagedCluster | undefined> {
    return this.clusters.get(this.ns, this.name).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
  }

  async hasFinalizer(): Promise<boolean> {
    return (await this.get())?.metadata.finalizers?.includes(DEORBIT_FINALIZER) ?? false;
  }

  /** Deletes the ManagedCluster; returns T0 (the deletion timestamp). */
  async terminate(): Promise<number> {
    await this.clusters.delete(this.ns, this.name);
    const mc = (await this.get())!;
    this.#nextAt = this.clock.now();
    this.deletedAtMs = this.clock.now();
    return Date.parse(mc.metadata.deletionTimestamp!);
  }

  /** A Cinder volume in the emulator's demo project. */
  volume(id: string, status = 'available'): string {
    const now = this.clock.now();
    this.emu.store.volumes.set(id, {
      id,
      name: id,
      project_id: this.projectId,
      user_id: 'user-demo',
      size: 1,
      status,
      created_at: now,
      updated_at: now,
      description: null,
      metadata: {},
      attachments: [],
      volume_type: '__DEFAULT__',
    });
    return id;
  }

  /** An Octavia load balancer (and optionally a floating IP on its VIP port). */
  loadBalancer(id: string, name: string, opts: { status?: string; fip?: string } = {}): void {
    const now = this.clock.now();
    this.emu.store.loadBalancers.set(id, {
      id,
      name,
      description: '',
      project_id: this.projectId,
      provisioning_status: opts.status ?? 'ACTIVE',
      operating_status: 'ONLINE',
      vip_address: '10.0.0.50',
      vip_port_id: `port-${id}`,
      vip_subnet_id: 'subnet-x',
      vip_network_id: 'net-x',
      created_at: now,
      updated_at: now,
      tags: [],
    });
    if (opts.fip) {
      this.emu.store.floatingIps.set(opts.fip, {
        id: opts.fip,
        project_id: this.projectId,
        created_at: now,
        updated_at: now,
        revision_number: 1,
        floating_ip_address: '172.24.4.50',
        floating_network_id: 'ext',
        port_id: `port-${id}`,
        fixed_ip_address: '10.0.0.50',
        router_id: null,
        description: '',
      });
    }
  }

  /** Runs the reconcile once now (as an informer event would). */
  async reconcileNow(): Promise<void> {
    this.#nextAt = this.clock.now();
    await this.#tick();
  }

  /**
   * Virtual time: fixtures step, the reconcile runs when due (requeue-after or backoff, as the work
   * queue schedules it), then the clock moves to the next due time (at most maxStepMs ahead).
   */
  async drive(until: () => Promise<boolean>, opts: { maxVirtualMs: number; maxStepMs?: number; fixtures?: boolean }): Promise<number> {
    const start = this.clock.now();
    for (;;) {
      if (opts.fixtures !== false) {
        await this.csi.step();
        await this.ccm.step();
        await this.kubelet?.step();
      }
      if (this.clock.now() >= this.#nextAt) await this.#tick();
      if (await until()) return this.clock.now();
      if (this.clock.now() - start >= opts.maxVirtualMs)
        throw new Error(`not reached within ${opts.maxVirtualMs} ms of controller time; errors: ${this.errors.slice(-3).join(' | ')}`);
      this.clock.advance(Math.max(1, Math.min(opts.maxStepMs ?? 5000, this.#nextAt - this.clock.now())));
    }
  }

  async #tick(): Promise<void> {
    this.reconciles++;
    try {
      const r = await this.reconcile(this.key);
      this.#failures = 0;
      this.#nextAt = this.clock.now() + (r.requeueAfterMs ?? 300_000);
    } catch (err) {
      this.#failures++;
      this.errors.push((err as Error).message);
      this.#nextAt = this.clock.now() + backoffDelayMs(this.#failures);
    }
  }

  /**
   * Stops the emulator and lets the scenario's ManagedClusters go (finalizers stripped): a live one
   * left behind would record the satellite's identity and make the next scenario's deorbit refuse.
   */
  async close(): Promise<void> {
    await this.emu.close();
    for (const ns of this.#namespaces) {
      await this.clusters.delete(ns, this.name).catch(() => undefined);
      await this.clusters.patch(ns, this.name, { metadata: { finalizers: null } }).catch(() => undefined);
    }
  }
}
