// A/B of the proxy's data paths (--relay handle and socket, or --paths handle,native), interleaved in one run on the
// build as shipped (bin/kubeward.js): per new connection CPU (user, system) and syscalls
// (strace -c -f), per idle connection RSS, private anonymous memory and live heap (heap snapshots
// of the proxy, SIGUSR2). The backend is in this process; only the proxy's pid is measured.
// Usage: node bench/relay-ab.ts [--rounds N] [--conns N] [--idle N] [--callgrind] [--paths handle,native]   (after npm run build)
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, waitFor } from '../testkit/wait-for.ts';
import { readRollup } from './proc-stats.ts';
import { bareProxyArgs, shippedV8Flags } from './shipped-proxy.ts';

const { values: opt } = parseArgs({
  options: {
    rounds: { type: 'string', default: '2' },
    conns: { type: 'string', default: '3000' },
    idle: { type: 'string', default: '4000' },
    // Instead: instructions per new connection under valgrind's callgrind (load-independent).
    callgrind: { type: 'boolean', default: false },
    // The --relay values compared, in the first round's order (reversed every other round).
    paths: { type: 'string', default: 'handle,socket' },
  },
});
const ROUNDS = Number(opt.rounds);
const CONNS = Number(opt.conns);
const IDLE = Number(opt.idle);
const repo = new URL('..', import.meta.url).pathname;
const TICK_US = 1e6 / 100; // USER_HZ
const V8_FLAGS = shippedV8Flags(repo);

function ticks(pid: number): { user: number; sys: number } {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { user: Number(f[11]), sys: Number(f[12]) };
}

async function backend(): Promise<{ server: Server; port: number; held: Set<Socket> }> {
  const held = new Set<Socket>();
  const server = createServer((s) => {
    held.add(s);
    s.on('close', () => held.delete(s));
    s.on('error', () => {});
    // A request gets one answer and the backend closes (a short-lived connection); silence is held.
    s.once('data', () => s.end('pong'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, port: (server.address() as { port: number }).port, held };
}

async function startProxy(path: string, upstreamPort: number, cwd: string, wrap: string[] = []): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  const args = [
    ...wrap,
    process.execPath,
    ...V8_FLAGS,
    '--heapsnapshot-signal=SIGUSR2',
    join(repo, 'bin/kubeward.js'),
    ...bareProxyArgs(port, upstreamPort, '10s', [`--relay=${path}`]),
  ];
  const child = spawn(args[0]!, args.slice(1), { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
  await waitFor(() => oneRequest(port).then(() => true), { timeoutMs: 300_000, intervalMs: 500, what: `proxy (${path}) answering` });
  return { child, port };
}

function oneRequest(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port }, () => s.write('ping'));
    s.on('data', () => {});
    s.once('end', () => {
      s.end();
      resolve();
    });
    s.once('error', reject);
  });
}

