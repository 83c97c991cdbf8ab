// The listener hand-over (--handover-socket) between real kubeward processes: a successor takes the
// running proxy's listening sockets, connections made all through it succeed, a process of the same
// uid cannot bind the address meanwhile (no SO_REUSEPORT), a broken or hostile peer on either end of
// the hand-over socket costs a plain bind and never a crash, and the preStop helper await-successor
// returns only once the hand-over is complete.
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { chmod, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubewardProcess, NODE } from '../../testkit/kubeward-process.ts';
import { waitFor } from '../../testkit/wait-for.ts';
import { loadHandoverAddon, type HandoverAddon } from '../../src/handover/handover-addon.ts';
import { ensureNativeAddon, TcpUpstream, TEST_NATIVE_ADDON } from './proxy-fixtures.ts';

const run = promisify(execFile);
const HELPER = join(import.meta.dirname, '../../src/handover/await-successor.ts');
const isRoot = process.getuid?.() === 0;
const linux = process.platform === 'linux' ? false : 'the hand-over is Linux only';

/** One connection through the proxy: resolves with the upstream's greeting line, rejects on any failure. */
function greeting(port: number, timeoutMs = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port });
    let got = '';
    const timer = setTimeout(() => s.destroy(new Error('no greeting in time')), timeoutMs);
    s.setEncoding('utf8');
    s.on('data', (d: string) => {
      got += d;
      if (got.includes('\n')) {
        clearTimeout(timer);
        s.end();
        resolve(got.trim());
      }
    });
    s.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    s.on('close', () => {
      clearTimeout(timer);
      if (!got.includes('\n')) reject(new Error(`closed after ${JSON.stringify(got)}`));
    });
  });
}

/** A process of this uid that tries to bind host:port (SO_REUSEPORT set, as a stranger joining would): its error code or "bound". */
async function strangerBind(port: number): Promise<string> {
  const script = `const s = require('node:net').createServer(); s.once('error', (e) => { console.log(e.code); process.exit(0); }); s.listen({ host: '127.0.0.1', port: ${port}, reusePort: true }, () => { console.log('bound'); process.exit(0); });`;
  return (await run(NODE, ['-e', script], { timeout: 10_000 })).stdout.trim();
}

