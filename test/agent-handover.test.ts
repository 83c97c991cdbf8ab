// --handover-socket for the agent and the watcher: a new process takes the listening sockets from
// the running one (for the agent the proxy's and the admin one; requests through the proxy all succeed
// meanwhile), and the old one goes without publishing its VIP down (the new watcher takes the files
// over at its first verdict), while a plain SIGTERM still publishes down.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, watch, type FSWatcher } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestCa, type CertPair, type TestCa } from '../testkit/certs.ts';
import { ApiserverStandin } from '../testkit/apiserver-standin.ts';
import { KubewardProcess } from '../testkit/kubeward-process.ts';
import { waitFor } from '../testkit/wait-for.ts';
import { ensureNativeAddon } from './proxy/proxy-fixtures.ts';

const skip = process.platform === 'linux' ? false : 'the hand-over is Linux only';
let ca: TestCa;
let serverCert: CertPair;
let dir: string;
const procs: KubewardProcess[] = [];
let standin: ApiserverStandin | undefined;
let watcher: FSWatcher | undefined;

before(async () => {
  await ensureNativeAddon();
  ca = await createTestCa('kw-agent-handover-ca');
  serverCert = await ca.issueServer('apiserver', ['DNS:localhost', 'IP:127.0.0.1']);
  dir = await mkdtemp(join(tmpdir(), 'kw-agent-handover-'));
});
after(async () => {
  watcher?.close();
  await Promise.all(procs.map((p) => p.stop()));
  await standin?.close();
  await rm(dir, { recursive: true, force: true });
});

/** The pid of the watcher that wrote a state file. */
async function writerOf(file: string): Promise<number> {
  return (JSON.parse(await readFile(file, 'utf8')) as { pid: number }).pid;
}

/** GET /version through the proxy; rejects on any failure. */
function version(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/version', ca: ca.cert, servername: 'localhost', agent: false, timeout: 5000 }, (res) => {
      res.resume().on('end', () => (res.statusCode === 200 ? resolve(200) : reject(new Error(`status ${res.statusCode}`))));
    });
    req
      .on('timeout', () => req.destroy(new Error('timeout')))
      .on('error', reject)
      .end();
  });
}

test(
  'agent hand-over: the successor takes the listeners, no request fails, the VIP is never published down; a plain SIGTERM still publishes it down',
  { skip },
  async (t) => {
    standin = new ApiserverStandin({ cert: serverCert.cert, key: serverCert.key, name: 'a' });
    await standin.open();
    const stateDir = await mkdtemp(join(dir, 'state-'));
    const socket = join(dir, 'handover/listeners.sock');
    const config = async (name: string, listen: number, admin: number): Promise<string> => {
      const file = join(dir, name);
      await writeFile(
        file,
        [
          `adminAddress: 127.0.0.1:${admin}`,
          `handoverSocket: ${socket}`,
          'proxy:',
          `  listen: ["127.0.0.1:${listen}"]`,
          `  upstream: ["127.0.0.1:${standin!.port}"]`,
          `  caFile: ${ca.certFile}`,
          '  shutdownGrace: 2s',
          'watch:',
          `  healthUrl: https://127.0.0.1:${standin!.port}/readyz`,
          `  caFile: ${ca.certFile}`,
          '  vip: [10.0.0.100]',
          `  stateDir: ${stateDir}`,
          '  interval: 200ms',
          '  heartbeat: 300ms',
          '',
        ].join('\n'),
      );
      return file;
    };
    const start = (file: string) => {
      const p = new KubewardProcess(['agent', '--config', file]);
      procs.push(p);
      return p;
    };
    const up = join(stateDir, '10.0.0.100.up');
    const upPid = () => writerOf(up);

    const old = start(await config('old.yaml', 0, 0));
    const [listen, admin] = [await old.listenPort({ timeoutMs: 20_000 }), await old.adminPort({ timeoutMs: 20_000 })];
    await waitFor(() => existsSync(up), { what: '10.0.0.100.up from the first agent', timeoutMs: 20_000 });
    assert.equal(await upPid(), old.pid);
    // Every file the state directory sees from here on, so that a .down written and removed again between two looks is seen too.
    const seen: string[] = [];
    watcher = watch(stateDir, (_event, name) => void (name && seen.push(name)));

    let stop = false;
    let ok = 0;
    const failures: string[] = [];
    const client = async (): Promise<void> => {
      for (let i = 0; i < 3000 && !stop; i++) {
        await version(listen).then(
          () => ok++,
          (err: Error) => failures.push(err.message),
        );
      }
    };
    const clients = Promise.all(Array.from({ length: 4 }, client));
    await waitFor(() => ok > 50, { what: 'requests flowing', timeoutMs: 20_000 });
    const next = start(await config('new.yaml', listen, admin));
    await next.waitForLog(/^accepting on the handed-over sockets/, { timeoutMs: 20_000 });
    await old.waitForLog(/^listeners handed over; this process does nothing more/, { timeoutMs: 30_000 });
    const handedOver = old.logs.find((l) => l.msg === 'shutting down' && l.agentMode === undefined);
    assert.equal(handedOver?.reason, 'listeners handed over to a successor');
    // It stays until its signal (as a pod's container does until kubelet's SIGTERM); the signal changes nothing.
    assert.equal(old.child.exitCode, null, 'the old agent waits for its SIGTERM');
    old.signal('SIGTERM');
    assert.equal((await old.exited).code, 0, old.stderr.slice(-400));
    // The new watcher takes the VIP over at its first verdict.
    await waitFor(async () => (await upPid()) === next.pid, { what: "the new watcher's .up", timeoutMs: 20_000 });
    const atTakeover = ok;
    await waitFor(() => ok > atTakeover + 50, { what: 'requests through the new agent', timeoutMs: 20_000 });
    stop = true;
    await clients;
    t.diagnostic(`requests: ${ok} ok, ${failures.length} failed`);
    assert.deepEqual(failures.slice(0, 5), [], `failed requests: ${failures.length}`);
    assert.ok(!seen.includes('10.0.0.100.down'), `the VIP was never published down during the hand-over: ${[...new Set(seen)].join(', ')}`);
    assert.equal((await fetch(`http://127.0.0.1:${admin}/readyz`)).status, 200, 'the admin address went over too');

    // Without a successor the shutdown is as before: the VIP goes down.
    next.signal('SIGTERM');
    assert.equal((await next.exited).code, 0);
    assert.ok(existsSync(join(stateDir, '10.0.0.100.down')), 'a plain SIGTERM publishes down');
  },
);

