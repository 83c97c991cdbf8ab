// The TokenReview and SubjectAccessReview calls of metrics-auth.ts, on a KubeClient the CLI made.
// The daemon's service account needs "create" on tokenreviews and subjectaccessreviews
// (system:auth-delegator grants both; deploy/monitoring/rbac.yaml).
import type { KubeClient } from '../clients/kube/kube-client.ts';
import type { AccessReviewStatus, ReviewedUser, TokenReviewStatus } from './decide-metrics-access.ts';
import type { TokenReviewer } from './metrics-auth.ts';

/** Reviews are quick; a slow apiserver must not hold a scrape past Prometheus's own timeout. */
const REVIEW_TIMEOUT_MS = 5000;

export function kubeTokenReviewer(client: KubeClient): TokenReviewer {
  return {
    async reviewToken(token) {
      const r = await client.request<{ status?: TokenReviewStatus }>('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
        body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
        timeoutMs: REVIEW_TIMEOUT_MS,
      });
      return r.status ?? {};
    },
    async reviewAccess(user: ReviewedUser, path: string, verb: string) {
      const r = await client.request<{ status?: AccessReviewStatus }>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: { user: user.username, uid: user.uid, groups: user.groups, extra: user.extra, nonResourceAttributes: { path, verb } },
        },
        timeoutMs: REVIEW_TIMEOUT_MS,
      });
      return r.status ?? {};
    },
  };
}
