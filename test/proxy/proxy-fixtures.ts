// Shared pieces of the proxy's integration tests: plain TCP upstreams that say who they are, a
// proxy started in-process with fast test timings, and HTTPS requests through it.
import { createServer, connect, type Server, type Socket } from 'node:net';
import { request } from 'node:https';
import type { TestContext } from 'node:test';
import { startProxy, type ProxyHandle, type StartProxyOptions } from '../../src/proxy/start-proxy.ts';
import type { RelayPath } from '../../src/proxy/relay/relay.ts';
import type { FrontendConfig, ProxyConfig } from '../../src/proxy/proxy-config.ts';
import type { HostPort } from '../../src/config/fields.ts';
import type { UpstreamState } from '../../src/proxy/upstream-list.ts';
import { waitFor } from '../../testkit/wait-for.ts';
import { statSync } from 'node:fs';
import { DEV_ADDON, NATIVE_SOURCE, buildNative } from '../../scripts/build-native.ts';
import { NativeAddon } from '../../src/proxy/relay/native-addon.ts';
import { addonCandidates, NativeRelayLoader } from '../../src/proxy/relay/native-relay.ts';

/**
 * The test process's native relay, for every proxy a test file starts in-process: node --test runs
 * each file in its own process, and the addon is one per process (KUBEWARD_NATIVE_RELAY: a
 * sanitizer build). Loaded at the first proxy that asks, after ensureNativeAddon built it.
 */
export const TEST_NATIVE_ADDON = new NativeAddon(addonCandidates(process.env.KUBEWARD_NATIVE_RELAY || undefined));
export const TEST_NATIVE_RELAY = new NativeRelayLoader(TEST_NATIVE_ADDON);

/** A TCP upstream that greets each connection with "<name>\n", then runs onConnection (default: hold). */
export class TcpUpstream {
  readonly name: string;
  readonly sockets = new Set<Socket>();
  accepted = 0;
  #server: Server | undefined;
  #port = 0;
  readonly #host: string;
  /** Default: hold the connection, and close it when the client does. */
  onConnection: (s: Socket) => void = (s) => s.on('end', () => s.end());
  greet = true;

  constructor(name: string, host = '127.0.0.1') {
    this.name = name;
    this.#host = host;
  }

  get address(): HostPort {
    return { host: this.#host, port: this.#port };
  }

  async listen(): Promise<void> {
    const server = createServer({ allowHalfOpen: true }, (s) => {
      this.accepted++;
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => {});
      if (this.greet) s.write(`${this.name}\n`);
      this.onConnection(s);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#port, this.#host, () => resolve());
    });
    this.#port = (server.address() as { port: number }).port;
    this.#server = server;
  }

  /** Stops accepting; established connections stay (a process that stopped serving new work). */
  stopListening(): void {
    this.#server?.close();
    this.#server = undefined;
  }

