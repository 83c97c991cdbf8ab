// Bounded polling for tests: the only way tests wait. Fails with the last observed value.
import { createServer } from 'node:net';

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** What was awaited, for the failure message. */
  what?: string;
}

/** Polls check() until it returns a truthy value (returned) or the timeout passes (throws). */
export async function waitFor<T>(check: () => T | Promise<T>, opts: WaitOptions = {}): Promise<NonNullable<T>> {
  const timeoutMs = opts.timeoutMs ?? 5000;
  const intervalMs = opts.intervalMs ?? 20;
  const deadline = performance.now() + timeoutMs;
  let last: T | undefined;
  let lastError: unknown;
  for (;;) {
    try {
      last = await check();
      if (last) return last as NonNullable<T>;
    } catch (err) {
      lastError = err;
    }
    if (performance.now() >= deadline) {
      const seen = lastError !== undefined ? `last error: ${String(lastError)}` : `last value: ${JSON.stringify(last)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${opts.what ?? 'condition'} (${seen})`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * A port that was free a moment ago on host (bound and released): another process may take it
 * before the test uses it. Where the test owns the listener, or a kubeward child logs the port it
 * bound (KubewardProcess.adminPort/listenPort, boundPortsInLog; every admin and metrics listener
 * logs its address at any log level), bind port 0 instead. Use this only where the port must be
 * known before anything binds it (a rendered config or config file under test, a port flag whose
 * honouring is under test, a port several processes share through SO_REUSEPORT, etcd's initial
 * cluster, kube-apiserver's start script, a tool that cannot report a port 0 bind such as
 * Prometheus) or for a port nothing should listen on; say which at the call.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return (await freePorts(1, host))[0]!;
}

/**
 * n different free ports: each is held until all are found, so that two calls one after another
 * cannot be handed the same port (the kernel may give a just-closed port out again at once).
 */
export async function freePorts(n: number, host = '127.0.0.1'): Promise<number[]> {
  const held = [];
  try {
    for (let i = 0; i < n; i++) {
      const srv = createServer();
      held.push(srv);
      await new Promise<void>((resolve, reject) => {
        srv.once('error', reject);
        srv.listen(0, host, () => resolve());
      });
    }
    return held.map((srv) => (srv.address() as { port: number }).port);
  } finally {
    await Promise.all(held.map((srv) => new Promise<void>((r) => (srv.listening ? srv.close(() => r()) : r()))));
  }
}
