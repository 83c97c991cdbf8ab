// Settings per mode for bin/kubeward.js: the V8 list of a mode (built from the list every mode gets;
// KUBEWARD_V8_FLAGS replaces it) and Node flags a mode adds whatever KUBEWARD_V8_FLAGS says.

/**
 * The operator's V8 setting (docs/operator-scale.md, "Memory per cluster, as shipped"): one process
 * for hundreds of clusters allocates all the time, and with the shared list alone V8 kept the pages
 * of old garbage mapped for reuse (216 MiB of heap pages at 800 clusters for 70 MiB of used heap)
 * and grew its heap limit well above the live heap. --optimize-for-size returns such pages and grows
 * the heap less: about 135 instead of 246 KiB RSS per cluster (N=100 to 1,000), for a slower start
 * and about a quarter more CPU. Set at run time after the start instead, V8 kept the start's peak.
 * @param {string | undefined} mode the first argument (kubeward <mode> ...)
 * @param {readonly string[]} shared the V8 list every mode gets (bin/kubeward.js)
 * @returns {string[]}
 */
export function modeV8Flags(mode, shared) {
  if (mode === 'operator') return [...shared, '--optimize-for-size'];
  return [...shared];
}

/**
 * `--use-openssl-ca` for watch. Node 24 parses its ~140 bundled root certificates in a thread of
 * their own as soon as node:tls loads (lib/tls.js calls startLoadingCertificatesOffThread), so
 * that a first connection without a CA of its own finds them ready: 0.8 MiB of private memory for
 * the daemon's life (docs/footprint.md). watch never makes such a connection: its one TLS context
 * is built from --ca-file (or verifies nothing, --insecure-skip-tls-verify), and it has no other
 * TLS client. With `--use-openssl-ca` Node skips that parse (a context without a CA would take
 * OpenSSL's default store instead, which watch never builds). The other modes keep Node's bundled
 * store: the proxy's discovery, the operator and the OpenStack clients may rely on it. A CA store
 * chosen in NODE_OPTIONS wins (Node refuses two of them).
 * @param {string | undefined} mode the first argument (kubeward <mode> ...)
 * @param {string | undefined} nodeOptions NODE_OPTIONS
 * @returns {string[]}
 */
export function modeNodeFlags(mode, nodeOptions) {
  if (mode !== 'watch') return [];
  if (/--use-(bundled|openssl|system)-ca\b/.test(nodeOptions ?? '')) return [];
  return ['--use-openssl-ca'];
}
