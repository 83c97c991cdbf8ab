// A `kubeward proxy` config rendered by `kubeward plan` is started for real: it must load, become
// ready through its verified /readyz checks, carry TLS to an apiserver stand-in, and stop sending
// new connections to an apiserver whose /readyz fails.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { join } from 'node:path';
import { createTestCa, type TestCa } from '../testkit/certs.ts';
import { ApiserverStandin } from '../testkit/apiserver-standin.ts';
import { freePorts, waitFor } from '../testkit/wait-for.ts';
import { MAIN, NODE } from '../testkit/kubeward-process.ts';
import { parseInventory } from '../src/plan/parse-inventory.ts';
import { renderPlan } from '../src/plan/render-plan.ts';

let ca: TestCa;
const standins: ApiserverStandin[] = [];
let child: ChildProcess | undefined;
let output = '';

before(async () => {
  ca = await createTestCa('plan-proxy-ca');
});

after(async () => {
  if (child?.pid !== undefined && child.exitCode === null) {
    const exited = new Promise((r) => child!.once('exit', r));
    process.kill(child.pid, 'SIGTERM');
    await exited;
  }
  await Promise.all(standins.map((s) => s.close()));
  await ca.close();
});

function get(port: number, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, ca: ca.cert, agent: false, timeout: 3000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

test('a rendered kubeward proxy config starts, proxies TLS to the apiservers and avoids one whose /readyz fails', async (t) => {
  // Fixed ports stay for these two: they are written into the inventory and the rendered config
  // under test, which refuse port 0.
  const [lbPort, adminPort] = (await freePorts(2)) as [number, number];
  const cert = await ca.issueServer('apiserver', ['DNS:localhost', 'IP:127.0.0.1', 'IP:127.0.0.2', 'IP:127.0.0.3']);
  // The first apiserver binds port 0; the second takes the same port on its own address.
  let apiPort = 0;
  for (const host of ['127.0.0.2', '127.0.0.3']) {
    const s = new ApiserverStandin({ cert: cert.cert, key: cert.key, host, port: apiPort, name: host });
    await s.open();
    standins.push(s);
    apiPort = s.port;
  }
  const inventory = [
    'hosts:',
    '  cp1: {ip: 127.0.0.2}',
    '  cp2: {ip: 127.0.0.3}',
    '  w1: {ip: 10.0.0.21}',
    'groups:',
    '  kube_control_plane: [cp1, cp2]',
    '  kube_node: [w1]',
    'vars:',
    `  kube_apiserver_port: ${apiPort}`,
    `  loadbalancer_apiserver_port: ${lbPort}`,
    '  loadbalancer_apiserver_type: kubeward',
    `  loadbalancer_apiserver_healthcheck_port: ${adminPort}`,
    `  kubeward_healthcheck_ca_file: ${ca.certFile}`,
  ].join('\n');
  const parsed = parseInventory({ source: 'inventory.yaml', text: inventory });
  assert.ok(parsed.ok, JSON.stringify(!parsed.ok && parsed.problems));
  const config = renderPlan(parsed.inventory).find((f) => f.path === 'nodes/w1/etc/kubeward/proxy.yaml');
  assert.ok(config, 'the worker gets a kubeward proxy config');
  const configFile = join(ca.dir, 'proxy.yaml');
  await writeFile(configFile, config.content);

  child = spawn(NODE, [MAIN, 'proxy', '--config', configFile, '--log-format', 'text'], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  t.after(() => t.diagnostic(`proxy output (last 2000 chars): ${output.slice(-2000)}`));

  await waitFor(async () => (await fetch(`http://127.0.0.1:${adminPort}/readyz`)).status === 200, {
    timeoutMs: 15_000,
    what: 'proxy /readyz on the rendered admin address',
  });
  assert.equal(await get(lbPort, '/version'), 200, 'HTTPS through the proxy, verified against the cluster CA as 127.0.0.1');

  const [first, second] = standins as [ApiserverStandin, ApiserverStandin];
  first.setReadyz('fail');
  // Once the readyz checks mark the first apiserver down (rise/fall 2 at 1s), no new request reaches it.
  await waitFor(
    async () => {
      const before = first.requests;
      for (let i = 0; i < 4; i++) assert.equal(await get(lbPort, '/version'), 200);
      return first.requests === before;
    },
    { timeoutMs: 15_000, intervalMs: 200, what: 'four requests in a row avoiding the apiserver whose /readyz fails' },
  );
  const secondBefore = second.requests;
  assert.equal(await get(lbPort, '/version'), 200);
  assert.ok(second.requests > secondBefore, 'the healthy apiserver serves');
});
