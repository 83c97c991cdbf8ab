// `kubeward proxy --workers 2` as real processes on loopback, both ways of getting connections to
// the workers (src/proxy/proxy-workers.ts): the primary alone listens and hands each connection to
// the process with the fewest open ones, or every process listens with SO_REUSEPORT. Which
// process holds a connection is read from the OS (ss), not from the proxy's own counters.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { freePort, freePorts, waitFor } from '../../testkit/wait-for.ts';
import { boundPortsInLog, MAIN, NODE } from '../../testkit/kubeward-process.ts';
import { ensureNativeAddon, openGreeted, startUpstreams } from './proxy-fixtures.ts';
import { isAlive } from '../../testkit/process-alive.ts';
import { adminTokenFixture } from '../../testkit/admin-token.ts';

/** /status and drain need the admin token. */
const ADMIN_TOKEN = adminTokenFixture();

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

interface Started {
  child: ChildProcess;
  log: () => { msg: string; pids?: number[] }[];
  stderr: () => string;
  /** The primary's bound listen (its first frontend's) and admin ports, from its log. */
  ports: () => Promise<{ listen: number; admin: number }>;
  ready: () => Promise<unknown>;
}

/** The admin listener binds port 0: its port, and a listen port of 0, are read from the log. */
function startWorkers(t: TestContext, args: string[]): Started {
  const child = spawn(NODE, [MAIN, 'proxy', ...args, ...ADMIN_TOKEN.args, '--admin-address', '127.0.0.1:0', '--log-format', 'json', '--workers', '2'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  let bound: Promise<{ listen: number; admin: number }> | undefined;
  const ports = () => (bound ??= boundPortsInLog(() => stderr));
  t.after(async () => {
    // No ports logged: the primary never got as far as starting its workers.
    const workers = bound ? await bound.then((b) => processesOn(b.admin)).catch(() => []) : [];
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const pid of workers) kill(pid);
  });
  const log = () =>
    stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; pids?: number[] });
  const ready = async () => {
    const { admin } = await ports();
    return waitFor(async () => (await fetch(`http://127.0.0.1:${admin}/readyz`).catch(() => undefined))?.status === 200, {
      timeoutMs: 15_000,
      what: `proxy and workers ready; stderr: ${stderr.slice(-400)}`,
    });
  };
  return { child, log, stderr: () => stderr, ports, ready };
}

/** Every pid of the proxy's process tree is found through the admin port's owner (the primary) and its children. */
async function processesOn(admin: number): Promise<number[]> {
  const { stdout } = await run('ss', ['-tlnpH', `( sport = :${admin} )`]);
  const primary = Number(/pid=(\d+)/.exec(stdout)?.[1]);
  if (!primary) return [];
  const { stdout: kids } = await run('ps', ['-o', 'pid=', '--ppid', String(primary)]).catch(() => ({ stdout: '' }));
  return [primary, ...kids.split('\n').filter(Boolean).map(Number)];
}

/** Established connections whose local port is `port`, counted by the pid that holds each. */
async function heldBy(port: number): Promise<Map<number, number>> {
  const { stdout } = await run('ss', ['-tnpH', 'state', 'established', `( sport = :${port} )`]);
  const counts = new Map<number, number>();
  for (const m of stdout.matchAll(/pid=(\d+)/g)) counts.set(Number(m[1]), (counts.get(Number(m[1])) ?? 0) + 1);
  return counts;
}

/** The pids holding a listening TCP socket on any port. */
async function listeningPids(): Promise<Set<number>> {
  const { stdout } = await run('ss', ['-tlnpH']);
  return new Set([...stdout.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1])));
}

