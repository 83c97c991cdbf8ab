// The owner id the one-shot controllers (flight, routegc) stamp and recognise when no
// --cluster-uid is given: the workload cluster's kube-system namespace UID, unique per cluster
// where a name is not (two ManagedClusters of one name in two namespaces).
import { describeError, KubewardError } from '../base/errors.ts';
import type { KubeApi } from '../clients/kube/kube-api.ts';

/** The kube-system namespace's UID: unique per cluster. Unreadable (RBAC, no such namespace): give --cluster-uid. */
export async function kubeSystemUid(api: KubeApi): Promise<string> {
  let uid: string | undefined;
  try {
    uid = (await api.namespaces.get(undefined, 'kube-system')).metadata.uid;
  } catch (err) {
    throw new KubewardError(
      'E_CONFIG',
      `--cluster-uid: not given, and the kube-system namespace cannot be read to derive one (${describeError(err)}); give the ManagedCluster's metadata.uid`,
    );
  }
  if (!uid) throw new KubewardError('E_CONFIG', "--cluster-uid: not given, and the kube-system namespace has no UID; give the ManagedCluster's metadata.uid");
  return uid;
}
