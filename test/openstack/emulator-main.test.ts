// The emulator as a process (npm run openstack-emulator): it prints where it listens and a clouds.yaml
// that works, rejects bad flags with exit 2, and stops on SIGTERM.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort, waitFor } from '../../testkit/wait-for.ts';

const MAIN = fileURLToPath(new URL('../../testkit/openstack/main.ts', import.meta.url));
const children: ChildProcess[] = [];
after(() => {
  for (const c of children) if (c.exitCode === null && c.pid !== undefined) process.kill(c.pid, 'SIGKILL');
});

function run(args: string[]): { child: ChildProcess; out: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [MAIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { child, out: () => out, exited };
}

test('the standalone emulator serves Keystone on the given port and exits 0 on SIGTERM', async () => {
  // freePort stays: what this checks is that --port is honoured, so the port must be chosen here.
  const port = await freePort();
  const p = run(['--port', String(port), '--max-routes', '3']);
  await waitFor(() => p.out().includes('listening on'), { timeoutMs: 15_000, what: 'emulator start' });
  assert.match(p.out(), new RegExp(`auth_url: http://127.0.0.1:${port}/identity/v3`));
  const res = await fetch(`http://127.0.0.1:${port}/identity/v3/auth/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: { methods: ['password'], password: { user: { name: 'demo', domain: { name: 'Default' }, password: 'demo' } } },
        scope: { project: { name: 'demo', domain: { name: 'Default' } } },
      },
    }),
  });
  assert.equal(res.status, 201);
  assert.ok(res.headers.get('x-subject-token'));
  p.child.kill('SIGTERM');
  assert.equal(await p.exited, 0);
});

test('a bad flag value exits 2 naming the flag', async () => {
  const p = run(['--max-routes', 'many']);
  assert.equal(await p.exited, 2);
  assert.match(p.out(), /--max-routes must be a whole number/);
});