async function newConnections(port: number, n: number, concurrency = 16): Promise<void> {
  let left = n;
  const worker = async (): Promise<void> => {
    while (left-- > 0) await oneRequest(port);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

async function straceCalls(pid: number, port: number, n: number, dir: string): Promise<{ total: number; top: string[] }> {
  const out = join(dir, `strace-${pid}.txt`);
  const st = spawn('strace', ['-f', '-c', '-p', String(pid), '-o', out], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 500)); // attach
  await newConnections(port, n);
  st.kill('SIGINT');
  await new Promise((r) => st.once('exit', r));
  const lines = readFileSync(out, 'utf8').split('\n');
  const total = Number(/^\S+\s+\S+\s+\S+\s+(\d+)\s+(?:\d+\s+)?total$/m.exec(lines.join('\n'))?.[1] ?? NaN);
  const rows = lines.filter((l) => /^\s*\d+\.\d+/.test(l) && !/total$/.test(l));
  const top = rows.map((l) => l.trim().split(/\s+/)).map((f) => `${f[f.length - 1]} ${(Number(f[3]) / n).toFixed(2)}`);
  return { total: total / n, top };
}

/** Live bytes on the proxy's heap: a snapshot (SIGUSR2, after a full GC) summed, then deleted. */
function liveHeap(dir: string, pid: number): Promise<number> {
  process.kill(pid, 'SIGUSR2');
  return waitFor(
    () => {
      const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot'));
      if (!file) return undefined;
      try {
        const snap = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { snapshot: { meta: { node_fields: string[] } }; nodes: number[] };
        rmSync(join(dir, file));
        const fields = snap.snapshot.meta.node_fields;
        const at = fields.indexOf('self_size');
        let sum = 0;
        for (let i = at; i < snap.nodes.length; i += fields.length) sum += snap.nodes[i]!;
        return sum;
      } catch {
        return undefined; // still being written
      }
    },
    { timeoutMs: 60_000, intervalMs: 500, what: 'heap snapshot' },
  );
}

async function holdIdle(port: number, n: number, into: Socket[]): Promise<void> {
  while (into.length < n) {
    const batch = Array.from(
      { length: Math.min(100, n - into.length) },
      () =>
        new Promise<Socket>((resolve, reject) => {
          const s = connect({ host: '127.0.0.1', port }, () => resolve(s));
          s.once('error', reject);
        }),
    );
    into.push(...(await Promise.all(batch)));
  }
}

async function round(path: string, dir: string, be: Awaited<ReturnType<typeof backend>>): Promise<Record<string, number | string>> {
  const { child, port } = await startProxy(path, be.port, dir);
  const pid = child.pid!;
  try {
    await newConnections(port, 500); // warm-up: code paths compiled, buffers paged in
    const t0 = ticks(pid);
    await newConnections(port, CONNS);
    const t1 = ticks(pid);
    const st = await straceCalls(pid, port, 1000, dir);
    const base = 1000;
    // Memory first, without snapshots (writing one grows the process's RSS); then the live heap.
    const sockets: Socket[] = [];
    // Returns the connections the backend holds (a few may have failed on a loaded machine: counted, not assumed).
    const hold = async (n: number): Promise<number> => {
      await holdIdle(port, n, sockets);
      await waitFor(() => be.held.size >= n * 0.98, { timeoutMs: 60_000, what: `${n} connections at the backend` });
      await new Promise((r) => setTimeout(r, 1000)); // lazily allocated buffers settle before reading memory
      return be.held.size;
    };
    const release = async (): Promise<void> => {
      for (const s of sockets.splice(0)) s.destroy();
      await waitFor(() => be.held.size === 0, { timeoutMs: 20_000, what: 'idle connections closed' });
    };
    const n0 = await hold(base);
    const m0 = readRollup(pid)!;
    const n1 = await hold(IDLE);
    const m1 = readRollup(pid)!;
    await release();
    const k0 = await hold(base);
    const h0 = await liveHeap(dir, pid);
    const k1 = await hold(IDLE);
    const h1 = await liveHeap(dir, pid);
    await release();
    const n = n1 - n0;
    return {
      path,
      load: loadavg()[0]!.toFixed(2),
      userUsPerConn: Math.round(((t1.user - t0.user) * TICK_US) / CONNS),
      sysUsPerConn: Math.round(((t1.sys - t0.sys) * TICK_US) / CONNS),
      syscallsPerConn: Number(st.total.toFixed(1)),
      rssKiBPerIdle: Number(((m1.rssBytes - m0.rssBytes) / n / 1024).toFixed(2)),
      anonKiBPerIdle: Number(((m1.anonBytes - m0.anonBytes) / n / 1024).toFixed(2)),
      heapBytesPerIdle: Math.round((h1 - h0) / (k1 - k0)),
      syscalls: st.top.slice(0, 14).join(', '),
    };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
  }
}

/**
 * Instructions (Ir) the proxy executes per new connection under callgrind: two runs that differ only
 * in CONNS more connections after the same warm-up, start to exit, the difference divided by CONNS.
 */
async function callgrindRound(path: string, dir: string, be: Awaited<ReturnType<typeof backend>>): Promise<Record<string, number | string>> {
  const totalIr = async (extra: number): Promise<number> => {
    const out = join(dir, `callgrind.${path}.${extra}`);
    const { child, port } = await startProxy(path, be.port, dir, ['valgrind', '--tool=callgrind', `--callgrind-out-file=${out}`]);
    try {
      await newConnections(port, 300, 4); // warm-up
      await newConnections(port, extra, 4);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
    }
    return Number(/^(?:summary|totals): (\d+)/m.exec(readFileSync(out, 'utf8'))?.[1] ?? NaN);
  };
  const base = await totalIr(0);
  const more = await totalIr(CONNS);
  return { path, load: loadavg()[0]!.toFixed(2), instructionsPerConn: Math.round((more - base) / CONNS) };
}

const dir = mkdtempSync(join(tmpdir(), 'relay-ab-'));
const be = await backend();
try {
  for (let r = 0; r < ROUNDS; r++) {
    const paths = opt.paths.split(',').filter(Boolean);
    for (const path of r % 2 === 0 ? paths : [...paths].reverse())
      console.log(JSON.stringify(opt.callgrind ? await callgrindRound(`${path}`, dir, be) : await round(path, dir, be)));
  }
} finally {
  for (const s of be.held) s.destroy();
  be.server.close();
  rmSync(dir, { recursive: true, force: true });
}
