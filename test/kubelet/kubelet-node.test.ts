// The kubelet tier: kubeward run the way users run it. The image from `npm run image -- --push`,
// pushed to a registry on the node's loopback and pulled from there; a real kubelet v1.20 whose kubeconfig points at https://127.0.0.1:6443, which
// only the kubeward proxy static pod serves; three real kube-apiservers with the lease endpoint
// reconciler; all in one network namespace (test/kubelet/node-env.sh, ../shared/kubelet/).
// Root only; runs when KUBEWARD_KUBELET_IT=1 (.ci/run sets it once the runtime is installed) and
// writes its step durations to KUBEWARD_KUBELET_IT_REPORT (default /tmp/kubeward-kubelet-it.json),
// which .ci/run checks so that a tier that was set up cannot pass by skipping.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, watch } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from '../../testkit/wait-for.ts';
import { KUBEWARD_IMAGE } from '../../src/manifests/kubeward-image.ts';
import { adaptManifest } from './adapt-manifest.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
const NODE = process.execPath;
const SHARED = process.env.KUBEWARD_SHARED_DIR ?? join(ROOT, '../shared');
const REPORT = process.env.KUBEWARD_KUBELET_IT_REPORT ?? '/tmp/kubeward-kubelet-it.json';
const enabled = process.env.KUBEWARD_KUBELET_IT === '1';
const skip = enabled
  ? false
  : 'kubelet tier off: needs root, ../shared/kubelet (build.sh, runtime.sh) and KUBEWARD_KUBELET_IT=1; bash .ci/run sets it up (KUBEWARD_KUBELET_IT=0 there skips it)';

