// Instructions (and simulated cache misses) the kubeward proxy executes per keep-alive request
// before and after a burst of idle connections, under valgrind's callgrind: load-independent, unlike
// a p99 on a shared machine. One request in flight at a time (no batching of events per loop turn),
// so the counts compare like for like. Run after npm run build.
// Usage: node bench/burst-instructions.ts [--requests N] [--warmup N] [--idle N] [--cache-sim] [--main bin/kubeward.js] [--out DIR] [--proxy-args="--relay native"]
// Writes callgrind.before and callgrind.after to DIR (callgrind_annotate reads them).
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, waitFor } from '../testkit/wait-for.ts';
import { bareProxyArgs, shippedV8Flags } from './shipped-proxy.ts';

const { values: opt } = parseArgs({
  options: {
    requests: { type: 'string', default: '3000' },
    // Enough for the data path to reach TurboFan under bin/kubeward.js's tier-up thresholds.
    warmup: { type: 'string', default: '30000' },
    idle: { type: 'string', default: '5000' },
    'cache-sim': { type: 'boolean', default: false },
    // The bench's order on a fresh proxy: the burst first, then the warm-up and the first window.
    'burst-first': { type: 'boolean', default: false },
    main: { type: 'string' },
    out: { type: 'string' },
    flags: { type: 'string' },
    // Proxy flags added to the bench's (e.g. "--relay native").
    'proxy-args': { type: 'string' },
  },
});
const repo = new URL('..', import.meta.url).pathname;
const main = opt.main ?? join(repo, 'bin/kubeward.js');
const out = opt.out ?? mkdtempSync(join(tmpdir(), 'kw-burst-ir-'));
const REQUESTS = Number(opt.requests);
const V8_FLAGS = opt.flags?.split(' ').filter(Boolean) ?? shippedV8Flags(repo);
const REQUEST = Buffer.from('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: bench\r\n\r\n');
const RESPONSE = Buffer.from('HTTP/1.1 200 OK\r\nServer: bench\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\nperf\n');

// The backend: answers every chunk with one response (requests are small and sent one at a time).
const held = new Set<Socket>();
const backend = createServer((s) => {
  held.add(s);
  s.on('close', () => held.delete(s));
  s.on('error', () => {});
  s.on('data', () => s.write(RESPONSE));
});
await new Promise<void>((r) => backend.listen(0, '127.0.0.1', () => r()));
const backendPort = (backend.address() as { port: number }).port;

const port = await freePort();
const args = [
  '--tool=callgrind',
  `--callgrind-out-file=${join(out, 'callgrind.%p')}`,
  ...(opt['cache-sim'] ? ['--cache-sim=yes'] : []),
  process.execPath,
  ...V8_FLAGS,
  main,
  ...bareProxyArgs(port, backendPort, '30s', opt['proxy-args']?.split(' ').filter(Boolean)),
];
const child = spawn('valgrind', args, { stdio: ['ignore', 'inherit', 'pipe'] });
child.stderr.resume();
const pid = child.pid!;

/** A line in the output shared with the proxy's (V8 traces given in --flags show where they fall). */
function mark(phase: string): void {
  console.log(`### ${phase} ${new Date().toISOString().slice(11, 23)}`);
}

function control(flag: string): void {
  execFileSync('callgrind_control', [flag, String(pid)], { stdio: 'ignore', timeout: 120_000 });
}

/** `conns` keep-alive connections, `n` requests round-robin over them, one in flight at a time. */
async function pingPong(conns: number, n: number): Promise<void> {
  const sockets = await Promise.all(Array.from({ length: conns }, () => open()));
  for (let i = 0; i < n; i++) {
    const s = sockets[i % conns]!;
    const got = new Promise<void>((resolve) => s.once('data', () => resolve()));
    s.write(REQUEST);
    await got;
  }
  for (const s of sockets) s.destroy();
}

function open(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port }, () => resolve(s));
    s.once('error', reject);
  });
}

async function burst(n: number): Promise<void> {
  const sockets: Socket[] = [];
  while (sockets.length < n) sockets.push(...(await Promise.all(Array.from({ length: Math.min(200, n - sockets.length) }, () => open()))));
  await waitFor(() => held.size >= n, { timeoutMs: 600_000, intervalMs: 500, what: `${n} connections at the backend` });
  for (const s of sockets) s.destroy();
  await waitFor(() => held.size === 0, { timeoutMs: 600_000, intervalMs: 500, what: 'the burst closed' });
}

function irOf(file: string): { ir: number; events: string } {
  const text = readFileSync(file, 'utf8');
  const events = /^events: (.*)$/m.exec(text)?.[1] ?? '';
  const totals = /^(?:summary|totals): (.*)$/m.exec(text)?.[1] ?? '';
  return {
    ir: Number(totals.split(' ')[0]),
    events: events
      .split(' ')
      .map((e, i) => `${e}=${(Number(totals.split(' ')[i]) / REQUESTS).toFixed(0)}`)
      .join(' '),
  };
}

try {
  await waitFor(() => open().then((s) => (s.destroy(), true)), { timeoutMs: 300_000, intervalMs: 1000, what: 'the proxy under valgrind' });
  if (opt['burst-first']) {
    mark('first burst');
    await burst(Number(opt.idle));
  }
  // Warm-up in three parts, each closing its connections: the close path (EOF) has run before the
  // measured window too, so the window does not measure a deoptimization it happens to contain.
  for (let i = 0; i < 3; i++) await pingPong(16, Math.ceil(Number(opt.warmup) / 3));
  mark('before');
  control('-z');
  await pingPong(16, REQUESTS);
  control('-d');
  mark('burst');
  await burst(Number(opt.idle));
  await pingPong(64, 3000); // the bench's saturated step after the burst, shortened
  mark('after');
  control('-z');
  await pingPong(16, REQUESTS);
  control('-d');
  mark('end');
  const files = execFileSync('sh', ['-c', `ls -1 ${out}/callgrind.${pid}.*`], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .sort();
  const [before, after] = files.slice(-2).map(irOf);
  console.log(JSON.stringify({ out, files: files.slice(-2), load: loadavg()[0]!.toFixed(2), before: before!.events, after: after!.events }));
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
  for (const s of held) s.destroy();
  backend.close();
}