test(
  'watch hand-over: a new watcher takes the admin listener, the old one lets go of the lock and leaves the files, the VIP is never published down',
  { skip },
  async () => {
    const apiserver = new ApiserverStandin({ cert: serverCert.cert, key: serverCert.key, name: 'w' });
    await apiserver.open();
    try {
      const stateDir = await mkdtemp(join(dir, 'watch-state-'));
      const socket = join(dir, 'watch-handover/listeners.sock');
      const start = (admin: number) => {
        const p = new KubewardProcess([
          'watch',
          '--health-url',
          `https://127.0.0.1:${apiserver.port}/readyz`,
          '--ca-file',
          ca.certFile,
          '--vip',
          '10.0.0.101',
          '--state-dir',
          stateDir,
          '--interval',
          '200ms',
          '--heartbeat',
          '300ms',
          '--admin-address',
          `127.0.0.1:${admin}`,
          '--handover-socket',
          socket,
        ]);
        procs.push(p);
        return p;
      };
      const up = join(stateDir, '10.0.0.101.up');
      const upPid = () => writerOf(up);
      const old = start(0);
      const admin = await old.adminPort({ timeoutMs: 20_000 });
      await waitFor(async () => existsSync(up) && (await upPid()) === old.pid, { what: "the first watcher's .up", timeoutMs: 20_000 });
      await old.waitForLog(/^serving the listener hand-over$/);
      const seen: string[] = [];
      const files = watch(stateDir, (_event, name) => void (name && seen.push(name)));
      try {
        const next = start(admin);
        await next.waitForLog(/^received the listening sockets/, { timeoutMs: 20_000 });
        await old.waitForLog(/^listeners handed over; this process does nothing more/, { timeoutMs: 20_000 });
        // The new watcher has the lock only once the old one let go of it: its .up proves both.
        await waitFor(async () => (await upPid()) === next.pid, { what: "the new watcher's .up", timeoutMs: 20_000 });
        assert.equal(old.child.exitCode, null, 'the old watcher waits for its SIGTERM');
        old.signal('SIGTERM');
        assert.equal((await old.exited).code, 0);
        assert.equal((await fetch(`http://127.0.0.1:${admin}/readyz`)).status, 200, 'the admin address went over');
        assert.ok(!seen.includes('10.0.0.101.down'), `never published down: ${[...new Set(seen)].join(', ')}`);
        // The successor's own SIGTERM, with no successor of its own, publishes down as ever.
        next.signal('SIGTERM');
        assert.equal((await next.exited).code, 0);
        assert.ok(existsSync(join(stateDir, '10.0.0.101.down')), 'a plain SIGTERM publishes down');
      } finally {
        files.close();
      }
    } finally {
      await apiserver.close();
    }
  },
);
