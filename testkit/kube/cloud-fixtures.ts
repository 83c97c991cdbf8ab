// The controllers no test cluster runs, played by hand and stepped by the test's clock: a CSI-like
// loop that deletes the Cinder volume and then the PV some time after the claim goes, and a
// cloud-controller-like loop that deletes the Octavia load balancer and then removes the Service's
// cleanup finalizer some time after the Service is deleted.
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