function kill(pid: number, signal: NodeJS.Signals = 'SIGKILL'): void {
  try {
    process.kill(pid, signal);
  } catch {
    /* gone */
  }
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

test('--workers 2 --worker-accept primary: a burst of 64 connects splits 32/32, only the primary listens, a killed worker comes back, a killed primary takes the worker along', async (t) => {
  const ups = await startUpstreams(t, ['a']);
  const p = startWorkers(t, [
    '--listen',
    '127.0.0.1:0',
    '--upstream',
    `127.0.0.1:${ups[0]!.address.port}`,
    '--health-check',
    'tcp',
    '--shutdown-grace',
    '500ms',
    '--worker-accept',
    'primary',
  ]);
  await p.ready();
  // Only the primary listens (--worker-accept primary): the port it logged is the one clients use.
  const { listen: port } = await p.ports();
  const primary = p.child.pid!;
  const [worker] = p.log().find((l) => l.msg === 'proxy workers started')!.pids!;
  assert.ok(worker);
  const listeners = await listeningPids();
  assert.ok(listeners.has(primary) && !listeners.has(worker), 'the worker holds no listening socket');

  // 64 connects at once, as wrk opens them. The primary decides one accepted connection at a time
  // with counts it updates itself (a connection sent counts for the worker at once), so after every
  // decision the two differ by at most one: 32/32, whatever the timing.
  const burst = await Promise.all(Array.from({ length: 64 }, () => openGreeted(port)));
  t.after(() => burst.forEach((c) => c.socket.destroy()));
  const held = await heldBy(port);
  assert.deepEqual([held.get(primary), held.get(worker)], [32, 32], `held per process: ${JSON.stringify([...held])}`);
  burst.forEach((c) => c.socket.destroy());
  await waitFor(async () => (await heldBy(port)).size === 0, { timeoutMs: 5000, what: 'the burst closed' });

  // A killed worker: its connections are gone with it; another starts and takes its share again.
  const before = await Promise.all([openGreeted(port), openGreeted(port)]);
  kill(worker);
  await waitFor(() => p.log().some((l) => l.msg === 'proxy worker exited; starting another'), { timeoutMs: 5000, what: 'the exit noticed' });
  before.forEach((c) => c.socket.destroy());
  await p.ready();
  const again = await Promise.all(Array.from({ length: 4 }, () => openGreeted(port)));
  t.after(() => again.forEach((c) => c.socket.destroy()));
  const after = await heldBy(port);
  const successor = [...after.keys()].find((pid) => pid !== primary);
  assert.ok(successor !== undefined && successor !== worker, `a new worker serves: ${JSON.stringify([...after])}`);
  assert.equal(after.get(primary), 2);
  assert.equal(after.get(successor), 2);
  assert.ok(!(await listeningPids()).has(successor), 'the new worker holds no listening socket either');

  // The primary killed outright (no graceful step of its own): the worker sees the channel close and ends.
  kill(primary);
  await waitFor(() => !isAlive(successor), { timeoutMs: 10_000, what: 'the worker gone with the primary' });
});

test('--workers 2 --worker-accept primary: a reload that adds and removes a listen address changes where clients connect, and both processes serve the new one', async (t) => {
  const ups = await startUpstreams(t, ['a']);
  // freePort stays for the listen addresses: they are written into the config file under test, and
  // b must be known before the reload binds it.
  const [a, b] = (await freePorts(2)) as [number, number];
  const dir = await mkdtemp(join(tmpdir(), 'kw-workers-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'proxy.yaml');
  const yaml = (ports: number[]) =>
    `healthCheck: tcp\nfrontends:\n  - name: api\n    listen: [${ports.map((x) => `"127.0.0.1:${x}"`).join(', ')}]\n    upstreams: ["127.0.0.1:${ups[0]!.address.port}"]\n`;
  await writeFile(file, yaml([a]));
  const p = startWorkers(t, ['--config', file, '--worker-accept', 'primary']);
  await p.ready();
  const primary = p.child.pid!;
  const [worker] = p.log().find((l) => l.msg === 'proxy workers started')!.pids!;
  assert.ok(await refused(b), `nothing listens on ${b} yet`);

  const reloads = () => p.log().filter((l) => l.msg === 'config reloaded; established connections kept').length;
  await writeFile(file, yaml([a, b]));
  p.child.kill('SIGHUP');
  // Both processes log the reload: the worker reloads its own copy of the config (upstreams, checks).
  await waitFor(() => reloads() === 2, { timeoutMs: 10_000, what: `both processes reloaded; stderr: ${p.stderr().slice(-400)}` });
  const onB = await Promise.all([openGreeted(b), openGreeted(b)]);
  t.after(() => onB.forEach((c) => c.socket.destroy()));
  assert.deepEqual(
    [...(await heldBy(b)).entries()].sort(),
    [
      [primary, 1],
      [worker!, 1],
    ].sort(),
    'the added address reaches both processes',
  );

  await writeFile(file, yaml([b]));
  p.child.kill('SIGHUP');
  await waitFor(() => reloads() === 4, { timeoutMs: 10_000, what: 'both processes reloaded again' });
  await waitFor(() => refused(a), { timeoutMs: 5000, what: `the removed address ${a} refuses connections` });
  const listeners = await listeningPids();
  assert.ok(listeners.has(primary) && !listeners.has(worker!), 'no worker listens on anything');
  const still = await openGreeted(b);
  t.after(() => still.socket.destroy());
  assert.equal(still.upstream, 'a', 'the kept address still serves');
  assert.equal(onB.filter((c) => !c.socket.destroyed).length, 2, 'established connections survive the reloads');
});

test('--workers 2 (--worker-accept reuseport, the default): every process listens and the kernel spreads a burst of 64 connects over both', async (t) => {
  const ups = await startUpstreams(t, ['a']);
  // freePort stays for the listen port: the primary and its worker each bind this same port
  // (SO_REUSEPORT), where port 0 would give each process a port of its own.
  const port = await freePort();
  const p = startWorkers(t, [
    '--listen',
    `127.0.0.1:${port}`,
    '--upstream',
    `127.0.0.1:${ups[0]!.address.port}`,
    '--health-check',
    'tcp',
    '--worker-accept',
    'reuseport',
  ]);
  await p.ready();
  const primary = p.child.pid!;
  const [worker] = p.log().find((l) => l.msg === 'proxy workers started')!.pids!;
  const { stdout } = await run('ss', ['-tlnpH', `( sport = :${port} )`]);
  assert.deepEqual(new Set([...stdout.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]))), new Set([primary, worker]), 'both processes listen on the port');
  const burst = await Promise.all(Array.from({ length: 64 }, () => openGreeted(port)));
  t.after(() => burst.forEach((c) => c.socket.destroy()));
  // The kernel picks by a hash of each connection's addresses, as a fair coin would: fewer than 8
  // of 64 for one process has a probability of about 1e-10.
  const held = await heldBy(port);
  assert.ok((held.get(primary) ?? 0) >= 8 && (held.get(worker!) ?? 0) >= 8, `held per process: ${JSON.stringify([...held])}`);
});

test('--workers 2 --worker-accept primary --relay native: the worker relays in C the connections the primary hands it (32/32), none falls back', async (t) => {
  await ensureNativeAddon();
  const ups = await startUpstreams(t, ['a']);
  const args = ['--listen', '127.0.0.1:0', '--upstream', `127.0.0.1:${ups[0]!.address.port}`, '--health-check', 'tcp'];
  const p = startWorkers(t, [...args, '--shutdown-grace', '500ms', '--worker-accept', 'primary', '--relay', 'native']);
  await p.ready();
  const { listen: port, admin } = await p.ports();
  const status = (await (await fetch(`http://127.0.0.1:${admin}/status`, { headers: ADMIN_TOKEN.headers })).json()) as { relay: string };
  assert.equal(status.relay, 'native', "the primary's data path");
  const primary = p.child.pid!;
  const [worker] = p.log().find((l) => l.msg === 'proxy workers started')!.pids!;
  const burst = await Promise.all(Array.from({ length: 64 }, () => openGreeted(port)));
  t.after(() => burst.forEach((c) => c.socket.destroy()));
  assert.ok(
    burst.every((c) => c.upstream === 'a'),
    'every connection got the greeting through',
  );
  const held = await heldBy(port);
  assert.deepEqual([held.get(primary), held.get(worker!)], [32, 32], `held per process: ${JSON.stringify([...held])}`);
  assert.deepEqual(
    p.log().filter((l) => /native data path/.test(l.msg)),
    [],
    'no process fell back from the native path',
  );
  burst.forEach((c) => c.socket.destroy());
  await waitFor(async () => (await heldBy(port)).size === 0, { timeoutMs: 5000, what: 'the burst closed' });
});
