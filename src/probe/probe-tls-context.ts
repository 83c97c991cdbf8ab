// The TLS context a probe owner (a proxy frontend, the watcher, the down-peer checker) hands to
// every HTTPS probe it runs. Without one, each request builds its own context (the CA bundle parsed
// into a new certificate store), which lives until a garbage collection frees it: a daemon at rest
// grows its malloc heap by a context a second. A shared context changes nothing on the wire: Node's
// contexts keep no client sessions (resumption needs an agent, and the probe uses none), so every
// probe is still a full handshake.
import type { SecureContext } from 'node:tls';
import { nodeTls } from '../base/lazy-builtins.ts';

/** PEM material as the owner loaded it; compared by identity, not content. */
export interface ProbeTlsMaterial {
  ca?: string | Buffer;
  cert?: string | Buffer;
  key?: string | Buffer;
}

/**
 * One context for the owner's current material. A reload brings new strings and so a new context;
 * the old one goes with the last probe that used it. Building may throw (a key that does not parse):
 * the probe turns that into a local fault.
 */
export class ProbeTlsContext {
  #material: ProbeTlsMaterial | undefined;
  #context: SecureContext | undefined;

  for(m: ProbeTlsMaterial): SecureContext {
    const held = this.#material;
    if (this.#context && held && held.ca === m.ca && held.cert === m.cert && held.key === m.key) return this.#context;
    const context = nodeTls().createSecureContext({ ca: m.ca, cert: m.cert, key: m.key });
    this.#material = { ca: m.ca, cert: m.cert, key: m.key };
    this.#context = context;
    return context;
  }
}
