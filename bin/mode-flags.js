// Node settings for one mode, added by bin/kubeward.js to the V8 settings every mode gets.

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
