// The environment every process the bench starts runs with: the one kubeward's shipped units give
// it, not the developer's shell. systemd starts a service with PATH and little else (deploy/*/
// *.service set no Environment=), the static pods (deploy/*/static-pod.yaml) set no env, and the
// image (deploy/Containerfile) adds nothing Node reads. A developer's shell often does: this
// machine's sets NODE_EXTRA_CA_CERTS (Node parses those ~140 certificates into its root store when
// the first TLS context is built: +0.8 MiB private for watch, docs/footprint.md), NODE_OPTIONS, SSL_CERT_*,
// MALLOC_*, UV_THREADPOOL_SIZE; any of them would move the figures away from what ships.

/** systemd's PATH for system services (and the node image's): where nft, ip, nginx and haproxy are. */
export const SHIPPED_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** kubeward's own knob, passed on on purpose: `KUBEWARD_V8_FLAGS=... npm run bench` measures other V8 settings. */
const PASSED_ON = ['KUBEWARD_V8_FLAGS'] as const;

/**
 * PATH (the shipped one, then the parent's other entries, so a tool the bench found is found by
 * its daemons too; a lookup path moves no memory) and KUBEWARD_V8_FLAGS if set. Nothing else.
 */
export function shippedDaemonEnv(parent: NodeJS.ProcessEnv): Record<string, string> {
  const shipped = SHIPPED_PATH.split(':');
  const extra = (parent.PATH ?? '').split(':').filter((p) => p.startsWith('/') && !shipped.includes(p));
  const env: Record<string, string> = { PATH: [...shipped, ...new Set(extra)].join(':') };
  for (const key of PASSED_ON) {
    const v = parent[key];
    if (v !== undefined) env[key] = v;
  }
  return env;
}
