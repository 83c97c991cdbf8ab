// Workloads for the realistic deorbit tier: a pod that mounts a claim (bound to a node, so that
// pvc-protection counts it, as its source does), the Deployment and ReplicaSet that own it (no
// deployment controller runs: the ReplicaSet is written by hand with the owner reference it would
// carry), a backup snapshot class as cinder-csi documents it, and a reset between tests.
import type { KubeApi } from '../../src/clients/kube/kube-api.ts';
import { isConflict } from '../../src/clients/kube/kube-api-error.ts';
import type { KubeObject } from '../../src/clients/kube/kube-types.ts';

interface Owner {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
}

const ref = (o: Owner) => ({ ...o, controller: true, blockOwnerDeletion: true });

/** A pod on node "node-1" that mounts the claim; without a kubelet it stays Pending, as the controller expects. */
export async function createMountingPod(api: KubeApi, namespace: string, name: string, claim: string, owner?: Owner): Promise<KubeObject> {
  return api.client.request<KubeObject>('POST', `/api/v1/namespaces/${namespace}/pods`, {
    body: {
      metadata: { name, namespace, labels: { app: name }, ownerReferences: owner ? [ref(owner)] : undefined },
      spec: {
        nodeName: 'node-1',
        automountServiceAccountToken: false,
        containers: [{ name: 'main', image: 'registry.invalid/app:1', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }],
      },
    },
  });
}

/** Deployment → ReplicaSet → Pod mounting the claim, linked by controller owner references. */
export async function createOwnedWorkload(api: KubeApi, namespace: string, name: string, claim: string): Promise<{ pod: string }> {
  const labels = { app: name };
  const template = {
    metadata: { labels },
    spec: { containers: [{ name: 'main', image: 'registry.invalid/app:1' }], volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }] },
  };
  const deploy = await api.client.request<KubeObject>('POST', `/apis/apps/v1/namespaces/${namespace}/deployments`, {
    body: { metadata: { name, namespace }, spec: { replicas: 1, selector: { matchLabels: labels }, template } },
  });
  const rs = await api.client.request<KubeObject>('POST', `/apis/apps/v1/namespaces/${namespace}/replicasets`, {
    body: {
      metadata: {
        name: `${name}-5d4f8`,
        namespace,
        labels,
        ownerReferences: [ref({ apiVersion: 'apps/v1', kind: 'Deployment', name, uid: deploy.metadata.uid! })],
      },
      spec: { replicas: 1, selector: { matchLabels: labels }, template },
    },
  });
  const pod = `${name}-5d4f8-x2k9q`;
  await createMountingPod(api, namespace, pod, claim, { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rs.metadata.name, uid: rs.metadata.uid! });
  return { pod };
}

/** A VolumeSnapshotClass of the Cinder driver that makes Cinder backups (cinder-csi's parameters.type: backup). */
export async function createBackupSnapshotClass(api: KubeApi, name: string, driver: string): Promise<void> {
  await api.client
    .request('POST', '/apis/snapshot.storage.k8s.io/v1/volumesnapshotclasses', {
      body: {
        apiVersion: 'snapshot.storage.k8s.io/v1',
        kind: 'VolumeSnapshotClass',
        metadata: { name },
        driver,
        deletionPolicy: 'Retain',
        parameters: { type: 'backup' },
      },
    })
    .catch((err: unknown) => {
      if (!isConflict(err)) throw err;
    });
}

/** Deletes Deployments, ReplicaSets and pods in the namespaces at once (no grace: no kubelet runs). */
export async function resetWorkloads(api: KubeApi, namespaces: string[]): Promise<void> {
  for (const ns of namespaces) {
    for (const path of [`/apis/apps/v1/namespaces/${ns}/deployments`, `/apis/apps/v1/namespaces/${ns}/replicasets`, `/api/v1/namespaces/${ns}/pods`]) {
      await api.client.request('DELETE', path, { body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0, propagationPolicy: 'Background' } });
    }
  }
}
