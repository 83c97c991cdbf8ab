// kubeward watch as a real process against a real HTTPS stand-in, with real files and signals.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestCa, type TestCa, type CertPair } from '../testkit/certs.ts';
import { ApiserverStandin } from '../testkit/apiserver-standin.ts';
import { KubewardProcess, runKubeward } from '../testkit/kubeward-process.ts';
import { waitFor } from '../testkit/wait-for.ts';
import { parseBeat, parseRecord } from '../src/watch/state-record.ts';
import { adminTokenFixture } from '../testkit/admin-token.ts';

/** /status and drain need the admin token. */
const ADMIN_TOKEN = adminTokenFixture();

let ca: TestCa;
let otherCa: TestCa;
let serverCert: CertPair;
const procs: KubewardProcess[] = [];
const standins: ApiserverStandin[] = [];

before(async () => {
  ca = await createTestCa();
  otherCa = await createTestCa('other');
  serverCert = await ca.issueServer('apiserver', ['DNS:localhost', 'IP:127.0.0.1', 'IP:::1']);
});
after(async () => {
  await Promise.all(procs.map((p) => p.stop()));
  await Promise.all(standins.map((s) => s.close()));
  // Each state directory and the heartbeat directory the watcher keeps beside it.
  await Promise.all(stateDirs.flatMap((d) => [d, `${d}-heartbeat`]).map((d) => rm(d, { recursive: true, force: true })));
  await Promise.all([ca.close(), otherCa.close()]);
});

async function standin(): Promise<ApiserverStandin> {
  const s = new ApiserverStandin({ cert: serverCert.cert, key: serverCert.key });
  await s.open();
  standins.push(s);
  return s;
}

const stateDirs: string[] = [];

async function stateDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'kw-watch-'));
  stateDirs.push(dir);
  return dir;
}

function watch(s: ApiserverStandin | number, dir: string, extra: string[] = []): KubewardProcess {
  const port = typeof s === 'number' ? s : s.port;
  const p = new KubewardProcess([
    'watch',
    '--health-url',
    `https://127.0.0.1:${port}/readyz`,
    '--state-dir',
    dir,
    '--ca-file',
    ca.certFile,
    '--interval',
    '100ms',
    '--timeout',
    '500ms',
    '--heartbeat',
    '300ms',
    '--admin-address',
    'off',
    ...extra,
  ]);
  procs.push(p);
  return p;
}

const files = async (dir: string) => (await readdir(dir)).filter((n) => /\.(up|down)$/.test(n)).sort();
const record = async (dir: string, name: string) => parseRecord(await readFile(join(dir, name), 'utf8'));
const hasFiles = (dir: string, expected: string[]) => async () => (await files(dir)).join() === expected.join();