// deploy/operator is a kustomize v4+ layout (kubectl 1.21+); Debian's kubectl 1.20 has v2.0.3.
const kustomizeVersion = await run('kubectl', ['version', '--client', '-o', 'json']).then(
  (r) => (JSON.parse(r.stdout) as { kustomizeVersion?: string }).kustomizeVersion ?? '',
  () => '',
);
const kustomizeOld =
  Number(/^v(\d+)/.exec(kustomizeVersion)?.[1] ?? 0) < 4
    ? `kubectl's kustomize is ${kustomizeVersion || 'missing'}; deploy/operator needs v4+ (kubectl 1.21+)`
    : false;

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
  REGISTRY: string;
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
  let createdEtcKubeward = false;
  const sh = (cmd: string, args: string[], timeout = 60_000) => run(cmd, args, { timeout, maxBuffer: 16 << 20 });
  const inNs = (args: string[], timeout = 30_000) => sh('ip', ['netns', 'exec', env.NETNS, ...args], timeout);
  // The admin client's apiserver; the control-plane tests replace every apiserver and move it to the proxy.
  let adminServer = 'https://198.51.100.4:6443';
  const kubectl = async (args: string[], server = adminServer) =>
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
    const ids = (await sh('ctr', ['-n', 'k8s.io', 'containers', 'ls', '-q', `labels."io.kubernetes.container.name"==${name}`])).stdout
      .split('\n')
      .filter(Boolean);
    const tasks = (await sh('ctr', ['-n', 'k8s.io', 'tasks', 'ls'])).stdout;
    return ids.map((id) => ({ id, running: new RegExp(`^${id}\\s+\\d+\\s+RUNNING`, 'm').test(tasks) }));
  };
  interface UpstreamView {
    upstream: string;
    state: string;
    backup?: boolean;
    active: number;
    total?: number;
  }
  /**
   * A daemon's /status needs its admin token: the file it created in its pod's emptyDir
   * (--admin-token-file /run/kubeward/<mode>.token), read as root through /proc/<pid>/root.
   */
  const statusOf = async (container: string, mode: string, port: number): Promise<string> => {
    // During a hand-over two pods share the admin port (--reuse-port): try each one's token.
    const tasks = (await sh('ctr', ['-n', 'k8s.io', 'tasks', 'ls'])).stdout;
    let last: unknown = new Error(`no running ${container} container`);
    for (const c of (await containers(container)).filter((x) => x.running)) {
      const pid = new RegExp(`^${c.id}\\s+(\\d+)\\s`, 'm').exec(tasks)?.[1];
      if (!pid) continue;
      try {
        const token = (await readFile(`/proc/${pid}/root/run/kubeward/${mode}.token`, 'utf8')).trim();
        return (await inNs(['curl', '-fsS', '--max-time', '2', '-H', `Authorization: Bearer ${token}`, `http://127.0.0.1:${port}/status`])).stdout;
      } catch (err) {
        last = err;
      }
    }
    throw last;
  };
  /** The proxy's /status (admin listener on the node's loopback): the apiserver frontend's upstreams. */
  const proxyUpstreams = async (): Promise<UpstreamView[]> => {
    const out = await statusOf('kubeward-proxy', 'proxy', 9452).catch(() => '{"frontends":[]}');
    // /status gives each upstream's connections as { active, established, total }.
    type Raw = Omit<UpstreamView, 'active' | 'total'> & { connections: { active: number; total: number } };
    const status = JSON.parse(out) as { frontends: { upstreams: Raw[] }[] };
    return (status.frontends[0]?.upstreams ?? []).map(({ connections, ...u }) => ({ ...u, active: connections.active, total: connections.total }));
  };
  /** Every upstream's connection total, from /metrics (kubeward_proxy_upstream_connections_total). */
  const connectionTotals = async (): Promise<Map<string, number>> => {
    const out = await inNs(['curl', '-fsS', '--max-time', '2', 'http://127.0.0.1:9452/metrics']).then(
      (r) => r.stdout,
      () => '',
    );
    const totals = new Map<string, number>();
    for (const m of out.matchAll(/^kubeward_proxy_upstream_connections_total\{[^}]*upstream="([^"]+)"[^}]*\} (\d+)/gm))
      totals.set(m[1]!, (totals.get(m[1]!) ?? 0) + Number(m[2]));
    return totals;
  };
  /** The command line of apiserver i (1-based), to start it again after a kill. */
  const apiserverArgv = async (i: number): Promise<{ pid: number; argv: string[] }> => {
    const pid = Number(await readFile(join(env.STATE, `multi/kube-apiserver-${i}.pid`), 'utf8'));
    const argv = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter(Boolean);
    return { pid, argv };
  };
  const respawnApiserver = async (i: number, argv: string[]): Promise<void> => {
    const { openSync } = await import('node:fs');
    const log = openSync(join(env.STATE, `multi/logs/kube-apiserver-${i}.restarted.log`), 'a');
    const child = spawn('ip', ['netns', 'exec', env.NETNS, ...argv], { detached: true, stdio: ['ignore', log, log] });
    child.unref();
    await writeFile(join(env.STATE, `multi/kube-apiserver-${i}.pid`), String(child.pid));
  };
  const nodeName = async (): Promise<string> => (await kubectl(['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}'])).trim();
  const kubeletStart = () =>
    sh('bash', [join(SHARED, 'kubelet/kubelet.sh'), 'start'], 30_000).catch((err: unknown) => assert.fail(`kubelet.sh start: ${String(err)}`));
  // kubelet.sh reads its settings from the environment.
  const setKubeletEnv = () =>
    Object.assign(process.env, {
      NETNS: env.NETNS,
      NODE_IP: env.NODE_IP,
      KUBELET_STATE: env.KUBELET_STATE,
      KUBELET_CA: env.CA,
      KUBELET_TOKEN: env.TOKEN,
      KUBE_TEST_HOME: process.env.KUBE_TEST_HOME ?? '/opt/kube-test',
    });

  /** deploy/proxy/static-pod.yaml with this run's host paths and image: the manifest users install. */
  const proxyManifest = async (revision: string): Promise<string> =>
    adaptManifest(await readFile(join(ROOT, 'deploy/proxy/static-pod.yaml'), 'utf8'), {
      image: imageRef,
      hostPaths: { '/etc/kubeward': `${dir}/etc-kubeward`, '/etc/kubernetes/ssl': `${dir}/ssl`, '/var/lib/kubeward': `${dir}/var-lib-kubeward` },
      annotations: { 'kubeward.io/test-revision': revision },
    }).yaml;
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

  before(
    async () => {
      let t = performance.now();
      const started = await run('bash', [join(import.meta.dirname, 'node-env.sh'), 'start'], {
        env: { ...process.env, KUBEWARD_SHARED_DIR: SHARED, KW_NODE_STATE: join(tmpdir(), `kw-node-${process.pid}`) },
        timeout: 5 * 60_000,
      });
      env = Object.fromEntries(
        started.stdout
          .split('\n')
          .filter((l) => l.includes('='))
          .map((l) => [l.split('=')[0]!, l.slice(l.indexOf('=') + 1).replace(/^"|"$/g, '')]),
      ) as unknown as NodeEnv;
      figure('apiservers + containerd + registry (s)', seconds(t));
      // npm run image -- --push, as a user runs it, inside the node's namespace where the registry listens.
      t = performance.now();
      const built = await sh(
        'ip',
        ['netns', 'exec', env.NETNS, 'bash', join(ROOT, 'deploy/image/build-image.sh'), '--no-load', '--push', env.REGISTRY],
        10 * 60_000,
      );
      imageRef = built.stdout.trim().split('\n').pop()!;
      assert.match(imageRef, new RegExp(`^${env.REGISTRY.replace(/[.]/g, '\\.')}/kubeward:`), 'the last line is the pushed reference');
      figure('image build and push (s)', seconds(t));
      const meta = JSON.parse(await readFile(join(ROOT, 'build/image', `kubeward-${imageRef.split(':').pop()!}.json`), 'utf8')) as {
        archive: string;
        compressedBytes: number;
      };
      figure('image compressed (MB)', Math.round(meta.compressedBytes / 1e5) / 10);
      const tags = JSON.parse((await sh('tar', ['-xOf', meta.archive, './manifest.json'])).stdout) as { RepoTags: string[] }[];
      assert.ok(tags[0]!.RepoTags.includes(KUBEWARD_IMAGE), `the build tags ${KUBEWARD_IMAGE}, the image every manifest names`);
      const listed = (await inNs(['curl', '-fsS', `http://${env.REGISTRY}/v2/kubeward/tags/list`])).stdout;
      assert.deepEqual((JSON.parse(listed) as { tags: string[] }).tags.sort(), [imageRef.split(':').pop()!, KUBEWARD_IMAGE.split(':').pop()!].sort());
      dir = await mkdtemp(join(tmpdir(), 'kw-kubelet-'));
      await mkdir(join(dir, 'etc-kubeward'));
      await mkdir(join(dir, 'ssl'));
      await mkdir(join(dir, 'var-lib-kubeward'));
      await sh('chown', ['65532:65532', join(dir, 'var-lib-kubeward')]);
      await writeFile(join(dir, 'ssl/ca.crt'), await readFile(env.CA));
      setKubeletEnv();
    },
    { timeout: 12 * 60_000 },
  );

  after(
    async () => {
      for (const c of children) c.kill('SIGKILL');
      if (env)
        await run('bash', [join(import.meta.dirname, 'node-env.sh'), 'stop'], {
          env: { ...process.env, KUBEWARD_SHARED_DIR: SHARED, KW_NODE_STATE: env.STATE },
          timeout: 120_000,
        }).catch(() => undefined);
      if (dir) await rm(dir, { recursive: true, force: true });
      await rm('/etc/kubeward/proxy.yaml', { force: true }).catch(() => undefined);
      if (createdEtcKubeward) await rmdir('/etc/kubeward').catch(() => undefined);
      await writeFile(REPORT, JSON.stringify({ ranAt: new Date().toISOString(), image: imageRef, figures }, null, 2) + '\n');
    },
    { timeout: 3 * 60_000 },
  );

  test(
    'bootstrap: the kubelet reaches the API only through the proxy static pod, also after every container is killed and the kubelet restarted',
    { timeout: 5 * 60_000 },
    async () => {
      await writeProxyConfig(env.ADDRS.split(' '));
      await writeFile(join(env.MANIFESTS, 'kubeward-proxy.yaml'), await proxyManifest('1'));
      let t = performance.now();
      await kubeletStart();
      await waitFor(apiThroughProxy, { timeoutMs: 120_000, intervalMs: 200, what: 'the API through 127.0.0.1:6443 (the proxy static pod)' });
      figure('first start: kubelet start to API via proxy (s)', seconds(t));
      await waitFor(() => nodeReady(), { timeoutMs: 120_000, intervalMs: 500, what: 'Node Ready' });
      figure('first start: kubelet start to Node Ready (s)', seconds(t));
      // Nothing was imported: containerd has the image because the kubelet pulled it from the registry.
      assert.ok((await sh('ctr', ['-n', 'k8s.io', 'images', 'ls', '-q'])).stdout.split('\n').includes(imageRef), `containerd pulled ${imageRef}`);
      const status = JSON.parse(await statusOf('kubeward-proxy', 'proxy', 9452)) as { relay: string };
      assert.equal(status.relay, 'native', 'the image carries the C relay (dist/native) and the proxy pod runs it, not a fallback');

      // Power-cut: the kubelet and every container gone; nothing serves 127.0.0.1:6443.
      const pid = Number(await readFile(join(env.KUBELET_STATE, 'kubelet.pid'), 'utf8'));
      process.kill(pid, 'SIGKILL');
      await waitFor(() => !existsSync(`/proc/${pid}`), { timeoutMs: 10_000, what: 'the kubelet gone' });
      for (const id of (await sh('ctr', ['-n', 'k8s.io', 'tasks', 'ls', '-q'])).stdout.split('\n').filter(Boolean)) {
        await sh('ctr', ['-n', 'k8s.io', 'tasks', 'kill', '-s', 'SIGKILL', id]).catch(() => undefined);
      }
      await waitFor(async () => !(await sh('ctr', ['-n', 'k8s.io', 'tasks', 'ls'])).stdout.includes('RUNNING'), {
        timeoutMs: 20_000,
        what: 'every container stopped',
      });
      assert.equal(await apiThroughProxy(), false, 'with the proxy killed the node has no API');

      const restartedAt = Date.now();
      t = performance.now();
      await kubeletStart();
      await waitFor(apiThroughProxy, { timeoutMs: 120_000, intervalMs: 200, what: 'the API through the proxy after the restart' });
      figure('restart: kubelet start to API via proxy (s)', seconds(t));
      await waitFor(() => nodeReady(restartedAt), { timeoutMs: 120_000, intervalMs: 500, what: 'Node Ready with a heartbeat after the restart' });
      figure('restart: kubelet start to Node Ready (s)', seconds(t));
    },
  );

  test(
    'upgrade: a changed static pod takes over 127.0.0.1:6443 with zero failed requests from a client polling every 50 ms',
    { timeout: 5 * 60_000 },
    async () => {
      const before = (await containers('kubeward-proxy')).filter((c) => c.running).map((c) => c.id);
      assert.equal(before.length, 1, 'one proxy container runs before the upgrade');
      const poller = spawn(
        'ip',
        [
          'netns',
          'exec',
          env.NETNS,
          NODE,
          join(import.meta.dirname, 'poll-client.ts'),
          '--url',
          'https://127.0.0.1:6443/readyz',
          '--ca',
          env.CA,
          '--every',
          '50',
          '--max-seconds',
          '240',
        ],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      children.push(poller);
      let out = '';
      poller.stdout.on('data', (d: Buffer) => (out += d.toString()));
      await new Promise((r) => setTimeout(r, 2000)); // the poller's baseline before the change
      const t = performance.now();
      await writeFile(join(env.MANIFESTS, 'kubeward-proxy.yaml'), await proxyManifest('2'));
      await waitFor(async () => (await containers('kubeward-proxy')).some((c) => c.running && !before.includes(c.id)), {
        timeoutMs: 120_000,
        intervalMs: 100,
        what: 'the new proxy container running',
      });
      figure('upgrade: manifest change to new container running (s)', seconds(t));
      await waitFor(async () => !(await containers('kubeward-proxy')).some((c) => c.running && before.includes(c.id)), {
        timeoutMs: 120_000,
        intervalMs: 200,
        what: 'the old proxy container gone',
      });
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
    },
  );

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
    // kubespray's file name (nginx-proxy.yml, haproxy.yml), so it replaces kubespray's pod on a kubespray node.
    const manifest = await readFile(join(rendered, 'etc/kubernetes/manifests/kubeward-proxy.yml'), 'utf8');
    assert.match(manifest, /--handover-socket=/, 'the rendered pod hands over like deploy/proxy/static-pod.yaml');
    assert.match(manifest, new RegExp(`image: ${imageRef.replace(/[.]/g, '\\.')}\\n`), "plan names the inventory's image");
    // A fresh start of the rendered pod (not an upgrade): take the previous proxy out first.
    await rm(join(env.MANIFESTS, 'kubeward-proxy.yaml'));
    await waitFor(async () => !(await containers('kubeward-proxy')).some((c) => c.running), {
      timeoutMs: 120_000,
      intervalMs: 200,
      what: 'the previous proxy gone',
    });
    assert.ok(!existsSync('/etc/kubeward/proxy.yaml'), '/etc/kubeward/proxy.yaml exists on this machine; the test does not overwrite it');
    createdEtcKubeward = !existsSync('/etc/kubeward');
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
  test(
    'discovery and failover: seeded with one apiserver, the proxy finds all three; two killed, the node keeps its lease and Ready, watches come back, the killed ones get connections again',
    { timeout: 6 * 60_000 },
    async () => {
      const addrs = env.ADDRS.split(' ');
      // From the plan-rendered pod back to deploy/proxy, now with discovery, as a fresh start.
      await rm(join(env.MANIFESTS, 'kubeward-proxy.yaml'));
      await waitFor(async () => !(await containers('kubeward-proxy')).some((c) => c.running), {
        timeoutMs: 120_000,
        intervalMs: 200,
        what: 'the plan-rendered proxy gone',
      });
      await rm('/etc/kubeward/proxy.yaml', { force: true });
      // Discovery reads default/kubernetes through the proxy's own frontend with this kubeconfig.
      await writeFile(join(dir, 'etc-kubeward/kubeconfig'), await readFile(env.KUBECONFIG), { mode: 0o644 });
      await writeProxyConfig([addrs[0]!], '    discovery: kubernetes\n    kubeconfig: /etc/kubeward/kubeconfig\n    discoveryDebounce: 500ms');
      let t = performance.now();
      await writeFile(join(env.MANIFESTS, 'kubeward-proxy.yaml'), await proxyManifest('3'));
      const discoveredUp = (us: UpstreamView[], a: string) => us.some((u) => u.upstream === `${a}:6443` && u.state === 'up' && !u.backup);
      await waitFor(
        async () => {
          const us = await proxyUpstreams();
          return addrs.every((a) => discoveredUp(us, a));
        },
        { timeoutMs: 120_000, intervalMs: 500, what: 'all three apiservers discovered and up' },
      );
      figure('discovery: manifest to three discovered upstreams up (s)', seconds(t));
      const cache = JSON.parse(await readFile(join(dir, 'var-lib-kubeward/proxy-upstreams.json'), 'utf8')) as unknown;
      assert.match(JSON.stringify(cache), new RegExp(addrs[2]!.replace(/\./g, '\\.')), 'the discovered list is cached on the host');

      const watcher = spawn(
        'ip',
        [
          'netns',
          'exec',
          env.NETNS,
          NODE,
          join(import.meta.dirname, 'watch-client.ts'),
          '--server',
          'https://127.0.0.1:6443',
          '--ca',
          env.CA,
          '--token-file',
          env.TOKEN,
          '--namespace',
          'default',
          '--count',
          '6',
          '--max-seconds',
          '300',
        ],
        {
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      children.push(watcher);
      const events: { w: number; ev: string; name?: string }[] = [];
      let partial = '';
      watcher.stdout.on('data', (d: Buffer) => {
        const lines = (partial + d.toString()).split('\n');
        partial = lines.pop()!;
        for (const l of lines) if (l) events.push(JSON.parse(l) as { w: number; ev: string; name?: string });
      });
      await waitFor(() => new Set(events.filter((e) => e.ev === 'established').map((e) => e.w)).size === 6, {
        timeoutMs: 30_000,
        intervalMs: 100,
        what: 'six watches through the proxy',
      });

      // Two of three apiservers killed, the seed among them.
      const killed = [await apiserverArgv(1), await apiserverArgv(2)];
      const node = await nodeName();
      const killedAt = Date.now();
      t = performance.now();
      for (const k of killed) process.kill(k.pid, 'SIGKILL');
      await waitFor(
        async () => {
          const us = await proxyUpstreams();
          return [addrs[0], addrs[1]].every((a) => us.find((u) => u.upstream === `${a}:6443`)?.state === 'down');
        },
        { timeoutMs: 30_000, intervalMs: 200, what: 'the killed apiservers marked down' },
      );
      figure('failover: kill to both marked down (s)', seconds(t));
      await waitFor(
        async () => Date.parse((await kubectl(['-n', 'kube-node-lease', 'get', 'lease', node, '-o', 'jsonpath={.spec.renewTime}'])).trim()) > killedAt,
        {
          timeoutMs: 60_000,
          intervalMs: 500,
          what: 'the node lease renewed after the kill',
        },
      );
      figure('failover: kill to node lease renewed (s)', seconds(t));
      await waitFor(() => nodeReady(killedAt), { timeoutMs: 60_000, intervalMs: 500, what: 'Node Ready with a heartbeat after the kill' });
      figure('failover: kill to Ready heartbeat (s)', seconds(t));
      await kubectl(['-n', 'default', 'create', 'configmap', 'kw-after-failover', '--from-literal=k=v']);
      await waitFor(() => new Set(events.filter((e) => e.ev === 'object' && e.name === 'kw-after-failover').map((e) => e.w)).size === 6, {
        timeoutMs: 60_000,
        intervalMs: 200,
        what: 'every watch delivers the ConfigMap created after the kill',
      });
      const cut = new Set(events.filter((e) => e.ev === 'closed').map((e) => e.w));
      assert.ok(cut.size >= 1, 'at least one watch ran through a killed apiserver and was cut');
      figure('failover: watches cut and re-established', cut.size);
      figure('failover: kill to every watch delivering a new object (s)', seconds(t));

      // The killed apiservers come back and get connections again.
      const before = await connectionTotals();
      t = performance.now();
      for (const [i, k] of killed.entries()) await respawnApiserver(i + 1, k.argv);
      await waitFor(
        async () => {
          const us = await proxyUpstreams();
          return [addrs[0], addrs[1]].every((a) => us.find((u) => u.upstream === `${a}:6443`)?.state === 'up');
        },
        { timeoutMs: 120_000, intervalMs: 500, what: 'the restarted apiservers up again' },
      );
      figure('recovery: restart to both up (s)', seconds(t));
      await waitFor(
        async () => {
          await apiThroughProxy(); // new connections (slow start lets the returning ones take a growing share)
          const now = await connectionTotals();
          return [addrs[0], addrs[1]].every((a) => (now.get(`${a}:6443`) ?? 0) > (before.get(`${a}:6443`) ?? 0));
        },
        { timeoutMs: 90_000, intervalMs: 300, what: 'new connections to both restarted apiservers' },
      );
      figure('recovery: restart to new connections on both (s)', seconds(t));
      watcher.kill('SIGTERM');
    },
  );

  test(
    'the node agents: watch and routes as static pods, then as the DaemonSet, routes programming nftables in the node namespace',
    { timeout: 8 * 60_000 },
    async () => {
      const vip = '198.51.100.100';
      const local = env.ADDRS.split(' ')[2]!;
      await mkdir(join(dir, 'cloud-routes'), { recursive: true });
      const hostPaths = {
        '/run/cloud-routes': `${dir}/cloud-routes`,
        '/run/cloud-routes-heartbeat': `${dir}/cloud-routes-heartbeat`,
        '/etc/kubernetes/pki/ca.crt': `${dir}/ssl/ca.crt`,
      };
      // The VIP and the local apiserver of this node instead of DNS; the rest of the args as shipped.
      const watchArgs = (args: string[]) => [
        ...args.filter((a) => !a.startsWith('--vip-from-dns=')),
        `--vip=${vip}`,
        `--health-url=https://${local}:6443/readyz`,
        '--interval=500ms',
      ];
      const adapt = async (file: string) =>
        adaptManifest(await readFile(join(ROOT, file), 'utf8'), { image: imageRef, hostPaths, args: { watch: watchArgs } }).yaml;
      const watchPod = await adapt('deploy/watch/static-pod.yaml');
      const routesPod = await adapt('deploy/routes/static-pod.yaml');
      assert.ok(
        watchPod.includes(`--vip=${vip}`) && !/path: \/run\/cloud-routes/.test(watchPod + routesPod),
        'no state or heartbeat directory under the host /run',
      );
      const redirected = async (addr = vip): Promise<boolean> => {
        const r = await inNs(['nft', 'list', 'table', 'inet', 'kubeward-routes']).catch(() => ({ stdout: '' }));
        return r.stdout.includes(addr) && /redirect/.test(r.stdout);
      };
      const cleanUp = async () => {
        await inNs([
          NODE,
          join(ROOT, 'src/cli/main.ts'),
          'routes',
          '--provider',
          'azure',
          '--state-dir',
          join(dir, 'cloud-routes'),
          '--admin-address',
          'off',
          '--clean-up',
        ]);
        assert.equal((await inNs(['nft', 'list', 'tables'])).stdout.includes('kubeward-routes'), false, 'the table removed by --clean-up');
      };
      // The DaemonSet's nodeSelector is checked by the kubelet when it admits the pod, against its
      // own cached Node; a label set just before the manifest can be missed, and a static pod it
      // rejects is not tried again. The label goes on now, minutes before the DaemonSet step.
      await kubectl(['label', 'node', await nodeName(), 'node-role.kubernetes.io/control-plane=', '--overwrite']);
      let t = performance.now();
      await writeFile(join(env.MANIFESTS, 'kubeward-watch.yaml'), watchPod);
      await writeFile(join(env.MANIFESTS, 'kubeward-routes.yaml'), routesPod);
      await waitFor(() => existsSync(join(dir, `cloud-routes/${vip}.up`)), { timeoutMs: 120_000, intervalMs: 200, what: `watch publishes ${vip}.up` });
      figure('node agents: manifests to VIP published up (s)', seconds(t));
      await waitFor(redirected, { timeoutMs: 120_000, intervalMs: 200, what: 'routes redirects the VIP in the node namespace' });
      figure('node agents: manifests to nftables redirect (s)', seconds(t));

      // The local apiserver dies: watch publishes down, routes withdraws the redirect; it comes back.
      const k = await apiserverArgv(3);
      process.kill(k.pid, 'SIGKILL');
      await waitFor(() => existsSync(join(dir, `cloud-routes/${vip}.down`)), { timeoutMs: 60_000, intervalMs: 100, what: `watch publishes ${vip}.down` });
      await waitFor(async () => !(await redirected()), { timeoutMs: 30_000, intervalMs: 100, what: 'the redirect withdrawn' });
      await respawnApiserver(3, k.argv);
      await waitFor(redirected, { timeoutMs: 120_000, intervalMs: 300, what: 'the redirect back with the apiserver' });

      // Removing the static pods keeps the rules (a restart must not reopen the hairpin, as OpenShift's
      // azure-routes never removes them); `kubeward routes --clean-up` removes them for good.
      await rm(join(env.MANIFESTS, 'kubeward-routes.yaml'));
      await rm(join(env.MANIFESTS, 'kubeward-watch.yaml'));
      const gone = (name: string) =>
        waitFor(async () => !(await containers(name)).some((c) => c.running), { timeoutMs: 90_000, intervalMs: 300, what: `the ${name} container stopped` });
      await gone('routes');
      await gone('watch');
      // The watcher published .down on its way out, so what stays is our table without the redirect.
      assert.ok((await inNs(['nft', 'list', 'tables'])).stdout.includes('kubeward-routes'), 'the rules outlive the routes pod');
      await cleanUp();

      // The DaemonSet: applied to the API for real; no scheduler runs here, so the kubelet runs its
      // pod template (both containers, as shipped) as a static pod on the node it selects.
      const dsFile = join(ROOT, 'deploy/node-agents/daemonset.yaml');
      await inNs([
        'kubectl',
        '--kubeconfig',
        env.KUBECONFIG,
        '--server',
        'https://198.51.100.4:6443',
        'apply',
        '--server-side',
        '--field-manager=kubeward-kubelet-it',
        '-f',
        dsFile,
      ]);
      const ds = adaptManifest(await readFile(dsFile, 'utf8'), { image: imageRef, hostPaths, args: { watch: watchArgs } });
      assert.deepEqual(
        ds.pod.spec.containers.map((c) => c.name),
        ['watch', 'routes'],
      );
      t = performance.now();
      await writeFile(join(env.MANIFESTS, 'kubeward-node-agents.yaml'), ds.yaml);
      // Its mirror pod says why the kubelet refused it, if it did; a rejection fails here by name.
      const mirror = async () =>
        JSON.parse(
          await kubectl(['-n', 'kube-system', 'get', 'pods', '-l', 'app.kubernetes.io/name=kubeward-node-agents', '-o', 'json']).catch(() => '{"items":[]}'),
        ) as {
          items: { status: { phase?: string; reason?: string; message?: string } }[];
        };
      await waitFor(
        async () => {
          const rejected = (await mirror()).items.find((p) => p.status.phase === 'Failed');
          if (rejected) throw new Error(`the kubelet rejected the DaemonSet pod: ${rejected.status.reason}: ${rejected.status.message}`);
          return redirected();
        },
        { timeoutMs: 120_000, intervalMs: 200, what: 'the DaemonSet pod redirects the VIP' },
      ).catch(async (err: unknown) => {
        const pods = await kubectl(['-n', 'kube-system', 'get', 'pods', '-o', 'wide']).catch((e: unknown) => String(e));
        throw new Error(`${String(err)}\npods:\n${pods}containers: ${JSON.stringify(await containers('routes'))}`);
      });
      figure('node agents DaemonSet: manifest to nftables redirect (s)', seconds(t));
      await rm(join(env.MANIFESTS, 'kubeward-node-agents.yaml'));
      await gone('routes');
      await cleanUp();
      await kubectl(['-n', 'kube-system', 'delete', 'daemonset', 'kubeward-node-agents']);

      // The one capability is needed: the routes pod without NET_ADMIN runs, and the kernel refuses its rules.
      const weak = adaptManifest(await readFile(join(ROOT, 'deploy/routes/static-pod.yaml'), 'utf8'), {
        image: imageRef,
        hostPaths,
        edit: (pod) => {
          const caps = pod.spec.containers[0]!.securityContext!.capabilities!;
          assert.deepEqual(caps.add, ['NET_ADMIN']);
          delete caps.add;
        },
      });
      await writeFile(join(env.MANIFESTS, 'kubeward-routes.yaml'), weak.yaml);
      const refused = async () => /Operation not permitted/.test(await statusOf('routes', 'routes', 9451).catch(() => ''));
      await waitFor(refused, { timeoutMs: 120_000, intervalMs: 300, what: "the routes pod without NET_ADMIN reports the kernel's refusal in /status" });
      assert.equal((await inNs(['nft', 'list', 'tables'])).stdout.includes('kubeward-routes'), false, 'no rules without NET_ADMIN');
      await rm(join(env.MANIFESTS, 'kubeward-routes.yaml'));
      await gone('routes');
    },
  );

  test('the agent static pod: proxy, watch and routes in one container, root with NET_ADMIN alone', { timeout: 5 * 60_000 }, async () => {
    const vip = '198.51.100.101';
    const addrs = env.ADDRS.split(' ');
    await mkdir(join(dir, 'agent-routes'), { recursive: true });
    // The user's /etc/kubeward/agent.yaml for this node; its proxy listens beside the proxy pod's 127.0.0.1:6443.
    await writeFile(
      join(dir, 'agent.yaml'),
      [
        'adminAddress: 127.0.0.1:9456',
        `proxy: { listen: ["127.0.0.1:16443"], upstream: [${addrs.map((a) => `"${a}:6443"`).join(', ')}], caFile: /etc/kubernetes/pki/ca.crt }`,
        `watch: { healthUrl: "https://${addrs[2]}:6443/readyz", caFile: /etc/kubernetes/pki/ca.crt, vip: [${vip}], stateDir: /run/cloud-routes, interval: 500ms }`,
        'routes: { provider: azure, stateDir: /run/cloud-routes }',
      ].join('\n') + '\n',
    );
    const agentAdaptation = {
      image: imageRef,
      hostPaths: {
        '/etc/kubeward/agent.yaml': `${dir}/agent.yaml`,
        '/run/cloud-routes': `${dir}/agent-routes`,
        '/run/cloud-routes-heartbeat': `${dir}/agent-routes-heartbeat`,
        '/etc/kubernetes/pki/ca.crt': `${dir}/ssl/ca.crt`,
        '/var/lib/kubeward': `${dir}/var-lib-kubeward`,
        '/run/kubeward-handover/agent': `${dir}/agent-handover`,
      },
    };
    const agent = adaptManifest(await readFile(join(ROOT, 'deploy/agent/static-pod.yaml'), 'utf8'), agentAdaptation);
    const t = performance.now();
    await writeFile(join(env.MANIFESTS, 'kubeward-agent.yaml'), agent.yaml);
    const ok = (args: string[]) => () =>
      inNs(['curl', '-fsS', '--max-time', '2', ...args]).then(
        () => true,
        () => false,
      );
    await waitFor(ok(['http://127.0.0.1:9456/readyz']), { timeoutMs: 120_000, intervalMs: 300, what: 'the agent ready (every mode)' });
    figure('agent pod: manifest to ready (s)', seconds(t));
    await waitFor(ok(['--cacert', env.CA, 'https://127.0.0.1:16443/readyz']), {
      timeoutMs: 30_000,
      intervalMs: 300,
      what: "the API through the agent's proxy",
    });
    await waitFor(() => existsSync(join(dir, `agent-routes/${vip}.up`)), {
      timeoutMs: 60_000,
      intervalMs: 200,
      what: `the agent's watcher publishes ${vip}.up`,
    });
    await waitFor(async () => (await inNs(['nft', 'list', 'table', 'inet', 'kubeward-routes']).catch(() => ({ stdout: '' }))).stdout.includes(vip), {
      timeoutMs: 60_000,
      intervalMs: 200,
      what: "the agent's routes redirect the VIP",
    });
    const running = (await containers('agent')).find((c) => c.running)!;
    const pid = new RegExp(`^${running.id}\\s+(\\d+)\\s`, 'm').exec((await sh('ctr', ['-n', 'k8s.io', 'tasks', 'ls'])).stdout)![1]!;
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    assert.match(status, /^Uid:\s+0\s/m, 'the agent runs as root');
    assert.match(status, /^CapEff:\s+0000000000001000$/m, 'with NET_ADMIN (bit 12) alone');
    // Upgrade: a changed manifest; the new agent takes the listening sockets over --handover-socket,
    // the old one goes without publishing the VIP down or touching the rules. A client polls the
    // agent's proxy every 50 ms, the VIP's state files are watched and its rule looked for throughout.
    const agentBefore = (await containers('agent')).filter((c) => c.running).map((c) => c.id);
    const upgradeSeen: string[] = [];
    const routesWatch = watch(join(dir, 'agent-routes'), (_e, name) => void (name && upgradeSeen.push(name)));
    const agentPoller = spawn(
      'ip',
      [
        'netns',
        'exec',
        env.NETNS,
        NODE,
        join(import.meta.dirname, 'poll-client.ts'),
        '--url',
        'https://127.0.0.1:16443/readyz',
        '--ca',
        env.CA,
        '--every',
        '50',
        '--max-seconds',
        '240',
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    children.push(agentPoller);
    let agentPolled = '';
    agentPoller.stdout.on('data', (d: Buffer) => (agentPolled += d.toString()));
    let ruleChecks = 0;
    let ruleMissing = 0;
    let upgrading = true;
    const ruleLoop = (async () => {
      for (let i = 0; i < 2000 && upgrading; i++) {
        const rules = await inNs(['nft', 'list', 'table', 'inet', 'kubeward-routes']).catch(() => ({ stdout: '' }));
        ruleChecks++;
        if (!rules.stdout.includes(vip)) ruleMissing++;
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    await new Promise((r) => setTimeout(r, 2000)); // the poller's baseline before the change, as in the proxy upgrade
    const tUp = performance.now();
    await writeFile(
      join(env.MANIFESTS, 'kubeward-agent.yaml'),
      adaptManifest(await readFile(join(ROOT, 'deploy/agent/static-pod.yaml'), 'utf8'), {
        ...agentAdaptation,
        annotations: { 'kubeward.io/test-revision': '2' },
      }).yaml,
    );
    await waitFor(async () => (await containers('agent')).some((c) => c.running && !agentBefore.includes(c.id)), {
      timeoutMs: 120_000,
      intervalMs: 100,
      what: 'the new agent container running',
    });
    figure('agent upgrade: manifest change to new container running (s)', seconds(tUp));
    await waitFor(async () => !(await containers('agent')).some((c) => c.running && agentBefore.includes(c.id)), {
      timeoutMs: 120_000,
      intervalMs: 200,
      what: 'the old agent container gone',
    });
    figure('agent upgrade: manifest change to old container gone (s)', seconds(tUp));
    await waitFor(ok(['http://127.0.0.1:9456/readyz']), { timeoutMs: 60_000, intervalMs: 300, what: 'the new agent ready' });
    upgrading = false;
    await ruleLoop;
    routesWatch.close();
    agentPoller.kill('SIGTERM');
    await new Promise((r) => agentPoller.once('exit', r));
    const agentResult = JSON.parse(agentPolled.trim()) as { sent: number; failed: number; failures: unknown[]; longestGapMs: number };
    figure('agent upgrade: requests sent', agentResult.sent);
    figure('agent upgrade: requests failed', agentResult.failed);
    figure('agent upgrade: longest gap between two answers (ms)', agentResult.longestGapMs);
    figure('agent upgrade: rule checks without the VIP', ruleMissing);
    // 2 s of baseline are 40 requests; more means the poller ran across the change too.
    assert.ok(agentResult.sent > 60, `the poller ran through the agent upgrade (${agentResult.sent} requests)`);
    assert.equal(agentResult.failed, 0, `failed requests through the agent's proxy during the upgrade: ${JSON.stringify(agentResult.failures)}`);
    assert.ok(ruleChecks > 10, `the rule was looked for through the upgrade (${ruleChecks} times)`);
    assert.equal(ruleMissing, 0, `the VIP's rule was missing in ${ruleMissing} of ${ruleChecks} looks during the upgrade`);
    assert.ok(!upgradeSeen.includes(`${vip}.down`), `the VIP was never published down during the upgrade (${[...new Set(upgradeSeen)].join(', ')})`);
    assert.ok(existsSync(join(dir, `agent-routes/${vip}.up`)), 'the new watcher keeps the VIP up');
    // SIGTERM: the VIP published down and the rules removed before the container goes.
    await rm(join(env.MANIFESTS, 'kubeward-agent.yaml'));
    await waitFor(async () => !(await containers('agent')).some((c) => c.running), { timeoutMs: 90_000, intervalMs: 300, what: 'the agent container stopped' });
    assert.ok(existsSync(join(dir, `agent-routes/${vip}.down`)), 'the agent published the VIP down on its way out');
    await inNs([
      NODE,
      join(ROOT, 'src/cli/main.ts'),
      'routes',
      '--provider',
      'azure',
      '--state-dir',
      join(dir, 'agent-routes'),
      '--admin-address',
      'off',
      '--clean-up',
    ]);
  });

  test(
    'the operator from the image against the real apiservers: the example overlay applied server-side, its pod template run by the kubelet',
    { timeout: 5 * 60_000, skip: kustomizeOld },
    async () => {
      const file = join(dir, 'operator-overlay.yaml');
      await writeFile(file, (await sh('kubectl', ['kustomize', join(ROOT, 'deploy/operator/overlays/example')])).stdout);
      const apply = () => kubectl(['apply', '--server-side', '--field-manager=kubeward-kubelet-it', '-f', file]);
      await apply().catch(() => undefined); // the ManagedCluster waits for its CRD
      await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/managedclusters.kubeward.io']);
      await waitFor(() => apply().then(() => true), { timeoutMs: 60_000, intervalMs: 1000, what: 'the example overlay applied' });

      // No scheduler here: the kubelet runs the Deployment's pod template as a static pod, unchanged
      // but for the host network (the node has no pod network) and a kubeconfig (no token controller).
      const dep = JSON.parse(await kubectl(['-n', 'kubeward-system', 'get', 'deployment', 'kubeward-operator', '-o', 'json'])) as {
        spec: {
          template: {
            metadata: { labels: Record<string, string> };
            spec: { serviceAccountName?: string; volumes?: unknown[]; containers: { image: string; args: string[]; volumeMounts?: unknown[] }[] };
          };
        };
      };
      const tpl = dep.spec.template;
      assert.equal(tpl.spec.containers[0]!.image, KUBEWARD_IMAGE, 'the overlay names the image npm run image tags');
      const kubeconfig = (await readFile(env.KUBECONFIG, 'utf8')).replace(/server: "https:\/\/[^"]+"/, 'server: "https://127.0.0.1:6443"');
      await writeFile(join(dir, 'operator-kubeconfig'), kubeconfig, { mode: 0o644 });
      delete tpl.spec.serviceAccountName;
      const c = tpl.spec.containers[0]!;
      c.image = imageRef; // as an overlay's images: [{name: localhost/kubeward, newName: <registry>/kubeward}] does
      c.args = [...c.args, '--kubeconfig=/etc/kubeward/kubeconfig'];
      c.volumeMounts = [...(c.volumeMounts ?? []), { name: 'kubeconfig', mountPath: '/etc/kubeward/kubeconfig', readOnly: true }];
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'kubeward-operator', namespace: 'kubeward-system', labels: tpl.metadata.labels },
        spec: {
          ...tpl.spec,
          hostNetwork: true,
          volumes: [...(tpl.spec.volumes ?? []), { name: 'kubeconfig', hostPath: { path: join(dir, 'operator-kubeconfig'), type: 'File' } }],
        },
      };
      const t = performance.now();
      await writeFile(join(env.MANIFESTS, 'kubeward-operator.json'), JSON.stringify(pod, null, 2));
      await waitFor(
        () =>
          inNs(['curl', '-fsS', '--max-time', '2', 'http://127.0.0.1:9453/readyz']).then(
            () => true,
            () => false,
          ),
        { timeoutMs: 120_000, intervalMs: 500, what: 'the operator ready (leader)' },
      );
      figure('operator: manifest to ready leader (s)', seconds(t));
      const holder = (await kubectl(['-n', 'kubeward-system', 'get', 'lease', 'kubeward-operator', '-o', 'jsonpath={.spec.holderIdentity}'])).trim();
      assert.match(holder, /^kubeward-operator-/, 'the replica in the image holds the leader Lease under its pod name');
      await rm(join(env.MANIFESTS, 'kubeward-operator.json'));
    },
  );

  // The control plane under the node: every apiserver replaced at a new address, then a rolling
  // restart. Both run last (the steps above expect the first three apiservers) and can be run alone
  // with the bootstrap: --test-name-pattern='bootstrap|control plane'.
  // One name per apiserver: glibc's /etc/hosts lookup returns the first matching line only (no
  // `multi on` in the image), so a name with several addresses needs a DNS server.
  const apiserverName = (i: number) => `apiserver-${i + 1}.kw.test`;
  const slotOf = new Map<string, number>(); // upstream address -> its pid file slot
  /** A process that is gone or a zombie no longer holds its port. */
  const exited = async (pid: number): Promise<boolean> => {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    return stat === '' || / Z /.test(stat.slice(stat.lastIndexOf(')')));
  };
  /** apiserver `slot` stopped as an upgrade stops it: SIGTERM, then its --shutdown-delay-duration and drain. */
  const stopApiserver = async (slot: number): Promise<void> => {
    const { pid } = await apiserverArgv(slot);
    process.kill(pid, 'SIGTERM');
    await waitFor(() => exited(pid), { timeoutMs: 120_000, intervalMs: 200, what: `apiserver ${slot} (pid ${pid}) exited after SIGTERM` });
    await rm(join(env.STATE, `multi/kube-apiserver-${slot}.pid`), { force: true });
  };
  const upstreamUp = async (addr: string): Promise<boolean> => (await proxyUpstreams()).some((u) => u.upstream === `${addr}:6443` && u.state === 'up');
  const spawnIn = (script: string, args: string[]) => {
    const child = spawn('ip', ['netns', 'exec', env.NETNS, NODE, join(import.meta.dirname, script), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    return child;
  };
  /**
   * poll-client.ts through the proxy; stop() returns its summary. `path`: what each request asks;
   * an apiserver in its --shutdown-delay-duration answers /readyz 503 (its cue to the balancer) while
   * it serves everything else, and one still starting can answer it 500, so a roll polls /livez, as
   * a client's own requests would be served.
   */
  const startPoller = (every: number, path = '/readyz') => {
    const child = spawnIn('poll-client.ts', ['--url', `https://127.0.0.1:6443${path}`, '--ca', env.CA, '--every', String(every), '--max-seconds', '900']);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    return {
      stop: async () => {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
        return JSON.parse(out.trim()) as { sent: number; ok: number; failed: number; failures: unknown[]; longestGapMs: number };
      },
    };
  };
  /** watch-client.ts through the proxy; its events as they arrive. */
  const startWatchers = (count: number) => {
    const child = spawnIn('watch-client.ts', [
      '--server',
      'https://127.0.0.1:6443',
      '--ca',
      env.CA,
      '--token-file',
      env.TOKEN,
      '--namespace',
      'default',
      '--count',
      String(count),
      '--max-seconds',
      '900',
    ]);
    const events: { w: number; ev: string; name?: string; error?: string }[] = [];
    let partial = '';
    child.stdout!.on('data', (d: Buffer) => {
      const lines = (partial + d.toString()).split('\n');
      partial = lines.pop()!;
      for (const l of lines) if (l) events.push(JSON.parse(l) as { w: number; ev: string; name?: string });
    });
    return { child, events };
  };

  test(
    'control plane replaced: all three apiservers move to new addresses one at a time behind a DNS name; the node keeps the API and stays Ready',
    { timeout: 10 * 60_000 },
    async () => {
      const old = env.ADDRS.split(' ');
      const fresh = ['198.51.100.5', '198.51.100.6', '198.51.100.7'];
      for (const a of fresh) await sh('ip', ['-n', env.NETNS, 'addr', 'add', `${a}/32`, 'dev', 'lo']);
      old.forEach((a, i) => slotOf.set(a, i + 1));
      // The name resolves through the proxy container's own /etc/hosts: a file of this test mounted
      // there (the kubelet then leaves its own hosts file out), rewritten in place as DNS would change.
      const hosts = join(dir, 'hosts');
      const writeHosts = (addrs: string[]) =>
        writeFile(hosts, ['127.0.0.1 localhost', ...addrs.map((a, i) => `${a} ${apiserverName(i)}`)].join('\n') + '\n', { mode: 0o644 });
      await writeHosts(old);
      await writeFile(
        join(dir, 'etc-kubeward/proxy.yaml'),
        [
          'adminAddress: "127.0.0.1:9452"',
          'frontends:',
          '  - name: apiserver',
          '    listen: ["127.0.0.1:6443"]',
          `    upstreamDns: [${old.map((_, i) => `"${apiserverName(i)}:6443"`).join(', ')}]`,
          '    dnsRefresh: 2s',
          // The serving certificate names the first three addresses and "kubernetes"; the checks verify the name.
          '    healthCheck: { type: readyz, path: /readyz, caFile: /etc/kubernetes/ssl/ca.crt, serverName: kubernetes, interval: 500ms }',
        ].join('\n') + '\n',
      );
      const manifest = adaptManifest(await readFile(join(ROOT, 'deploy/proxy/static-pod.yaml'), 'utf8'), {
        image: imageRef,
        hostPaths: { '/etc/kubeward': `${dir}/etc-kubeward`, '/etc/kubernetes/ssl': `${dir}/ssl`, '/var/lib/kubeward': `${dir}/var-lib-kubeward` },
        annotations: { 'kubeward.io/test-revision': 'dns' },
        edit: (pod) => {
          const spec = pod.spec as unknown as { volumes: object[]; containers: { volumeMounts: object[] }[] };
          spec.volumes.push({ name: 'hosts', hostPath: { path: hosts, type: 'File' } });
          spec.containers[0]!.volumeMounts.push({ name: 'hosts', mountPath: '/etc/hosts', readOnly: true });
        },
      }).yaml;
      const previous = (await containers('kubeward-proxy')).filter((c) => c.running).map((c) => c.id);
      await writeFile(join(env.MANIFESTS, 'kubeward-proxy.yaml'), manifest);
      // The admin address answers from the previous pod until it is gone: wait for the new one alone.
      await waitFor(async () => !(await containers('kubeward-proxy')).some((c) => c.running && previous.includes(c.id)), {
        timeoutMs: 120_000,
        intervalMs: 300,
        what: 'the previous proxy pod gone',
      });
      await waitFor(async () => (await Promise.all(old.map(upstreamUp))).every(Boolean), {
        timeoutMs: 120_000,
        intervalMs: 300,
        what: 'the three apiservers up through their names',
      });
      adminServer = 'https://127.0.0.1:6443';
      const poller = startPoller(100);
      const node = await nodeName();
      const startedAt = Date.now();
      const t = performance.now();
      for (const [i, from] of old.entries()) {
        const to = fresh[i]!;
        const slot = slotOf.get(from)!;
        const { argv } = await apiserverArgv(slot);
        // DNS moves first: the departing address stays an upstream until the new one passes its checks.
        await writeHosts([...fresh.slice(0, i + 1), ...old.slice(i + 1)]);
        await new Promise((r) => setTimeout(r, 3000)); // more than one --dns-refresh with the new answer
        assert.ok(await upstreamUp(from), `${from} is kept while its replacement ${to} has not passed its checks: ${JSON.stringify(await proxyUpstreams())}`);
        const newSlot = 4 + i;
        await respawnApiserver(
          newSlot,
          [
            ...argv.map((a) =>
              a.startsWith('--bind-address=') ? `--bind-address=${to}` : a.startsWith('--advertise-address=') ? `--advertise-address=${to}` : a,
            ),
            '--shutdown-delay-duration=5s',
          ].filter((a, k, all) => !a.startsWith('--shutdown-delay-duration=') || k === all.length - 1),
        );
        slotOf.set(to, newSlot);
        await waitFor(() => upstreamUp(to), { timeoutMs: 180_000, intervalMs: 300, what: `replacement ${to} up in the proxy` });
        await waitFor(async () => !(await proxyUpstreams()).some((u) => u.upstream === `${from}:6443`), {
          timeoutMs: 60_000,
          intervalMs: 300,
          what: `${from} leaves the proxy once ${to} is up`,
        });
        await stopApiserver(slot);
        slotOf.delete(from);
      }
      figure('replacement: three apiservers at new addresses (s)', seconds(t));
      await waitFor(() => nodeReady(startedAt + 1000), { timeoutMs: 90_000, intervalMs: 500, what: 'Node Ready with a heartbeat after the replacement' });
      const renewed = Date.parse((await kubectl(['-n', 'kube-node-lease', 'get', 'lease', node, '-o', 'jsonpath={.spec.renewTime}'])).trim());
      assert.ok(renewed > startedAt, 'the node lease is renewed through the new apiservers');
      const result = await poller.stop();
      figure('replacement: API requests through the proxy (every 100 ms)', result.sent);
      figure('replacement: failed requests', result.failed);
      figure('replacement: longest gap in API access (ms)', result.longestGapMs);
      const us = await proxyUpstreams();
      assert.deepEqual(us.map((u) => u.upstream).sort(), fresh.map((a) => `${a}:6443`).sort(), 'the proxy follows the name to the new addresses only');
      assert.ok(result.sent > 100, `the poller ran through the replacement (${result.sent} requests)`);
      assert.ok(result.longestGapMs < 10_000, `the longest gap in API access is under 10 s (${result.longestGapMs} ms)`);
    },
  );

  test(
    'control plane rolled: the apiservers restarted one after another with --shutdown-delay-duration under a kubelet and 30 watches; connections even again',
    { timeout: 10 * 60_000 },
    async () => {
      const slots = [...slotOf.entries()];
      assert.equal(slots.length, 3, 'three apiservers to roll (the replacement step runs first)');
      const poller = startPoller(100, '/livez');
      const count = 30;
      const watchers = startWatchers(count);
      await waitFor(() => new Set(watchers.events.filter((e) => e.ev === 'established').map((e) => e.w)).size === count, {
        timeoutMs: 60_000,
        intervalMs: 200,
        what: `${count} watches through the proxy`,
      });
      const t = performance.now();
      for (const [addr, slot] of slots) {
        const { argv } = await apiserverArgv(slot);
        assert.ok(argv.includes('--shutdown-delay-duration=5s'), `${addr} runs with --shutdown-delay-duration`);
        await stopApiserver(slot);
        await respawnApiserver(slot, argv);
        await waitFor(() => upstreamUp(addr), { timeoutMs: 180_000, intervalMs: 300, what: `${addr} up again after its restart` });
      }
      figure('roll: three apiservers restarted (s)', seconds(t));
      const rolled = performance.now();
      const spread = async () => {
        const us = (await proxyUpstreams()).filter((u) => u.state === 'up');
        const mean = us.reduce((n, u) => n + u.active, 0) / us.length;
        return { us, worst: Math.max(...us.map((u) => Math.abs(u.active - mean) / mean)) };
      };
      let last = await spread();
      const even = await waitFor(
        async () => {
          last = await spread();
          return last.us.length === 3 && last.worst <= 0.2;
        },
        { timeoutMs: 120_000, intervalMs: 1000, what: 'connections within 20 % of even' },
      ).then(
        () => true,
        () => false,
      );
      figure('roll: per-upstream connections after the roll', last.us.map((u) => `${u.upstream}=${u.active}`).join(' '));
      figure('roll: largest deviation from even (%)', Math.round(last.worst * 100));
      figure('roll: last restart to within 20 % of even (s)', even ? seconds(rolled) : 'not within 120 s');
      await kubectl(['-n', 'default', 'create', 'configmap', 'kw-after-roll', '--from-literal=k=v']);
      await waitFor(() => new Set(watchers.events.filter((e) => e.ev === 'object' && e.name === 'kw-after-roll').map((e) => e.w)).size === count, {
        timeoutMs: 60_000,
        intervalMs: 200,
        what: 'every watch delivers the ConfigMap created after the roll',
      });
      watchers.child.kill('SIGTERM');
      const closed = watchers.events.filter((e) => e.ev === 'closed');
      const established = watchers.events.filter((e) => e.ev === 'established').length;
      const watchFailures = closed.filter((e) => /^HTTP /.test(e.error ?? '')).length;
      figure('roll: watches cut', closed.length);
      figure('roll: watches re-established', established - count);
      figure('roll: watch requests answered with an HTTP error', watchFailures);
      const result = await poller.stop();
      figure('roll: API requests through the proxy (every 100 ms)', result.sent);
      figure('roll: failed requests', result.failed);
      figure('roll: longest gap in API access (ms)', result.longestGapMs);
      assert.ok(await nodeReady(), 'the Node is Ready after the roll');
      assert.ok(closed.length >= 1, 'watches ran through restarted apiservers and were cut');
      // The goal is 0 (reported above); a request that races an apiserver's own close of a
      // connection at the end of its shutdown delay can still fail, so the bound is 1 in 200.
      assert.ok(result.failed * 200 <= result.sent, `failed requests during the roll: ${JSON.stringify(result.failures)}`);
      // The goal, within 20 % of even in 2 minutes, is the figure above; the assertion holds the
      // spread to 35 %, past which rebalancing would not be working at all.
      assert.ok(
        last.us.length === 3 && last.worst <= 0.35,
        `connections within 35 % of even 2 minutes after the roll (${last.us.map((u) => `${u.upstream}=${u.active}`).join(' ')}; within 20 %: ${even})`,
      );
    },
  );
});
