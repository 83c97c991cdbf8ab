// The controllers no test cluster runs, played by hand and stepped by the test's clock: a CSI-like
// loop that deletes the Cinder volume and then the PV some time after the claim goes, a
// cloud-controller-like loop that deletes the Octavia load balancer and then removes the Service's
// cleanup finalizer some time after the Service is deleted, and a kubelet-like loop that lets a
// deleted pod go (nothing else would: a pod bound to a node waits for its kubelet).
import type { Clock } from '../../src/base/clock.ts';
import type { KubeApi } from '../../src/clients/kube/kube-api.ts';
import type { CinderApi, OctaviaApi } from '../../src/clients/openstack/openstack-client.ts';
import { CCM_FINALIZER } from './kube-objects.ts';

export interface CsiFixtureOptions {
  api: KubeApi;
  cinder: CinderApi;
  clock: Clock;
  /** Volume deletion starts this long after the claim is gone. */
  delayMs: number;
  driver?: string;
  /**
   * How the PV goes. 'volume-gone' (default): once Cinder no longer has the volume. 'delete-accepted':
   * as external-provisioner with cinder-csi does, as soon as Cinder accepts the delete (202) or says
   * 404, while the volume is still deleting (and may end in error_deleting); a refused delete (400)
   * keeps the PV and is tried again on the next step.
   */
  pvRemoval?: 'volume-gone' | 'delete-accepted';
}

export class FakeCsi {
  readonly #o: CsiFixtureOptions;
  readonly #claimGoneAt = new Map<string, number>();
  /** Volume IDs this loop asked Cinder to delete. */
  readonly deletedVolumes: string[] = [];

  constructor(o: CsiFixtureOptions) {
    this.#o = o;
  }

  async step(): Promise<void> {
    const { api, clock } = this.#o;
    const driver = this.#o.driver ?? 'cinder.csi.openstack.org';
    const claims = new Set((await api.pvcs.list()).items.map((c) => `${c.metadata.namespace}/${c.metadata.name}`));
    for (const pv of (await api.pvs.list()).items) {
      const ref = pv.spec.claimRef;
      const volumeId = pv.spec.csi?.driver === driver ? pv.spec.csi.volumeHandle : pv.spec.cinder?.volumeID;
      if (!ref || !volumeId || claims.has(`${ref.namespace}/${ref.name}`)) continue;
      if (pv.status?.phase === 'Bound') await api.pvs.replaceStatus({ ...pv, status: { phase: 'Released' } });
      if (pv.spec.persistentVolumeReclaimPolicy === 'Retain') continue;
      const since = this.#claimGoneAt.get(pv.metadata.name) ?? clock.now();
      this.#claimGoneAt.set(pv.metadata.name, since);
      if (clock.now() - since < this.#o.delayMs) continue;
      if (this.#o.pvRemoval === 'delete-accepted') {
        // cinder-csi's DeleteVolume returns once Cinder took the request; the provisioner then deletes the PV.
        const accepted = await this.#o.cinder.deleteVolume(volumeId).then(
          () => true,
          () => false,
        );
        if (!accepted) continue;
        this.deletedVolumes.push(volumeId);
        await api.pvs.delete(undefined, pv.metadata.name).catch(() => undefined);
        continue;
      }
      const vol = await this.#o.cinder.getVolume(volumeId);
      if (vol && vol.status !== 'deleting') {
        await this.#o.cinder.deleteVolume(volumeId);
        this.deletedVolumes.push(volumeId);
      }
      // The CSI provisioner removes the PV only once the backend volume is gone.
      if (!(await this.#o.cinder.getVolume(volumeId))) await api.pvs.delete(undefined, pv.metadata.name).catch(() => undefined);
    }
  }
}

export interface CcmFixtureOptions {
  api: KubeApi;
  octavia: OctaviaApi;
  clock: Clock;
  /** OCCM --cluster-name. */
  clusterName: string;
  /** LB deletion starts this long after the Service's deletion is seen. */
  delayMs: number;
  /** false: the finalizer is never removed (a cloud controller that is gone). */
  removeFinalizer?: boolean;
}

export class FakeCcm {
  readonly #o: CcmFixtureOptions;
  readonly #seenAt = new Map<string, number>();
  readonly finalizersRemoved: string[] = [];

  constructor(o: CcmFixtureOptions) {
    this.#o = o;
  }

  async step(): Promise<void> {
    const { api, clock, octavia } = this.#o;
    for (const svc of (await api.services.list()).items) {
      if (!svc.metadata.deletionTimestamp || !svc.metadata.finalizers?.includes(CCM_FINALIZER)) continue;
      const key = `${svc.metadata.namespace}/${svc.metadata.name}`;
      const since = this.#seenAt.get(key) ?? clock.now();
      this.#seenAt.set(key, since);
      if (clock.now() - since < this.#o.delayMs) continue;
      const name = `kube_service_${this.#o.clusterName}_${svc.metadata.namespace}_${svc.metadata.name}`;
      const lbs = await octavia.listLoadBalancers({ name });
      for (const lb of lbs) if (lb.provisioning_status !== 'PENDING_DELETE') await octavia.deleteLoadBalancer(lb.id, { cascade: true });
      // OCCM removes the finalizer when EnsureLoadBalancerDeleted returned, i.e. the LB is gone.
      if ((await octavia.listLoadBalancers({ name })).length > 0) continue;
      if (this.#o.removeFinalizer === false) continue;
      const finalizers = svc.metadata.finalizers.filter((f) => f !== CCM_FINALIZER);
      await api.services.patch(svc.metadata.namespace, svc.metadata.name, { metadata: { finalizers, resourceVersion: svc.metadata.resourceVersion } });
      this.finalizersRemoved.push(key);
    }
  }
}

/** Lets deleted pods go as a kubelet does once their containers stopped (no kubelet runs in the tests). */
export class FakeKubelet {
  readonly #api: KubeApi;
  readonly removed: string[] = [];

  constructor(api: KubeApi) {
    this.#api = api;
  }

  async step(): Promise<void> {
    const pods = await this.#api.client.request<{ items: { metadata: { namespace: string; name: string; deletionTimestamp?: string } }[] }>(
      'GET',
      '/api/v1/pods',
    );
    for (const p of pods.items) {
      if (!p.metadata.deletionTimestamp) continue;
      const path = `/api/v1/namespaces/${p.metadata.namespace}/pods/${p.metadata.name}`;
      await this.#api.client.request('DELETE', path, { body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 } }).catch(() => undefined);
      this.removed.push(`${p.metadata.namespace}/${p.metadata.name}`);
    }
  }
}
