// The kubelet tier: kubeward run the way users run it. The image from `npm run image`, imported
// into containerd; a real kubelet v1.20 whose kubeconfig points at https://127.0.0.1:6443, which
// only the kubeward proxy static pod serves; three real kube-apiservers with the lease endpoint
// reconciler; all in one network namespace (test/kubelet/node-env.sh, ../shared/kubelet/).
// Root only; runs when KUBEWARD_KUBELET_IT=1 (.ci/run sets it once the runtime is installed) and
// writes its step durations to KUBEWARD_KUBELET_IT_REPORT (default /tmp/kubeward-kubelet-it.json),
// which .ci/run checks so that a tier that was set up cannot pass by skipping.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from '../../testkit/wait-for.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
const NODE = process.execPath;
const SHARED = process.env.KUBEWARD_SHARED_DIR ?? join(ROOT, '../shared');
const REPORT = process.env.KUBEWARD_KUBELET_IT_REPORT ?? '/tmp/kubeward-kubelet-it.json';
const enabled = process.env.KUBEWARD_KUBELET_IT === '1';
const skip = enabled
  ? false
  : 'kubelet tier off: needs root, ../shared/kubelet (build.sh, runtime.sh) and KUBEWARD_KUBELET_IT=1; bash .ci/run sets it up (KUBEWARD_KUBELET_IT=0 there skips it)';

interface NodeEnv {
  NETNS: string;
  STATE: string;
  ADDRS: string;
  CA: string;
  TOKEN: string;
  KUBECONFIG: string;
  MANIFESTS: string;
  KUBELET_STATE: string;
  NODE_IP: string;
}

const figures: Record<string, number | string> = {};
function figure(name: string, value: number | string): void {
  figures[name] = value;
  process.stdout.write(`# kubelet tier: ${name} = ${value}\n`);
}
const seconds = (fromMs: number): number => Math.round((performance.now() - fromMs) / 100) / 10;

