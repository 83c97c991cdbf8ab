// Settings per mode for bin/kubeward.js: the V8 list of a mode (built from the list every mode gets;
// KUBEWARD_V8_FLAGS replaces it) and Node flags a mode adds whatever KUBEWARD_V8_FLAGS says.

/**
 * The operator's V8 setting (docs/design/operator-memory.md): one process
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

/**
 * glibc malloc settings for the operator (docs/design/operator-memory.md).
 * Each cluster's TLS sockets (OpenSSL's record buffers, Node's TLS wrap: about 80 KiB native per
 * socket) and SecureContexts live a few seconds per cycle; their chunks, freed, stayed in the main
 * arena as holes that glibc never gave back. A fixed mmap threshold makes every chunk of that size
 * or more its own mapping, returned to the kernel on free. Setting it also turns off glibc's
 * dynamic threshold, which would otherwise rise to the size of the largest chunk freed (up to 32
 * MiB on 64-bit) and send those chunks back into the arena (glibc malloc/malloc.c, "M_MMAP_THRESHOLD").
 * glibc reads these when the process starts, so bin/kubeward.js execs with them.
 * KUBEWARD_MALLOC_ENV replaces the mode's list ("" for glibc's defaults), as KUBEWARD_V8_FLAGS does
 * for V8: words NAME=number, NAME one of MALLOC_NAMES. A variable already in the environment wins.
 * @param {string | undefined} mode the first argument (kubeward <mode> ...)
 * @param {Record<string, string | undefined>} env the environment kubeward was started with
 * @returns {Record<string, string>} the variables to add
 * @throws {Error} naming KUBEWARD_MALLOC_ENV and the word that is not NAME=number
 */
export function modeEnv(mode, env) {
  const list = env.KUBEWARD_MALLOC_ENV !== undefined ? parseMallocEnv(env.KUBEWARD_MALLOC_ENV) : mode === 'operator' ? OPERATOR_MALLOC : {};
  /** @type {Record<string, string>} */
  const add = {};
  for (const [key, value] of Object.entries(list)) if (env[key] === undefined) add[key] = value;
  return add;
}

/** The operator's malloc settings (measured in docs/design/operator-memory.md). */
/** @type {Readonly<Record<string, string>>} */
export const OPERATOR_MALLOC = Object.freeze({
  MALLOC_MMAP_THRESHOLD_: '32768',
});

/** glibc's malloc variables (glibc manual, "Memory Allocation Tunables"); values are byte or arena counts. */
export const MALLOC_NAMES = Object.freeze(['MALLOC_ARENA_MAX', 'MALLOC_MMAP_MAX_', 'MALLOC_MMAP_THRESHOLD_', 'MALLOC_TOP_PAD_', 'MALLOC_TRIM_THRESHOLD_']);

/**
 * @param {string} text KUBEWARD_MALLOC_ENV
 * @returns {Record<string, string>}
 */
function parseMallocEnv(text) {
  /** @type {Record<string, string>} */
  const out = {};
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const m = /^([A-Z_]+)=(\d{1,12})$/.exec(word);
    if (!m || !MALLOC_NAMES.includes(m[1])) {
      const shown = word.length > 40 ? `${word.slice(0, 40)}...` : word;
      throw new Error(`KUBEWARD_MALLOC_ENV: "${shown}" is not NAME=number with NAME one of ${MALLOC_NAMES.join(', ')} (or set it to "" for glibc's defaults)`);
    }
    out[m[1]] = m[2];
  }
  return out;
}
