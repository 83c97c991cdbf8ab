// The node-local HAProxy config that `kubeward plan` renders, run by the real HAProxy against two
// apiserver stand-ins: its checks verify the certificate against the CA and really read /readyz,
// so an apiserver that answers 503 (graceful shutdown) stops getting new connections.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import { execCommand } from '../src/sys/exec.ts';
import { createTestCa, type TestCa } from '../testkit/certs.ts';
import { ApiserverStandin } from '../testkit/apiserver-standin.ts';
import { freePort, waitFor } from '../testkit/wait-for.ts';
import { parseInventory } from '../src/plan/parse-inventory.ts';
import { renderPlan } from '../src/plan/render-plan.ts';

let ca: TestCa | undefined;
const standins: ApiserverStandin[] = [];
let child: ChildProcess | undefined;

after(async () => {
  if (child?.pid !== undefined && child.exitCode === null) {
    const exited = new Promise((r) => child!.once('exit', r));
    process.kill(child.pid, 'SIGTERM');
    await exited;
  }
  await Promise.all(standins.map((s) => s.close()));
  await ca?.close();
});

function get(port: number, caCert: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/version', ca: caCert, agent: false, timeout: 3000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

test('the rendered HAProxy stops sending new connections to an apiserver whose /readyz fails, and takes it back', async (t) => {
  if (
    !(await execCommand(['sh', '-c', 'command -v haproxy']).then(
      () => true,
      () => false,
    ))
  ) {
    return t.skip('haproxy is missing; install the haproxy package');
  }
  ca = await createTestCa('plan-haproxy-ca');
  // freePort stays for HAProxy's port: it is written into the inventory and the rendered
  // haproxy.cfg under test, which refuse port 0.
  const lbPort = await freePort();
  const cert = await ca.issueServer('apiserver', ['DNS:localhost', 'IP:127.0.0.1', 'IP:127.0.0.2', 'IP:127.0.0.3']);
  // The first apiserver binds port 0; the second takes the same port on its own address.
  let apiPort = 0;
  for (const host of ['127.0.0.2', '127.0.0.3']) {
    const s = new ApiserverStandin({ cert: cert.cert, key: cert.key, host, port: apiPort, name: host });
    await s.open();
    standins.push(s);
    apiPort = s.port;
  }
  const inventory = `hosts:\n  cp1: {ip: 127.0.0.2}\n  cp2: {ip: 127.0.0.3}\n  w1: {ip: 10.0.0.21}\ngroups:\n  kube_control_plane: [cp1, cp2]\n  kube_node: [w1]\nvars:\n  kube_apiserver_port: ${apiPort}\n  loadbalancer_apiserver_port: ${lbPort}\n  loadbalancer_apiserver_type: haproxy\n  kubeward_healthcheck_ca_file: ${ca.certFile}\n`;
  const parsed = parseInventory({ source: 'inventory.yaml', text: inventory });
  assert.ok(parsed.ok, JSON.stringify(!parsed.ok && parsed.problems));
  const config = renderPlan(parsed.inventory).find((f) => f.path === 'nodes/w1/etc/haproxy/haproxy.cfg');
  assert.ok(config);
  assert.match(config.content, /check check-ssl verify required ca-file /);
  const file = join(ca.dir, 'haproxy.cfg');
  await writeFile(file, config.content);

  let output = '';
  child = spawn('haproxy', ['-f', file, '-db'], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  t.after(() => t.diagnostic(`haproxy output (last 1500 chars): ${output.slice(-1500)}`));

  const [first, second] = standins as [ApiserverStandin, ApiserverStandin];
  await waitFor(async () => (await get(lbPort, ca!.cert)) === 200, { timeoutMs: 10_000, what: 'a request through HAProxy' });
  // Both servers come up through their checks (rise 2 at inter 2s): each one serves some of the requests.
  await waitFor(
    async () => {
      const a = first.requests;
      const b = second.requests;
      for (let i = 0; i < 4; i++) await get(lbPort, ca!.cert);
      return first.requests > a && second.requests > b;
    },
    { timeoutMs: 15_000, intervalMs: 200, what: 'both apiservers receiving requests' },
  );

  first.setReadyz('fail');
  await waitFor(
    async () => {
      const a = first.requests;
      for (let i = 0; i < 4; i++) assert.equal(await get(lbPort, ca!.cert), 200);
      return first.requests === a;
    },
    { timeoutMs: 20_000, intervalMs: 200, what: 'HAProxy marking the apiserver with failing /readyz down' },
  );
  assert.match(output, /is DOWN/, 'HAProxy logged the server down');

  first.setReadyz('ok');
  await waitFor(
    async () => {
      const a = first.requests;
      for (let i = 0; i < 4; i++) await get(lbPort, ca!.cert);
      return first.requests > a;
    },
    { timeoutMs: 20_000, intervalMs: 200, what: 'the recovered apiserver receiving requests again' },
  );
});
