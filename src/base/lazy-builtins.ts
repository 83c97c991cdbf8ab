// node:tls and node:https loaded at their first use instead of at start: a proxy whose frontends
// all use tcp checks (and no CA, client certificate or token) never loads them, which spares it
// about 6 MiB RSS and 3 MiB private memory at rest (README "Memory and the production build").
// require() of a built-in returns it as it is (the build does the same for static imports, see
// scripts/build.ts); once loaded, Node's module cache answers every later call.
import { createRequire } from 'node:module';

const requireBuiltin = createRequire(import.meta.url);

export function nodeTls(): typeof import('node:tls') {
  return requireBuiltin('node:tls') as typeof import('node:tls');
}

export function nodeHttps(): typeof import('node:https') {
  return requireBuiltin('node:https') as typeof import('node:https');
}