describe('kubeward on a real kubelet (image, static pods, three apiservers)', { skip, timeout: 20 * 60_000 }, () => {
  let env: NodeEnv;
  let imageRef: string;
  let dir: string;
  const children: ChildProcess[] = [];
  const sh = (cmd: string, args: string[], timeout = 60_000) => run(cmd, args, { timeout, maxBuffer: 16 << 20 });
  const inNs = (args: string[], timeout = 30_000) => sh('ip', ['netns', 'exec', env.NETNS, ...args], timeout);
  const kubectl = async (args: string[], server = 'https://198.51.100.4:6443') =>
    (await inNs(['kubectl', '--kubeconfig', env.KUBECONFIG, '--server', server, '--request-timeout', '5s', ...args])).stdout;

  /** GET /readyz through the node-local proxy, as the kubelet reaches the API. */
  const apiThroughProxy = async (): Promise<boolean> =>
    inNs(['curl', '-fsS', '--max-time', '2', '--cacert', env.CA, 'https://127.0.0.1:6443/readyz']).then(
      () => true,
      () => false,
    );
  /** The node's Ready condition, with a heartbeat at or after `since` (epoch ms) when given. */
  const nodeReady = async (since = 0): Promise<boolean> => {
    const nodes = JSON.parse(await kubectl(['get', 'nodes', '-o', 'json']).catch(() => '{"items":[]}')) as {
      items: { status: { conditions?: { type: string; status: string; lastHeartbeatTime: string }[] } }[];
    };
    const ready = nodes.items[0]?.status.conditions?.find((c) => c.type === 'Ready');
    return ready?.status === 'True' && Date.parse(ready.lastHeartbeatTime) >= Math.floor(since / 1000) * 1000;
  };
  /** Containers of one name in containerd's k8s.io namespace, with their task state. */
  const containers = async (name: string): Promise<{ id: string; running: boolean }[]> => {
    const ids = (await sh('ctr', ['-n', 'k8s.io', 'containers', 'ls', '-q', `labels."io.kubernetes.container.name"==${name}`])).stdout.split('\n').filter(Boolean);
    const tasks = (await sh('ctr', ['-n', 'k8s.io', 'tasks', 'ls'])).stdout;
    return ids.map((id) => ({ id, running: new RegExp(`^${id}\\s+\\d+\\s+RUNNING`, 'm').test(tasks) }));
  };
  const kubeletStart = () =>
    sh('bash', [join(SHARED, 'kubelet/kubelet.sh'), 'start'], 30_000).catch((err: unknown) => assert.fail(`kubelet.sh start: ${String(err)}`));
  // kubelet.sh reads its settings from the environment.
  const setKubeletEnv = () =>
    Object.assign(process.env, { NETNS: env.NETNS, NODE_IP: env.NODE_IP, KUBELET_STATE: env.KUBELET_STATE, KUBELET_CA: env.CA, KUBELET_TOKEN: env.TOKEN, KUBE_TEST_HOME: process.env.KUBE_TEST_HOME ?? '/opt/kube-test' });

  /** deploy/proxy/static-pod.yaml with this run's host paths and image: the manifest users install. */
  const proxyManifest = async (revision: string): Promise<string> => {
    const text = await readFile(join(ROOT, 'deploy/proxy/static-pod.yaml'), 'utf8');
    return text
      .replace('path: /etc/kubeward,', `path: ${dir}/etc-kubeward,`)
      .replace('path: /etc/kubernetes/ssl,', `path: ${dir}/ssl,`)
      .replace('path: /var/lib/kubeward,', `path: ${dir}/var-lib-kubeward,`)
      .replace(/image: localhost\/kubeward:\S+/, `image: ${imageRef}`)
      .replace('  labels:\n', `  annotations:\n    kubeward.io/test-revision: "${revision}"\n  labels:\n`);
  };
  const writeProxyConfig = async (upstreams: string[], extra = ''): Promise<void> => {
    await writeFile(
      join(dir, 'etc-kubeward/proxy.yaml'),
      [
        'adminAddress: "127.0.0.1:9452"',
        'frontends:',
        '  - name: apiserver',
        '    listen: ["127.0.0.1:6443"]',
        `    upstreams: [${upstreams.map((u) => `"${u}:6443"`).join(', ')}]`,
        '    healthCheck: { type: readyz, path: /readyz, caFile: /etc/kubernetes/ssl/ca.crt, interval: 500ms }',
        extra,
      ].join('\n') + '\n',
    );
  };

  before(async () => {
    let t = performance.now();
    const built = await sh('bash', [join(ROOT, 'deploy/image/build-image.sh'), '--no-load'], 10 * 60_000);
    imageRef = built.stdout.trim().split('\n').pop()!;
    figure('image build (s)', seconds(t));
    const meta = JSON.parse(await readFile(join(ROOT, 'build/image', `kubeward-${imageRef.split(':')[1]}.json`), 'utf8')) as { archive: string; compressedBytes: number };
    figure('image compressed (MB)', Math.round(meta.compressedBytes / 1e5) / 10);
    t = performance.now();
    const started = await run('bash', [join(import.meta.dirname, 'node-env.sh'), 'start'], {
      env: { ...process.env, KUBEWARD_SHARED_DIR: SHARED, KW_NODE_STATE: join(tmpdir(), `kw-node-${process.pid}`), KW_NODE_IMAGE: meta.archive },
      timeout: 5 * 60_000,
    });
    env = Object.fromEntries(started.stdout.split('\n').filter((l) => l.includes('=')).map((l) => [l.split('=')[0]!, l.slice(l.indexOf('=') + 1).replace(/^"|"$/g, '')])) as unknown as NodeEnv;
    figure('apiservers + containerd + image import (s)', seconds(t));
    dir = await mkdtemp(join(tmpdir(), 'kw-kubelet-'));
    await mkdir(join(dir, 'etc-kubeward'));
    await mkdir(join(dir, 'ssl'));
    await mkdir(join(dir, 'var-lib-kubeward'));
    await sh('chown', ['65532:65532', join(dir, 'var-lib-kubeward')]);
    await writeFile(join(dir, 'ssl/ca.crt'), await readFile(env.CA));
    setKubeletEnv();
  }, { timeout: 12 * 60_000 });

  after(async () => {
    for (const c of children) c.kill('SIGKILL');
    if (env) await run('bash', [join(import.meta.dirname, 'node-env.sh'), 'stop'], { env: { ...process.env, KUBEWARD_SHARED_DIR: SHARED, KW_NODE_STATE: env.STATE }, timeout: 120_000 }).catch(() => undefined);
    if (dir) await rm(dir, { recursive: true, force: true });
    await rm('/etc/kubeward/proxy.yaml', { force: true }).catch(() => undefined);
    await writeFile(REPORT, JSON.stringify({ ranAt: new Date().toISOString(), image: imageRef, figures }, null, 2) + '\n');
  }, { timeout: 3 * 60_000 });

  test('bootstrap: the kubelet reaches the API only through the proxy static pod, also after every container is killed and the kubelet restarted', { timeout: 5 * 60_000 }, async () => {
    await writeProxyConfig(env.ADDRS.split(' '));
    await writeFile(join(env.MANIFESTS, 'kubeward-proxy.yaml'), await proxyManifest('1'));
    let t = performance.now();
    await kubeletStart();
    await waitFor(apiThroughProxy, { timeoutMs: 120_000, intervalMs: 200, what: 'the API through 127.0.0.1:6443 (the proxy static pod)' });
    figure('first start: kubelet start to API via proxy (s)', seconds(t));
    await waitFor(() => nodeReady(), { timeoutMs: 120_000, intervalMs: 500, what: 'Node Ready' });
    figure('first start: kubelet start to Node Ready (s)', seconds(t));

    // Power-cut: the kubelet and every container gone; nothing serves 127.0.0.1:6443.
    const pid = Number(await readFile(join(env.KUBELET_STATE, 'kubelet.pid'), 'utf8'));
    process.kill(pid, 'SIGKILL');
    await waitFor(() => !existsSync(`/proc/${pid}`), { timeoutMs: 10_000, what: 'the kubelet gone' });
    for (const id of (await sh('ctr', ['-n', 'k8s.io', 'tasks', 'ls', '-q'])).stdout.split('\n').filter(Boolean)) {
      await sh('ctr', ['-n', 'k8s.io', 'tasks', 'kill', '-s', 'SIGKILL', id]).catch(() => undefined);
    }
    await waitFor(async () => !(await sh('ctr', ['-n', 'k8s.io', 'tasks', 'ls'])).stdout.includes('RUNNING'), { timeoutMs: 20_000, what: 'every container stopped' });
    assert.equal(await apiThroughProxy(), false, 'with the proxy killed the node has no API');

    const restartedAt = Date.now();
    t = performance.now();
    await kubeletStart();
    await waitFor(apiThroughProxy, { timeoutMs: 120_000, intervalMs: 200, what: 'the API through the proxy after the restart' });
    figure('restart: kubelet start to API via proxy (s)', seconds(t));
    await waitFor(() => nodeReady(restartedAt), { timeoutMs: 120_000, intervalMs: 500, what: 'Node Ready with a heartbeat after the restart' });
    figure('restart: kubelet start to Node Ready (s)', seconds(t));
  });

  test('upgrade: a changed static pod takes over 127.0.0.1:6443 with zero failed requests from a client polling every 50 ms', { timeout: 5 * 60_000 }, async () => {
    const before = (await containers('kubeward-proxy')).filter((c) => c.running).map((c) => c.id);
    assert.equal(before.length, 1, 'one proxy container runs before the upgrade');
    const poller = spawn('ip', ['netns', 'exec', env.NETNS, NODE, join(import.meta.dirname, 'poll-client.ts'), '--url', 'https://127.0.0.1:6443/readyz', '--ca', env.CA, '--every', '50', '--max-seconds', '240'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(poller);
    let out = '';
    poller.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await new Promise((r) => setTimeout(r, 2000)); // the poller's baseline before the change
    const t = performance.now();
    await writeFile(join(env.MANIFESTS, 'kubeward-proxy.yaml'), await proxyManifest('2'));
    await waitFor(async () => (await containers('kubeward-proxy')).some((c) => c.running && !before.includes(c.id)), { timeoutMs: 120_000, intervalMs: 100, what: 'the new proxy container running' });
    figure('upgrade: manifest change to new container running (s)', seconds(t));
    await waitFor(async () => !(await containers('kubeward-proxy')).some((c) => c.running && before.includes(c.id)), { timeoutMs: 120_000, intervalMs: 200, what: 'the old proxy container gone' });
    figure('upgrade: manifest change to old container gone (s)', seconds(t));
    await new Promise((r) => setTimeout(r, 1000));
    poller.kill('SIGTERM');
    await new Promise((r) => poller.once('exit', r));
    const result = JSON.parse(out.trim()) as { sent: number; ok: number; failed: number; failures: unknown[]; longestGapMs: number };
    figure('upgrade: requests sent', result.sent);
    figure('upgrade: requests failed', result.failed);
    figure('upgrade: longest gap between two answers (ms)', result.longestGapMs);
    assert.ok(result.sent > 100, `the poller ran through the upgrade (${result.sent} requests)`);
    assert.equal(result.failed, 0, `failed requests during the upgrade: ${JSON.stringify(result.failures)}`);
    assert.ok(await nodeReady(), 'the Node is Ready after the upgrade');
  });

  test('what plan renders runs: the worker static pod from `kubeward plan render` is started unchanged and serves', { timeout: 5 * 60_000 }, async () => {
    const planDir = join(dir, 'plan');
    const [tagRepo, tag] = [imageRef.slice(0, imageRef.lastIndexOf(':')), imageRef.slice(imageRef.lastIndexOf(':') + 1)];
    await mkdir(planDir, { recursive: true });
    const addrs = env.ADDRS.split(' ');
    await writeFile(
      join(planDir, 'inventory.yaml'),
      [
        'hosts:',
        ...addrs.map((a, i) => `  cp${i + 1}: {ip: ${a}}`),
        `  node1: {ip: ${env.NODE_IP}}`,
        'groups:',
        '  kube_control_plane: [cp1, cp2, cp3]',
        '  etcd: [cp1, cp2, cp3]',
        '  kube_node: [node1]',
        'vars:',
        '  loadbalancer_apiserver_type: kubeward',
        `  kube_cert_dir: ${dir}/ssl`,
        `  kubeward_image_repo: ${tagRepo}`,
        `  kubeward_image_tag: "${tag}"`,
      ].join('\n') + '\n',
    );
    await sh(NODE, [join(ROOT, 'src/cli/main.ts'), 'plan', 'render', '--inventory', join(planDir, 'inventory.yaml'), '--out', join(planDir, 'out')]);
    const rendered = join(planDir, 'out/nodes/node1');
    const manifest = await readFile(join(rendered, 'etc/kubernetes/manifests/kubeward-proxy.yaml'), 'utf8');
    assert.match(manifest, new RegExp(`image: ${imageRef.replace(/[.]/g, '\\.')}`));
    // The rendered pod binds without SO_REUSEPORT: take the previous proxy out first.
    await rm(join(env.MANIFESTS, 'kubeward-proxy.yaml'));
    await waitFor(async () => !(await containers('kubeward-proxy')).some((c) => c.running), { timeoutMs: 120_000, intervalMs: 200, what: 'the previous proxy gone' });
    assert.ok(!existsSync('/etc/kubeward/proxy.yaml'), '/etc/kubeward/proxy.yaml exists on this machine; the test does not overwrite it');
    await mkdir('/etc/kubeward', { recursive: true });
    await writeFile('/etc/kubeward/proxy.yaml', await readFile(join(rendered, 'etc/kubeward/proxy.yaml')));
    const t = performance.now();
    await writeFile(join(env.MANIFESTS, 'kubeward-proxy.yaml'), manifest);
    await waitFor(apiThroughProxy, { timeoutMs: 120_000, intervalMs: 200, what: 'the API through the plan-rendered proxy' });
    figure('plan-rendered pod: manifest to API via proxy (s)', seconds(t));
    const admin = await inNs(['curl', '-fsS', '--max-time', '2', 'http://127.0.0.1:9452/readyz']);
    assert.match(admin.stdout, /^ready/);
    await waitFor(() => nodeReady(Date.now() - 1000), { timeoutMs: 60_000, intervalMs: 500, what: 'Node Ready through the rendered pod' });
  });
});