describe('listener hand-over between kubeward processes', { skip: linux }, () => {
  const procs: KubewardProcess[] = [];
  const upstream = new TcpUpstream('up');
  let dir: string;
  let addon: HandoverAddon;
  const start = (args: string[], extra: string[] = []): KubewardProcess => {
    const p = new KubewardProcess([...args, ...extra]);
    procs.push(p);
    return p;
  };
  const proxyArgs = (socket: string, listen = 0, admin = 0) => [
    'proxy',
    '--listen',
    `127.0.0.1:${listen}`,
    '--upstream',
    `127.0.0.1:${upstream.address.port}`,
    '--health-check',
    'tcp',
    '--admin-address',
    `127.0.0.1:${admin}`,
    '--shutdown-grace',
    '2s',
    '--handover-socket',
    socket,
  ];

  before(async () => {
    await ensureNativeAddon();
    const a = loadHandoverAddon(TEST_NATIVE_ADDON);
    if ('unusable' in a) throw new Error(a.unusable);
    addon = a;
    await upstream.listen();
    dir = await mkdtemp(join(tmpdir(), 'kw-handover-'));
  });
  /** Servers and sockets of the test's own, closed whatever a test left open. */
  const closers: (() => void)[] = [];
  after(async () => {
    for (const p of procs) await p.stop();
    for (const c of closers) c();
    await upstream.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('a process of the same uid cannot bind the address while kubeward listens; with --reuse-port it could', async () => {
    const kw = start(proxyArgs(join(dir, 'stranger/listeners.sock')));
    const port = await kw.listenPort({ timeoutMs: 20_000 });
    assert.equal(await strangerBind(port), 'EADDRINUSE', 'a stranger of the same uid is refused the address');
    assert.equal(await greeting(port), 'up', 'kubeward still serves it');
    await kw.stop();
    // The alternative this replaces: with SO_REUSEPORT the stranger joins and takes part of the connections.
    const shared = start([
      'proxy',
      '--listen',
      '127.0.0.1:0',
      '--upstream',
      `127.0.0.1:${upstream.address.port}`,
      '--health-check',
      'tcp',
      '--admin-address',
      'off',
      '--reuse-port',
    ]);
    const sharedPort = await shared.listenPort({ timeoutMs: 20_000 });
    assert.equal(await strangerBind(sharedPort), 'bound', 'with --reuse-port any process of the uid can join the port');
    await shared.stop();
  });

  test('three generations under load: every connection during two hand-overs succeeds, and each old process stays, holding nothing, until its SIGTERM', async (t) => {
    const socket = join(dir, 'load/listeners.sock');
    // As kubelet creates a hostPath directory: this uid's, 0755. The process narrows it to 0700.
    await mkdir(join(dir, 'load'), { mode: 0o755 });
    await chmod(join(dir, 'load'), 0o755);
    const first = start(proxyArgs(socket));
    const port = await first.listenPort({ timeoutMs: 20_000 });
    const admin = await first.adminPort();
    await first.waitForLog(/^serving the listener hand-over$/);
    assert.equal((await stat(join(dir, 'load'))).mode & 0o777, 0o700, 'the directory is narrowed to 0700');
    assert.equal((await stat(socket)).mode & 0o777, 0o600, 'the socket is 0600');

    // Eight clients in a loop, bounded in count and time, each connection checked end to end.
    let stop = false;
    let ok = 0;
    const failures: string[] = [];
    const deadline = Date.now() + 60_000;
    const client = async (): Promise<void> => {
      for (let i = 0; i < 5000 && !stop && Date.now() < deadline; i++) {
        await greeting(port).then(
          () => ok++,
          (err: Error) => failures.push(err.message),
        );
      }
    };
    const clients = Promise.all(Array.from({ length: 8 }, client));
    const generations = [first];
    for (let g = 0; g < 2; g++) {
      await waitFor(() => ok > 200 * (g + 1), { timeoutMs: 20_000, what: 'connections flowing' });
      const old = generations.at(-1)!;
      const startedAt = performance.now();
      const next = start(proxyArgs(socket, port, admin));
      await next.waitForLog(/^accepting on the handed-over sockets/, { timeoutMs: 20_000 });
      await old.waitForLog(/stops accepting$/, { timeoutMs: 5000 });
      await old.waitForLog(/^listeners handed over; this process does nothing more/, { timeoutMs: 20_000 });
      t.diagnostic(`hand-over ${g + 1}: successor start to predecessor done ${Math.round(performance.now() - startedAt)} ms`);
      // A container that exits is restarted by kubelet, and the restart would take the sockets back.
      assert.equal(old.child.exitCode, null, `generation ${g} waits for its signal: ${old.stderr.slice(-400)}`);
      old.child.kill('SIGTERM');
      const { code } = await old.exited;
      assert.equal(code, 0, `generation ${g} exits 0 at its SIGTERM: ${old.stderr.slice(-400)}`);
      await next.waitForLog(/^serving the listener hand-over$/);
      generations.push(next);
    }
    const atEnd = ok;
    await waitFor(() => ok > atEnd + 200, { timeoutMs: 20_000, what: 'connections through the third generation' });
    stop = true;
    await clients;
    t.diagnostic(`connections: ${ok} ok, ${failures.length} failed`);
    assert.deepEqual(failures.slice(0, 5), [], `failed connections: ${failures.length}`);
    assert.ok(ok > 600);
    assert.equal(await strangerBind(port), 'EADDRINUSE', 'the handed-over socket is still exclusive');
    const adminOk = await fetch(`http://127.0.0.1:${admin}/healthz`);
    assert.equal(adminOk.status, 200, 'the admin address went over too');
    await generations.at(-1)!.stop();
  });

  /** A stand-in for the running process on the hand-over socket, answering each peer with `answer`. */
  async function fakePredecessor(socket: string, answer: (s: Socket, fd: number) => void): Promise<Server> {
    const server = createServer((s) => {
      s.on('error', () => undefined);
      s.once('data', () => answer(s, (s as unknown as { _handle: { fd: number } })._handle.fd));
    });
    await new Promise<void>((resolve) => server.listen(socket, resolve));
    closers.push(() => server.close());
    return server;
  }

  test('a broken or hostile predecessor costs a plain bind: garbage, an early close, an offer without descriptors, one with a UDP socket, silence', async (t: TestContext) => {
    // A UDP socket on a port whose TCP side the kernel just gave out free (held until kubeward starts),
    // so that kubeward's fresh bind of that TCP port after refusing the UDP socket finds it free.
    const tcp = createServer();
    await new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve));
    const udp = createSocket('udp4');
    await new Promise<void>((resolve, reject) => udp.once('error', reject).bind((tcp.address() as { port: number }).port, '127.0.0.1', resolve));
    closers.push(
      () => udp.close(),
      () => tcp.close(),
    );
    const udpPort = udp.address().port;
    const udpFd = (udp as unknown as { _handle: { fd: number } })._handle.fd;
    const cases: [string, (s: Socket, fd: number) => void, RegExp, number][] = [
      ['garbage', (s) => s.write('HTTP/1.1 400 Bad Request\r\n\r\n'), /not an offer/, 0],
      ['early close', (s) => s.destroy(), /closed the hand-over socket without an offer/, 0],
      ['no descriptors', (s) => s.write('kubeward-handover 1 offer 127.0.0.1:6443\n'), /carries 0 descriptors/, 0],
      [
        'a UDP socket as the listener',
        (_s, fd) => addon.handoverSend(fd, Buffer.from(`kubeward-handover 1 offer 127.0.0.1:${udpPort}\n`), [udpFd]),
        /./,
        udpPort,
      ],
      ['silence', () => undefined, /no answer within 3000 ms/, 0],
    ];
    for (const [what, answer, why, listen] of cases) {
      const socket = join(dir, `hostile-${cases.findIndex((c) => c[0] === what)}/listeners.sock`);
      await run('install', ['-d', '-m', '0700', join(socket, '..')]);
      const fake = await fakePredecessor(socket, answer);
      const startedAt = performance.now();
      if (listen !== 0) await new Promise<void>((resolve) => tcp.close(() => resolve()));
      const kw = start(proxyArgs(socket, listen));
      const port = await kw.listenPort({ timeoutMs: 20_000 });
      if (listen === 0) {
        const line = await kw.waitForLog(/^no hand-over: binding the listen addresses$/);
        assert.match(String(line.why), why, `${what}: ${String(line.why)}`);
      } else {
        await kw.waitForLog(/^received the listening sockets/);
        assert.equal(port, udpPort, `${what}: the configured port is bound afresh`);
      }
      t.diagnostic(`${what}: start to listening ${Math.round(performance.now() - startedAt)} ms`);
      assert.equal(await greeting(port), 'up', `${what}: the proxy serves`);
      assert.equal(kw.child.exitCode, null, `${what}: still running`);
      await kw.stop();
      await new Promise<void>((resolve) => fake.close(() => resolve()));
    }
  });

  test('a hostile successor on the socket never stops the running process: garbage, a hello and silence, accepting out of turn; the real successor still takes over', async () => {
    const socket = join(dir, 'successor/listeners.sock');
    const kw = start(proxyArgs(socket));
    const port = await kw.listenPort({ timeoutMs: 20_000 });
    const admin = await kw.adminPort();
    await kw.waitForLog(/^serving the listener hand-over$/);
    const say = async (text: string, keepOpen = false): Promise<Socket> => {
      const s = connect(socket);
      s.on('error', () => undefined);
      await new Promise<void>((resolve) => s.once('connect', resolve));
      s.write(text);
      if (!keepOpen) await new Promise<void>((resolve) => s.once('close', () => resolve()));
      return s;
    };
    await say('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await say('kubeward-handover 1 accepting 127.0.0.1:1\n');
    await say(`${'x'.repeat(5000)}`, true).then((s) => new Promise((resolve) => s.once('close', resolve)));
    const silent = await say('kubeward-handover 1 hello\n', true);
    closers.push(() => silent.destroy());
    await waitFor(() => kw.logs.filter((l) => /peer dropped/.test(l.msg)).length >= 3, { timeoutMs: 10_000, what: 'three peers dropped' });
    assert.equal(kw.child.exitCode, null, 'still running');
    assert.equal(await greeting(port), 'up', 'still accepting');
    // The silent one holds an offer; a real successor is not held off by it.
    const next = start(proxyArgs(socket, port, admin));
    await next.waitForLog(/^accepting on the handed-over sockets/, { timeoutMs: 20_000 });
    await kw.waitForLog(/^listeners handed over; this process does nothing more/, { timeoutMs: 20_000 });
    kw.signal('SIGTERM');
    assert.equal((await kw.exited).code, 0);
    // The silent peer's conversation ends with the hand-over (read, so that its end is seen).
    silent.resume();
    await new Promise((resolve) => (silent.destroyed ? resolve(undefined) : silent.once('close', resolve)));
    assert.equal(await greeting(port), 'up');
    await next.stop();
  });

  test('a peer of another uid is dropped by SO_PEERCRED before anything is offered', { skip: isRoot ? false : 'needs root (a second uid)' }, async () => {
    const socket = join(dir, 'uid/listeners.sock');
    const kw = start(proxyArgs(socket));
    await kw.listenPort({ timeoutMs: 20_000 });
    await kw.waitForLog(/^serving the listener hand-over$/);
    // The directory is 0700, so the other uid could not reach the socket; opened up here to reach the uid check behind it.
    await run('chmod', ['0711', dir, join(socket, '..')]);
    await run('chmod', ['0666', socket]);
    const script = `const s = require('node:net').connect(${JSON.stringify(socket)}); let got = ''; s.on('data', (d) => (got += d)); s.on('connect', () => s.write('kubeward-handover 1 hello\\n')); s.on('close', () => { console.log(JSON.stringify(got)); });  s.on('error', (e) => console.log(e.code));`;
    const out = (await run('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', NODE, '-e', script], { timeout: 10_000 })).stdout.trim();
    // Dropped unread: a reset (or a broken pipe, if it went before the hello), and not a byte of an offer.
    assert.match(out, /^((ECONNRESET|EPIPE)\n)?""$/, `nothing offered to uid 65534: ${out}`);
    await kw.waitForLog(/another uid/);
    await kw.stop();
  });

  test(
    'await-successor returns once the hand-over is complete, not while both processes hold the socket',
    { skip: isRoot ? false : 'needs root (unshare --pid)' },
    async () => {
      const socket = join(dir, 'hook/listeners.sock');
      // The running process in its own PID namespace, like a container; the hook joins it there.
      const old = new KubewardProcess(proxyArgs(socket), { prefix: ['unshare', '--pid', '--fork', '--mount-proc'] });
      procs.push(old);
      const port = await old.listenPort({ timeoutMs: 20_000 });
      const admin = await old.adminPort();
      await old.waitForLog(/^serving the listener hand-over$/);
      const inner = Number((await run('pgrep', ['-P', String(old.pid)])).stdout.trim().split('\n')[0]);
      const hook = (timeout: string) =>
        run('nsenter', ['-t', String(inner), '-p', '-m', NODE, HELPER, `127.0.0.1:${port}`, '--timeout', timeout, '--interval', '50ms'], { timeout: 30_000 });
      assert.match((await hook('1s')).stdout, /no successor on 127\.0\.0\.1:\d+ after 1s/, 'alone, the hook waits out its timeout');
      const waiting = hook('20s');
      const next = start(proxyArgs(socket, port, admin));
      const accepted = await next.waitForLog(/^accepting on the handed-over sockets/, { timeoutMs: 20_000 });
      const done = await waiting;
      const finishedAt = Date.now();
      assert.match(done.stdout, /a successor listens on every address/);
      assert.ok(Number(accepted.time) <= finishedAt, 'the hook returned after the successor said it accepts');
      await old.waitForLog(/stops accepting$/);
      // The hook is killed with its container: the old process lives on after the hand-over until
      // kubelet's SIGTERM, which comes once the hook returned and joins the shutdown under way.
      assert.equal(old.child.exitCode, null, 'the old process waits for its SIGTERM');
      process.kill(inner, 'SIGTERM');
      const { code } = await old.exited;
      assert.equal(code, 0);
      assert.ok(!old.logs.some((l) => /second signal/.test(l.msg)), 'the SIGTERM did not cut the shutdown short');
      await next.stop();
    },
  );
});