describe('verdicts', () => {
  test('once watching, start-up memory is given back, once (a collection; malloc_trim where the addon is built)', async () => {
    const s = await standin();
    const dir = await stateDir();
    const w = watch(s, dir, ['--vip', '10.0.0.100', '--log-level', 'debug']);
    const given = await w.waitForLog(/^start-up done: memory given back$/);
    assert.ok(Number(given.heapAfter) > 0 && Number(given.heapAfter) <= Number(given.heapBefore), `${given.heapBefore} -> ${given.heapAfter}`);
    await waitFor(hasFiles(dir, ['10.0.0.100.up']), { what: '.up after the give-back', timeoutMs: 15_000 });
    assert.equal(w.logs.filter((l) => l.msg === 'start-up done: memory given back').length, 1);
  });

  test('nothing is written before the first verdict, then .up with the record', async () => {
    const s = await standin();
    s.setReadyz('hang');
    const dir = await stateDir();
    const w = watch(s, dir, ['--vip', '10.0.0.100', '--fall', '100']);
    await w.waitForLog(/^watching$/);
    await waitFor(() => s.requests >= 2, { what: 'two hung probes', timeoutMs: 15_000 });
    assert.deepEqual(await files(dir), [], 'no verdict, no file');
    s.setReadyz('ok');
    await waitFor(hasFiles(dir, ['10.0.0.100.up']), { what: '.up', timeoutMs: 15_000 });
    const r = await record(dir, '10.0.0.100.up');
    assert.equal(r?.state, 'up');
    assert.equal(r?.pid, w.pid);
    assert.equal(r?.generation, 1);
    assert.match(r!.reason, /successful probe/);
  });

  test('down needs --fall consecutive failures, up needs --rise successes', async () => {
    const s = await standin();
    const dir = await stateDir();
    const w = watch(s, dir, ['--vip', '10.0.0.1', '--rise', '2', '--fall', '4']);
    await waitFor(hasFiles(dir, ['10.0.0.1.up']), { what: '.up', timeoutMs: 15_000 });
    const upLog = await w.waitForLog(/apiserver is up/);
    assert.match(String(upLog.reason), /^2 consecutive successful probes/);
    const before = s.requests;
    s.setReadyz('fail');
    await waitFor(hasFiles(dir, ['10.0.0.1.down']), { what: '.down', timeoutMs: 15_000 });
    assert.ok(s.requests - before >= 4, `at least 4 failed probes before down (saw ${s.requests - before})`);
    const downLog = await w.waitForLog(/apiserver is down/);
    assert.match(String(downLog.reason), /^4 consecutive failed probes \(last: http-status: HTTP 503/);
    s.setReadyz('ok');
    await waitFor(hasFiles(dir, ['10.0.0.1.up']), { what: '.up again', timeoutMs: 15_000 });
    assert.equal((await record(dir, '10.0.0.1.up'))?.generation, 3);
  });

  test('a refused connection declares down at once, not after --fall', async () => {
    const s = await standin();
    const dir = await stateDir();
    const w = watch(s, dir, ['--vip', '10.0.0.2', '--fall', '50']);
    await waitFor(hasFiles(dir, ['10.0.0.2.up']), { what: '.up', timeoutMs: 15_000 });
    await s.close();
    await waitFor(hasFiles(dir, ['10.0.0.2.down']), { what: '.down', timeoutMs: 10_000 });
    const down = await w.waitForLog(/apiserver is down/);
    assert.match(String(down.reason), /connection refused/);
  });

  test('without the fast path a refused connection is counted like any failure', async () => {
    const s = await standin();
    const dir = await stateDir();
    const w = watch(s, dir, ['--vip', '10.0.0.3', '--fall', '3', '--no-fast-down-on-refused']);
    await waitFor(hasFiles(dir, ['10.0.0.3.up']), { what: '.up', timeoutMs: 15_000 });
    await s.close();
    const down = await w.waitForLog(/apiserver is down/, { timeoutMs: 15_000 });
    assert.match(String(down.reason), /^3 consecutive failed probes \(last: refused/);
  });

  test('a hung apiserver is down after --fall timeouts', async () => {
    const s = await standin();
    const dir = await stateDir();
    const w = watch(s, dir, ['--vip', '10.0.0.4', '--fall', '2', '--timeout', '200ms']);
    await waitFor(hasFiles(dir, ['10.0.0.4.up']), { what: '.up', timeoutMs: 15_000 });
    s.setReadyz('hang');
    await waitFor(hasFiles(dir, ['10.0.0.4.down']), { what: '.down', timeoutMs: 15_000 });
    assert.match(String((await w.waitForLog(/apiserver is down/)).reason), /last: timeout: no answer within 200 ms/);
  });

  test('a certificate from the wrong CA is never healthy', async () => {
    const s = await standin();
    const dir = await stateDir();
    const p = new KubewardProcess([
      'watch',
      '--health-url',
      `https://127.0.0.1:${s.port}/readyz`,
      '--state-dir',
      dir,
      '--ca-file',
      otherCa.certFile,
      '--interval',
      '100ms',
      '--fall',
      '2',
      '--vip',
      '10.0.0.5',
      '--admin-address',
      'off',
    ]);
    procs.push(p);
    await waitFor(hasFiles(dir, ['10.0.0.5.down']), { what: '.down', timeoutMs: 15_000 });
    assert.match(String((await p.waitForLog(/apiserver is down/)).reason), /last: tls:/);
  });

  test('IPv6 VIPs are named in canonical form, and DNS names give every address', async () => {
    const s = await standin();
    const dir = await stateDir();
    watch(s, dir, ['--vip', 'FD00:0:0::2', '--vip-from-dns', 'localhost']);
    await waitFor(async () => (await files(dir)).includes('fd00::2.up') && (await files(dir)).includes('127.0.0.1.up'), {
      what: 'v6 and DNS files',
      timeoutMs: 15_000,
    });
    const names = await files(dir);
    assert.ok(
      names.every((n) => n.endsWith('.up')),
      names.join(),
    );
  });
});

describe('files', () => {
  test('a reader polling the directory never sees neither file while the state flips', async () => {
    const s = await standin();
    const dir = await stateDir();
    // A generous timeout: with --fall 1 a single slow probe on a busy machine would flip the state early.
    watch(s, dir, ['--vip', '10.9.9.9', '--fall', '1', '--interval', '100ms', '--timeout', '3s']);
    await waitFor(hasFiles(dir, ['10.9.9.9.up']), { what: '.up', timeoutMs: 15_000 });
    let flips = 0;
    let reads = 0;
    let transitions = 0;
    let last = 'up';
    const deadline = performance.now() + 3000;
    const flipper = setInterval(() => {
      s.setReadyz(flips++ % 2 === 0 ? 'fail' : 'ok');
    }, 150);
    try {
      while (performance.now() < deadline && reads < 200_000) {
        const names = (await readdir(dir)).filter((n) => n.startsWith('10.9.9.9.'));
        reads++;
        assert.ok(names.includes('10.9.9.9.up') || names.includes('10.9.9.9.down'), `neither file seen: ${names.join()}`);
        const now = names.includes('10.9.9.9.down') ? 'down' : 'up';
        if (now !== last) transitions++;
        last = now;
      }
    } finally {
      clearInterval(flipper);
    }
    assert.ok(transitions >= 4, `the state flipped while reading (${transitions} transitions in ${reads} reads)`);
  });

  test('heartbeats go to <state-dir>-heartbeat; the state file is not touched while the state holds', async () => {
    const s = await standin();
    const dir = await stateDir();
    watch(s, dir, ['--vip', '10.0.0.6']);
    await waitFor(hasFiles(dir, ['10.0.0.6.up']), { what: '.up', timeoutMs: 15_000 });
    const first = await record(dir, '10.0.0.6.up');
    assert.equal(first!.heartbeats, 'separate');
    const firstStat = await stat(join(dir, '10.0.0.6.up'));
    const beatFile = join(`${dir}-heartbeat`, '10.0.0.6.beat');
    const beat = await waitFor(
      async () => {
        const b = existsSync(beatFile) ? parseBeat(await readFile(beatFile, 'utf8')) : undefined;
        return b && Date.parse(b.heartbeat) >= Date.parse(first!.heartbeat) + 500 ? b : undefined;
      },
      { what: 'a newer beat', timeoutMs: 15_000 },
    );
    assert.equal(beat.generation, first!.generation, 'a beat is not a new verdict');
    assert.equal(beat.pid, first!.pid);
    const now = await stat(join(dir, '10.0.0.6.up'));
    assert.equal(now.ino, firstStat.ino, 'the state file was not replaced');
    assert.equal(now.mtimeMs, firstStat.mtimeMs, 'nor touched');
    assert.deepEqual((await readdir(dir)).filter((n) => !n.endsWith('.lock')).sort(), ['10.0.0.6.up'], 'nothing else in the state directory');
  });

  test('--heartbeat-dir state-dir rewrites the state file instead (the older way)', async () => {
    const s = await standin();
    const dir = await stateDir();
    watch(s, dir, ['--vip', '10.0.0.6', '--heartbeat-dir', 'state-dir']);
    await waitFor(hasFiles(dir, ['10.0.0.6.up']), { what: '.up', timeoutMs: 15_000 });
    const first = await record(dir, '10.0.0.6.up');
    assert.equal(first!.heartbeats, undefined);
    const later = await waitFor(
      async () => {
        const r = await record(dir, '10.0.0.6.up');
        return r && Date.parse(r.heartbeat) >= Date.parse(first!.heartbeat) + 500 ? r : undefined;
      },
      { what: 'a newer heartbeat', timeoutMs: 15_000 },
    );
    assert.equal(later.since, first!.since, 'since stays');
    assert.equal(later.generation, first!.generation, 'a rewrite is not a new verdict');
  });

  test('stale files from an earlier run are replaced by the first verdict; other files are left alone', async () => {
    const s = await standin();
    const dir = await stateDir();
    await writeFile(join(dir, '10.0.0.7.down'), '');
    await writeFile(join(dir, '10.0.0.7.up'), 'junk');
    await writeFile(join(dir, 'notes.txt'), 'keep me');
    watch(s, dir, ['--vip', '10.0.0.7']);
    await waitFor(hasFiles(dir, ['10.0.0.7.up']), { what: 'only .up', timeoutMs: 15_000 });
    assert.equal((await record(dir, '10.0.0.7.up'))?.state, 'up');
    assert.equal(await readFile(join(dir, 'notes.txt'), 'utf8'), 'keep me');
  });
});

describe('lifecycle', () => {
  test('SIGTERM publishes .down for every VIP and exits 0', async () => {
    const s = await standin();
    const dir = await stateDir();
    const w = watch(s, dir, ['--vip', '10.0.0.8', '--vip', '10.0.0.9']);
    await waitFor(hasFiles(dir, ['10.0.0.8.up', '10.0.0.9.up']), { what: 'both up', timeoutMs: 15_000 });
    w.signal('SIGTERM');
    assert.deepEqual(await w.exited, { code: 0, signal: null });
    assert.deepEqual(await files(dir), ['10.0.0.8.down', '10.0.0.9.down']);
    assert.match((await record(dir, '10.0.0.8.down'))!.reason, /watcher stopped/);
  });

  test('--on-exit keep leaves the files as they are', async () => {
    const s = await standin();
    const dir = await stateDir();
    const w = watch(s, dir, ['--vip', '10.0.0.10', '--on-exit', 'keep']);
    await waitFor(hasFiles(dir, ['10.0.0.10.up']), { what: '.up', timeoutMs: 15_000 });
    w.signal('SIGINT');
    assert.equal((await w.exited).code, 0);
    assert.deepEqual(await files(dir), ['10.0.0.10.up']);
  });

  test('a second watcher on the same directory waits for the lock and gives up after --lock-timeout', async () => {
    const s = await standin();
    const dir = await stateDir();
    const first = watch(s, dir, ['--vip', '10.0.0.11']);
    await first.waitForLog(/^lock acquired$/);
    const second = watch(s, dir, ['--vip', '10.0.0.11', '--lock-timeout', '600ms']);
    await second.waitForLog(/another watcher holds the lock/);
    assert.equal((await second.exited).code, 1);
    assert.match(second.stderr, /apiserver-watcher.lock is still locked by another process/);
    const third = watch(s, dir, ['--vip', '10.0.0.11', '--lock-timeout', '20s']);
    await third.waitForLog(/another watcher holds the lock/);
    await first.stop();
    await third.waitForLog(/^lock acquired$/);
    await waitFor(hasFiles(dir, ['10.0.0.11.up']), { what: 'the new watcher publishes', timeoutMs: 15_000 });
  });

  test('the admin listener reports readiness, status and metrics', async () => {
    const s = await standin();
    const dir = await stateDir();
    const w = new KubewardProcess([
      'watch',
      '--health-url',
      `https://127.0.0.1:${s.port}/readyz`,
      '--state-dir',
      dir,
      '--insecure-skip-tls-verify',
      '--interval',
      '100ms',
      '--vip',
      '10.0.0.12',
      ...ADMIN_TOKEN.args,
      '--admin-address',
      '127.0.0.1:0',
    ]);
    procs.push(w);
    const port = await w.adminPort();
    await waitFor(hasFiles(dir, ['10.0.0.12.up']), { what: '.up', timeoutMs: 15_000 });
    const base = `http://127.0.0.1:${port}`;
    assert.equal((await fetch(`${base}/healthz`)).status, 200);
    await waitFor(async () => (await fetch(`${base}/readyz`)).status === 200, { what: 'ready', timeoutMs: 15_000 });
    const status = (await (await fetch(`${base}/status`, { headers: ADMIN_TOKEN.headers })).json()) as Record<string, unknown>;
    assert.equal(status.state, 'up');
    assert.deepEqual(status.vips, ['10.0.0.12']);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    assert.match(metrics, /kubeward_watch_vip_state\{vip="10.0.0.12",state="up",mode="watch"\} 1/);
    assert.match(metrics, /kubeward_watch_probes_total\{reason="ok",mode="watch"\} \d+/);
    assert.match(metrics, /kubeward_watch_probe_duration_seconds_bucket/);
    assert.match(metrics, /kubeward_process_resident_memory_bytes/);
  });
});

describe('bad input', () => {
  const cases: [string, string[], RegExp][] = [
    ['no VIP', ['--insecure-skip-tls-verify'], /^kubeward watch: no VIP: give --vip IP/],
    ['a bad VIP', ['--vip', '10.0.0.300', '--insecure-skip-tls-verify'], /^kubeward watch: --vip \(value 1\): "10.0.0.300" is not an IPv4 or IPv6 address/],
    [
      'a bad duration',
      ['--vip', '10.0.0.1', '--insecure-skip-tls-verify', '--interval', '2 seconds'],
      /^kubeward watch: --interval: "2 seconds" is not a duration/,
    ],
    ['a zero fall', ['--vip', '10.0.0.1', '--insecure-skip-tls-verify', '--fall', '0'], /^kubeward watch: --fall: must be at least 1/],
    ['an unknown flag', ['--vip', '10.0.0.1', '--intervall', '2s'], /^kubeward watch: unknown option '--intervall' \(Did you mean --interval\?\)/],
    ['no TLS choice', ['--vip', '10.0.0.1'], /--ca-file FILE .* or --insecure-skip-tls-verify is required/],
    ['a bad on-exit', ['--vip', '10.0.0.1', '--insecure-skip-tls-verify', '--on-exit', 'maybe'], /--on-exit: expected down or keep/],
    ['an http URL', ['--vip', '10.0.0.1', '--insecure-skip-tls-verify', '--health-url', 'http://x/readyz'], /--health-url: expected an https:\/\/ URL/],
    [
      'a missing CA file',
      ['--vip', '10.0.0.1', '--ca-file', '/nonexistent/ca.crt', '--state-dir', '/tmp/kw-none', '--admin-address', 'off'],
      /--ca-file \/nonexistent\/ca.crt: cannot read it/,
    ],
  ];
  for (const [name, args, message] of cases) {
    test(`${name} exits 2 with one line naming the problem`, async () => {
      const r = await runKubeward(['watch', ...args]);
      assert.equal(r.code, 2, r.stderr);
      const lines = r.stderr.split('\n').filter((l) => l.startsWith('kubeward'));
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0]!, message);
    });
  }

  test('a config file with an unknown key, or a bad value, exits 2 naming the file and key', async () => {
    const dir = await stateDir();
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, 'vip: [10.0.0.1]\ninsecureSkipTlsVerify: true\nintervall: 2s\n');
    const r1 = await runKubeward(['watch', '--config', bad]);
    assert.equal(r1.code, 2);
    assert.match(r1.stderr, /bad.yaml: unknown key "intervall"/);
    await writeFile(bad, 'vip: [10.0.0.1]\ninsecureSkipTlsVerify: true\nfall: many\n');
    const r2 = await runKubeward(['watch', '--config', bad]);
    assert.equal(r2.code, 2);
    assert.match(r2.stderr, /bad.yaml: key "fall": expected a whole number/);
  });

  test('flags override the config file', async () => {
    const s = await standin();
    const dir = await stateDir();
    const cfg = join(dir, 'kw.yaml');
    await writeFile(cfg, `vip: [10.0.0.13]\nstateDir: ${dir}\ninsecureSkipTlsVerify: true\nhealthUrl: https://127.0.0.1:1/readyz\nadminAddress: "off"\n`);
    const w = new KubewardProcess(['watch', '--config', cfg, '--health-url', `https://127.0.0.1:${s.port}/readyz`, '--interval', '100ms']);
    procs.push(w);
    await waitFor(hasFiles(dir, ['10.0.0.13.up']), { what: '.up from the flag URL', timeoutMs: 15_000 });
    assert.ok(existsSync(join(dir, 'kw.yaml')));
  });
});
