// The etcd frontend in front of a real three-member etcd cluster (Debian's etcd-server) on loopback
// ports with client TLS: etcdctl through the proxy keeps working while the members are stopped
// and started one at a time. Every etcd started here is killed by PID and its data dir deleted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TestContext } from 'node:test';
import { createTestCa, type CertPair, type TestCa } from '../../testkit/certs.ts';
import { freePorts, waitFor } from '../../testkit/wait-for.ts';
import { frontendConfig, listenPort, startTestProxy, upstreamState, waitForState } from './proxy-fixtures.ts';

const ETCD = '/usr/bin/etcd';
const ETCDCTL = '/usr/bin/etcdctl';
const run = promisify(execFile);

const missing = await Promise.all(
  [ETCD, ETCDCTL].map((f) =>
    access(f).then(
      () => undefined,
      () => f,
    ),
  ),
);
const skip = missing.some(Boolean) ? `needs ${missing.filter(Boolean).join(' and ')}: apt-get install etcd-server etcd-client` : false;

interface Member {
  name: string;
  clientPort: number;
  peerPort: number;
  dataDir: string;
  child?: ChildProcess;
  log: string;
}

class EtcdCluster {
  readonly members: Member[];
  readonly #ca: TestCa;
  readonly #server: CertPair;

  constructor(members: Member[], ca: TestCa, server: CertPair) {
    this.members = members;
    this.#ca = ca;
    this.#server = server;
  }

  start(m: Member): void {
    const initial = this.members.map((x) => `${x.name}=http://127.0.0.1:${x.peerPort}`).join(',');
    const args = [
      '--name',
      m.name,
      '--data-dir',
      m.dataDir,
      '--listen-client-urls',
      `https://127.0.0.1:${m.clientPort}`,
      '--advertise-client-urls',
      `https://127.0.0.1:${m.clientPort}`,
      '--listen-peer-urls',
      `http://127.0.0.1:${m.peerPort}`,
      '--initial-advertise-peer-urls',
      `http://127.0.0.1:${m.peerPort}`,
      '--initial-cluster',
      initial,
      '--initial-cluster-token',
      'kubeward-proxy-test',
      '--initial-cluster-state',
      'new',
      '--cert-file',
      this.#server.certFile,
      '--key-file',
      this.#server.keyFile,
      '--client-cert-auth',
      '--trusted-ca-file',
      this.#ca.certFile,
      // Fast elections so a stopped leader is replaced in well under a second.
      '--heartbeat-interval',
      '50',
      '--election-timeout',
      '500',
      '--log-level',
      'warn',
      '--logger',
      'zap',
    ];
    m.log = '';
    m.child = spawn(ETCD, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    m.child.stderr!.setEncoding('utf8').on('data', (d: string) => (m.log = (m.log + d).slice(-4000)));
  }

  async stop(m: Member, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = m.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    await exited;
  }

  async destroy(): Promise<void> {
    for (const m of this.members) {
      await this.stop(m, 'SIGKILL');
      await rm(m.dataDir, { recursive: true, force: true });
    }
  }
}

async function etcdctl(ca: TestCa, client: CertPair, port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run(
    ETCDCTL,
    [
      '--endpoints',
      `https://127.0.0.1:${port}`,
      '--cacert',
      ca.certFile,
      '--cert',
      client.certFile,
      '--key',
      client.keyFile,
      '--dial-timeout',
      '3s',
      '--command-timeout',
      '5s',
      ...args,
    ],
    { env: { ...process.env, ETCDCTL_API: '3' }, timeout: 10_000 },
  );
  return stdout.trim();
}

async function startCluster(t: TestContext, ca: TestCa, server: CertPair): Promise<EtcdCluster> {
  const base = await mkdtemp(join(tmpdir(), 'kw-etcd-'));
  const members: Member[] = [];
  // Fixed ports stay: each member's peer and client URLs go into every member's --initial-cluster
  // before any of them starts, so etcd cannot pick its own ports.
  // All six at once (freePorts): ports taken one by one can come back equal, and etcd refuses a duplicate URL.
  const ports = await freePorts(6);
  for (let i = 0; i < 3; i++) members.push({ name: `m${i}`, clientPort: ports[2 * i]!, peerPort: ports[2 * i + 1]!, dataDir: join(base, `m${i}`), log: '' });
  const cluster = new EtcdCluster(members, ca, server);
  t.after(async () => {
    await cluster.destroy();
    await rm(base, { recursive: true, force: true });
  });
  for (const m of members) cluster.start(m);
  return cluster;
}

test('etcdctl through the proxy keeps working while etcd members are stopped and started one at a time', { skip }, async (t) => {
  const ca = await createTestCa('etcd-ca');
  t.after(() => ca.close());
  const server = await ca.issueServer('etcd-server', ['DNS:localhost', 'IP:127.0.0.1']);
  const client = await ca.issueClient('etcd-client', 'root');
  const cluster = await startCluster(t, ca, server);
  const upstreams = cluster.members.map((m) => ({ host: '127.0.0.1', port: m.clientPort }));
  const proxy = await startTestProxy(t, [
    frontendConfig(
      upstreams,
      { name: 'etcd', connectTimeoutMs: 500 },
      {
        type: 'readyz',
        path: '/health',
        caFile: ca.certFile,
        clientCert: client.certFile,
        clientKey: client.keyFile,
        intervalMs: 250,
        timeoutMs: 1000,
        rise: 2,
        fall: 2,
      },
    ),
  ]);
  const port = listenPort(proxy, 'etcd');
  const stateOf = (i: number) => upstreamState(proxy, upstreams[i]!, 'etcd').state;
  await waitFor(() => [0, 1, 2].every((i) => stateOf(i) === 'up'), {
    timeoutMs: 20_000,
    what: `all members healthy through the proxy's checks; logs: ${cluster.members.map((m) => m.log.slice(-300)).join(' | ')}`,
  });
  assert.equal(await etcdctl(ca, client, port, 'put', 'kubeward/probe', 'v0'), 'OK');

  let ops = 0;
  for (const [i, m] of cluster.members.entries()) {
    await cluster.stop(m);
    // Straight after the stop: the proxy may still think the member is up; a refused connect is retried.
    for (let k = 0; k < 3; k++) {
      const value = `v${i}-${k}`;
      assert.equal(await etcdctl(ca, client, port, 'put', 'kubeward/probe', value), 'OK', `put with ${m.name} stopped`);
      assert.equal(await etcdctl(ca, client, port, 'get', 'kubeward/probe', '--print-value-only'), value);
      ops += 2;
    }
    await waitForState(proxy, upstreams[i]!, 'down', 5000, 'etcd');
    cluster.start(m);
    await waitFor(() => stateOf(i) === 'up', { timeoutMs: 20_000, what: `${m.name} back up; log: ${m.log.slice(-500)}` });
  }
  const stats = proxy.stats()[0]!;
  t.diagnostic(`${ops} etcdctl operations through the proxy, ${stats.failed} client failures, ${stats.retries} retries`);
  assert.equal(stats.failed, 0);
  assert.deepEqual([0, 1, 2].map(stateOf), ['up', 'up', 'up']);
});
