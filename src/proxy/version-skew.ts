// Version skew: a kubelet must not talk to an apiserver older than itself (the Kubernetes version
// skew policy: kube-apiserver at least the kubelet's minor version). During a control-plane upgrade
// the proxy can see both versions at once; it prefers upstreams at least as new as the node's
// kubelet while one is healthy, and falls back to any healthy one rather than lose the API. Pure.

export interface KubeMinor {
  major: number;
  minor: number;
}

const VERSION = /^v?(\d{1,4})\.(\d{1,4})(?:\.\d{1,6})?(?:[-+][0-9A-Za-z.+-]{1,64})?$/;

/** "v1.31.2", "1.31", "v1.20.2-k3s1" → {1, 31}; anything else undefined. */
export function parseKubeVersion(text: string): KubeMinor | undefined {
  const m = VERSION.exec(text.trim());
  if (!m) return undefined;
  return { major: Number(m[1]), minor: Number(m[2]) };
}

/**
 * An apiserver's GET /version body ({"major":"1","minor":"31+","gitVersion":"v1.31.2",...}).
 * gitVersion is preferred; major/minor carry a "+" on some distributions.
 */
export function parseVersionBody(body: string): KubeMinor | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof doc !== 'object' || doc === null) return undefined;
  const { gitVersion, major, minor } = doc as Record<string, unknown>;
  if (typeof gitVersion === 'string') {
    const v = parseKubeVersion(gitVersion);
    if (v) return v;
  }
  if (typeof major === 'string' && typeof minor === 'string') {
    const ma = /^(\d{1,4})\+?$/.exec(major);
    const mi = /^(\d{1,4})\+?$/.exec(minor);
    if (ma && mi) return { major: Number(ma[1]), minor: Number(mi[1]) };
  }
  return undefined;
}

/** True when v is known and older than min; an unknown version is never counted as older. */
export function isOlder(v: KubeMinor | undefined, min: KubeMinor | undefined): boolean {
  if (!v || !min) return false;
  return v.major < min.major || (v.major === min.major && v.minor < min.minor);
}

export function formatKubeMinor(v: KubeMinor | undefined): string {
  return v ? `${v.major}.${v.minor}` : 'unknown';
}
