// node:tls and node:https loaded at their first use instead of at start: a proxy whose frontends
// all use tcp checks (and no CA, client certificate or token) never loads them, which spares it
// about 6 MiB RSS and 3 MiB private memory at rest (docs/footprint.md).
// process.getBuiltinModule() returns a built-in as require() does, without an ES module namespace
// (the build does the same for static imports, see scripts/build.ts) and without a createRequire()
// per module; once loaded, Node's module cache answers every later call.

export function nodeTls(): typeof import('node:tls') {
  return process.getBuiltinModule('node:tls');
}

export function nodeHttps(): typeof import('node:https') {
  return process.getBuiltinModule('node:https');
}
