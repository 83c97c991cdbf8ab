// System calls per keep-alive request of each --relay path, counted by strace -c -f on the proxy
// (load-independent, unlike a latency): a backend that answers every chunk, 16 keep-alive
// connections, requests one at a time (each a wake-up of its own, as the paced load mostly is),
// paths interleaved, their order reversed each round. Run after npm run build, under the bench lock.
// Usage: node bench/keepalive-syscalls.ts [--rounds N] [--requests N] [--paths handle,native]
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, waitFor } from '../testkit/wait-for.ts';
import { bareProxyArgs, shippedV8Flags } from './shipped-proxy.ts';

const { values: opt } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    requests: { type: 'string', default: '2000' },
    paths: { type: 'string', default: 'handle,native' },
  },
});
const repo = new URL('..', import.meta.url).pathname;
const REQUESTS = Number(opt.requests);
const REQUEST = Buffer.from('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: bench\r\n\r\n');
const RESPONSE = Buffer.from('HTTP/1.1 200 OK\r\nServer: bench\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\nperf\n');

const backend = createServer((s) => {
  s.on('error', () => {});
  s.on('data', () => s.write(RESPONSE));
});
await new Promise<void>((r) => backend.listen(0, '127.0.0.1', () => r()));
const backendPort = (backend.address() as { port: number }).port;

function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port }, () => resolve(s));
    s.once('error', reject);
  });
}

async function pingPong(port: number, n: number): Promise<void> {
  const sockets = await Promise.all(Array.from({ length: 16 }, () => open(port)));
  for (let i = 0; i < n; i++) {
    const s = sockets[i % sockets.length]!;
    const got = new Promise<void>((resolve) => s.once('data', () => resolve()));
    s.write(REQUEST);
    await got;
  }
  for (const s of sockets) s.destroy();
}

async function round(path: string, dir: string): Promise<Record<string, unknown>> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    [...shippedV8Flags(repo), join(repo, 'bin/kubeward.js'), ...bareProxyArgs(port, backendPort, '10s', [`--relay=${path}`])],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  try {
    await waitFor(() => open(port).then((s) => (s.destroy(), true)), { timeoutMs: 30_000, intervalMs: 200, what: `proxy (${path})` });
    await pingPong(port, 3000); // warm-up: compiled code, buffers touched
    const out = join(dir, `strace-${path}-${child.pid}.txt`);
    const st = spawn('strace', ['-f', '-c', '-p', String(child.pid), '-o', out], { stdio: 'ignore' });
    await new Promise((r) => setTimeout(r, 500)); // attach
    await pingPong(port, REQUESTS);
    st.kill('SIGINT');
    await new Promise((r) => st.once('exit', r));
    const lines = readFileSync(out, 'utf8').split('\n');
    const rows = lines
      .filter((l) => /^\s*\d+\.\d+/.test(l) && !/total$/.test(l))
      .map((l) => l.trim().split(/\s+/))
      .map((f) => ({ name: f[f.length - 1]!, calls: Number(f[3]) }));
    const total = rows.reduce((n, r) => n + r.calls, 0);
    return {
      path,
      load: loadavg()[0]!.toFixed(2),
      syscallsPerRequest: Number((total / REQUESTS).toFixed(2)),
      perRequest: rows
        .filter((r) => r.calls / REQUESTS >= 0.05)
        .sort((a, b) => b.calls - a.calls)
        .map((r) => `${r.name} ${(r.calls / REQUESTS).toFixed(2)}`)
        .join(', '),
    };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
  }
}

const dir = mkdtempSync(join(tmpdir(), 'kw-ka-syscalls-'));
try {
  const paths = opt.paths.split(',').filter(Boolean);
  for (let r = 0; r < Number(opt.rounds); r++) {
    for (const path of r % 2 === 0 ? paths : [...paths].reverse()) console.log(JSON.stringify(await round(path, dir)));
  }
} finally {
  backend.close();
  rmSync(dir, { recursive: true, force: true });
}
