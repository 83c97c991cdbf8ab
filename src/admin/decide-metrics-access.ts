// What a scrape of the node's /metrics gets, from the apiserver's answers to a TokenReview and a
// SubjectAccessReview (the delegated authentication and authorization kube-rbac-proxy and the
// kubelet use). Pure: the reviews are made by the adapter in kube-token-reviewer.ts.

export interface ReviewedUser {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** A TokenReview's status as far as it matters here. */
export interface TokenReviewStatus {
  authenticated?: boolean;
  user?: ReviewedUser;
  error?: string;
}

/** A SubjectAccessReview's status as far as it matters here. */
export interface AccessReviewStatus {
  allowed?: boolean;
  denied?: boolean;
  reason?: string;
}

export type MetricsAccess = { status: 200; user: string } | { status: 401 | 403; reason: string };

/** No usable bearer token in the request: 401, and no review is made. */
export function bearerToken(header: string | undefined): string | undefined {
  const m = /^Bearer ([\x21-\x7e]+)$/i.exec(header ?? '');
  return m?.[1];
}

/** 401 when the token does not authenticate; the user otherwise (then the access review decides). */
export function decideAuthentication(review: TokenReviewStatus): { ok: true; user: ReviewedUser } | { ok: false; access: MetricsAccess } {
  if (review.authenticated !== true || !review.user?.username) {
    // The apiserver's error text can name why (expired, wrong audience); it never holds the token.
    return { ok: false, access: { status: 401, reason: `token not accepted by the apiserver${review.error ? ` (${review.error})` : ''}` } };
  }
  return { ok: true, user: review.user };
}

export function decideAuthorization(user: ReviewedUser, review: AccessReviewStatus, path: string): MetricsAccess {
  if (review.allowed === true && review.denied !== true) return { status: 200, user: user.username };
  const why = review.reason ? `: ${review.reason}` : '';
  return { status: 403, reason: `${user.username} may not get ${path}${why}; grant "get" on the nonResourceURL ${path} (deploy/monitoring/rbac.yaml)` };
}

/** How long a verdict is reused: allowed ones longer than refusals, so a fresh grant shows soon. */
export function cacheTtlMs(access: MetricsAccess, ttl: { allowedMs: number; deniedMs: number }): number {
  return access.status === 200 ? ttl.allowedMs : ttl.deniedMs;
}
