import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shippedDaemonEnv, SHIPPED_PATH } from './daemon-env.ts';
import { ProcessGroup } from './process-group.ts';

const DEVELOPER_SHELL: NodeJS.ProcessEnv = {
  PATH: '/root/.local/bin:/usr/bin:/opt/tools/bin:relative/bin',
  NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt',
  NODE_OPTIONS: '--max-old-space-size=4096',
  SSL_CERT_FILE: '/etc/ssl/certs/ca-certificates.crt',
  SSL_CERT_DIR: '/etc/ssl/certs',
  UV_THREADPOOL_SIZE: '64',
  MALLOC_ARENA_MAX: '1',
  HOME: '/root',
};

test("a developer's NODE_EXTRA_CA_CERTS, NODE_OPTIONS and the rest do not reach the daemons; PATH and KUBEWARD_V8_FLAGS do", () => {
  const env = shippedDaemonEnv({ ...DEVELOPER_SHELL, KUBEWARD_V8_FLAGS: '--lite-mode' });
  assert.deepEqual(Object.keys(env).sort(), ['KUBEWARD_V8_FLAGS', 'PATH']);
  assert.equal(env.KUBEWARD_V8_FLAGS, '--lite-mode');
  // The shipped PATH first, then the parent's other absolute entries once each.
  assert.equal(env.PATH, `${SHIPPED_PATH}:/root/.local/bin:/opt/tools/bin`);
  assert.deepEqual(shippedDaemonEnv({}), { PATH: SHIPPED_PATH });
});

test('a process the bench starts sees only that environment (through the process group, as the daemons are started)', async () => {
  const group = new ProcessGroup(shippedDaemonEnv({ ...DEVELOPER_SHELL, PATH: process.env.PATH }));
  const proc = group.start('env-probe', process.execPath, ['-e', 'process.stdout.write(JSON.stringify(process.env))'], { stdout: 'pipe' });
  let out = '';
  proc.child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  await proc.exited;
  const seen = JSON.parse(out) as Record<string, string>;
  for (const leaked of ['NODE_EXTRA_CA_CERTS', 'NODE_OPTIONS', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'UV_THREADPOOL_SIZE', 'MALLOC_ARENA_MAX', 'HOME'])
    assert.equal(seen[leaked], undefined, `${leaked} leaked into the daemon`);
  assert.ok(seen.PATH?.startsWith(SHIPPED_PATH));
});