  close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    const server = this.#server;
    this.#server = undefined;
    return new Promise((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }
}

export async function startUpstreams(t: TestContext, names: string[], host = '127.0.0.1'): Promise<TcpUpstream[]> {
  const ups = names.map((n) => new TcpUpstream(n, host));
  for (const u of ups) await u.listen();
  t.after(() => Promise.all(ups.map((u) => u.close())));
  return ups;
}

export function frontendConfig(upstreams: HostPort[], over: Partial<FrontendConfig> = {}, check: Partial<FrontendConfig['healthCheck']> = {}): FrontendConfig {
  return {
    name: 'test',
    listen: [{ host: '127.0.0.1', port: 0 }],
    upstreams,
    healthCheck: { type: 'tcp', path: '/readyz', insecureSkipTlsVerify: false, intervalMs: 200, timeoutMs: 200, rise: 2, fall: 2, ...check },
    connectTimeoutMs: 500,
    idleTimeoutMs: 600_000,
    drainSpreadMs: 500,
    ...over,
  };
}

/** Every data path, for the tests that run on each (--relay). */
export const RELAY_PATHS: readonly RelayPath[] = ['handle', 'socket', 'native'];

/**
 * Compiles the native relay for the sources (build/native/relay.node) when it is missing or older
 * than native/relay.c, so the native-path tests run the current C (KUBEWARD_NATIVE_RELAY: that file).
 */
export async function ensureNativeAddon(): Promise<void> {
  if (process.env.KUBEWARD_NATIVE_RELAY) return;
  const mtime = (p: string) => statSync(p, { throwIfNoEntry: false })?.mtimeMs ?? -1;
  if (mtime(DEV_ADDON) >= mtime(NATIVE_SOURCE)) return;
  const built = await buildNative(DEV_ADDON);
  if (!built.ok) throw new Error(`the native relay did not build: ${built.why}`);
}

export async function startTestProxy(t: TestContext, frontends: FrontendConfig[], shutdownGraceMs = 1000, opts: StartProxyOptions = {}): Promise<ProxyHandle> {
  // native is the default path: the current C is built for it as for --relay native.
  if ((opts.relay ?? 'native') === 'native') await ensureNativeAddon();
  const config: ProxyConfig = { frontends, shutdownGraceMs };
  const proxy = await startProxy(config, { nativeRelay: TEST_NATIVE_RELAY, ...opts });
  if (opts.relay && proxy.status().relay !== opts.relay) throw new Error(`asked for the ${opts.relay} path, runs ${proxy.status().relay}`);
  t.after(() => proxy.destroy());
  return proxy;
}

export function listenPort(proxy: ProxyHandle, frontend = 'test'): number {
  return proxy.addresses.get(frontend)![0]!.port;
}

export function upstreamState(
  proxy: ProxyHandle,
  upstream: HostPort | string,
  frontend = 'test',
): { state: UpstreamState; drained: boolean; total: number; active: number } {
  const key = typeof upstream === 'string' ? upstream : `${upstream.host.includes(':') ? `[${upstream.host}]` : upstream.host}:${upstream.port}`;
  const u = proxy
    .stats()
    .find((f) => f.name === frontend)!
    .upstreams.find((x) => x.upstream === key)!;
  return u;
}

export function waitForState(proxy: ProxyHandle, upstream: HostPort, state: UpstreamState, timeoutMs = 5000, frontend = 'test'): Promise<unknown> {
  return waitFor(() => upstreamState(proxy, upstream, frontend).state === state, { timeoutMs, intervalMs: 10, what: `upstream ${upstream.port} ${state}` });
}

/** Connects through the proxy and resolves with the socket and the upstream's greeting. */
export function openGreeted(port: number, host = '127.0.0.1'): Promise<{ socket: Socket; upstream: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port });
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString();
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      socket.off('data', onData);
      resolve({ socket, upstream: buf.slice(0, nl) });
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`closed before a greeting (got ${JSON.stringify(buf)})`)));
  });
}

/** One HTTPS GET on a fresh connection through the proxy; resolves with status and body. */
export function httpsGet(port: number, path: string, ca: string, timeoutMs = 3000): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, ca, agent: false, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}

export interface LoadResult {
  sent: number;
  failed: number;
  errors: string[];
}

/**
 * Client load: `concurrency` loops of GET path until stop() or the bounds (count, time) are hit.
 * Every request is a new connection, as a client reconnecting would be.
 */
export function runLoad(port: number, path: string, ca: string, opts: { concurrency: number; maxRequests: number; maxMs: number }) {
  const result: LoadResult = { sent: 0, failed: 0, errors: [] };
  let stopped = false;
  const deadline = performance.now() + opts.maxMs;
  const loop = async () => {
    while (!stopped && result.sent < opts.maxRequests && performance.now() < deadline) {
      result.sent++;
      try {
        const r = await httpsGet(port, path, ca);
        if (r.status !== 200) throw new Error(`HTTP ${r.status}`);
      } catch (err) {
        result.failed++;
        if (result.errors.length < 5) result.errors.push(String(err));
      }
    }
  };
  const done = Promise.all(Array.from({ length: opts.concurrency }, loop)).then(() => result);
  return {
    result,
    stop: async () => {
      stopped = true;
      return done;
    },
    done,
  };
}
