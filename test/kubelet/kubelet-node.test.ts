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
import { stringify } from 'yaml';
import { createTestCa } from '../../testkit/certs.ts';
import { adaptManifest, daemonSetForApiserver120, type PodObject } from './adapt-manifest.ts';

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

/** Debian's prometheus binary (.ci/run installs it without the service), or PROMETHEUS. */
const PROMETHEUS = process.env.PROMETHEUS ?? 'prometheus';
const prometheusMissing = await run(PROMETHEUS, ['--version']).then(
  () => false as const,
  () => "no prometheus binary: bash .ci/run installs the one from Debian's prometheus package (or set PROMETHEUS)",
);
/**
 * What deploy/monitoring/podmonitor.yaml selects, as kubernetes_sd relabelling (docs/proxy.md):
 * kubeward's node pods, the container port named "metrics" (the pod's IP is the node's).
 */
const PROMETHEUS_POD_RELABEL = [
  { source_labels: ['__meta_kubernetes_pod_label_app_kubernetes_io_name'], regex: 'kubeward-(proxy|watch|routes|agent|node-agents)', action: 'keep' },
  { source_labels: ['__meta_kubernetes_pod_container_port_name'], regex: 'metrics', action: 'keep' },
  { source_labels: ['__meta_kubernetes_namespace'], target_label: 'namespace' },
  { source_labels: ['__meta_kubernetes_pod_name'], target_label: 'pod' },
  { source_labels: ['__meta_kubernetes_pod_node_name'], target_label: 'node' },
];

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

  /**
   * deploy/proxy/static-pod.yaml with this run's host paths and image: the manifest users install;
   * `edit` is a change a user makes to it (a container port, a mount).
   */
  const proxyManifest = async (revision: string, edit?: (pod: PodObject) => void): Promise<string> =>
    adaptManifest(await readFile(join(ROOT, 'deploy/proxy/static-pod.yaml'), 'utf8'), {
      image: imageRef,
      hostPaths: { '/etc/kubeward': `${dir}/etc-kubeward`, '/etc/kubernetes/ssl': `${dir}/ssl`, '/var/lib/kubeward': `${dir}/var-lib-kubeward` },
      annotations: { 'kubeward.io/test-revision': revision },
      edit,
    }).yaml;
  /** The proxy's config: one frontend; `extra` adds lines to the frontend, `top` top-level keys. */
  const writeProxyConfig = async (upstreams: string[], extra = '', top: string[] = []): Promise<void> => {
    await writeFile(
      join(dir, 'etc-kubeward/proxy.yaml'),
      [
        'adminAddress: "127.0.0.1:9452"',
        ...top,
        'frontends:',
        '  - name: apiserver',
        '    listen: ["127.0.0.1:6443"]',
        `    upstreams: [${upstreams.map((u) => `"${u}:6443"`).join(', ')}]`,
        '    healthCheck: { type: readyz, path: /readyz, caFile: /etc/kubernetes/ssl/ca.crt, interval: 500ms }',
        extra,
      ].join('\n') + '\n',
    );
  };

  const spawnIn = (script: string, args: string[]) => {
    const child = spawn('ip', ['netns', 'exec', env.NETNS, NODE, join(import.meta.dirname, script), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    return child;
  };
  /**
   * poll-client.ts through the proxy; stop() returns its summary. `path`: what each request asks;
   * an apiserver in its --shutdown-delay-duration answers /readyz 500 (its cue to the balancer) while
   * it serves everything else, and one still starting can answer it 500 too, so a step that stops an
   * apiserver still in the proxy's list polls /livez, as a client's own requests would be served.
   */
  const startPoller = (every: number, path = '/readyz', base = 'https://127.0.0.1:6443') => {
    const child = spawnIn('poll-client.ts', ['--url', `${base}${path}`, '--ca', env.CA, '--every', String(every), '--max-seconds', '900']);
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
  /**
   * A static pod's upgrade as users make it: the changed manifest written over the old one, then
   * kubelet's work awaited: a new container of each name running, and every old one gone. The two
   * times go to the report under `label`.
   */
  const upgradeStaticPod = async (label: string, file: string, yaml: string, names: readonly string[]): Promise<void> => {
    const running = async () => (await Promise.all(names.map((n) => containers(n)))).flat().filter((c) => c.running);
    const before = new Set((await running()).map((c) => c.id));
    assert.ok(before.size >= names.length, `${label}: ${names.join(', ')} running before the upgrade`);
    const t = performance.now();
    await writeFile(join(env.MANIFESTS, file), yaml);
    await waitFor(async () => (await running()).filter((c) => !before.has(c.id)).length === names.length, {
      timeoutMs: 120_000,
      intervalMs: 100,
      what: `${label}: the new ${names.join(', ')} running`,
    });
    figure(`${label}: manifest change to new container running (s)`, seconds(t));
    await waitFor(async () => !(await running()).some((c) => before.has(c.id)), {
      timeoutMs: 120_000,
      intervalMs: 200,
      what: `${label}: the old containers gone`,
    });
    figure(`${label}: manifest change to old container gone (s)`, seconds(t));
  };
  /**
   * A VIP seen from the node while something changes: every file its state directory sees (so a
   * .down written and replaced between two looks is caught) and its nftables rule looked for every
   * 100 ms. stop() says what was seen.
   */
  const watchVip = (stateDir: string, vip: string) => {
    const files: string[] = [];
    const dirWatch = watch(stateDir, (_e, name) => void (name && files.push(name)));
    let looking = true;
    let checks = 0;
    let missing = 0;
    const loop = (async () => {
      for (let i = 0; i < 3000 && looking; i++) {
        const rules = await inNs(['nft', 'list', 'table', 'inet', 'kubeward-routes']).catch(() => ({ stdout: '' }));
        checks++;
        if (!rules.stdout.includes(vip)) missing++;
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    return {
      stop: async () => {
        looking = false;
        await loop;
        dirWatch.close();
        return { publishedDown: files.includes(`${vip}.down`), files: [...new Set(files)], checks, missing };
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
      assert.equal((await containers('kubeward-proxy')).filter((c) => c.running).length, 1, 'one proxy container runs before the upgrade');
      const poller = startPoller(50);
      await new Promise((r) => setTimeout(r, 2000)); // the poller's baseline before the change
      await upgradeStaticPod('upgrade', 'kubeward-proxy.yaml', await proxyManifest('2'), ['kubeward-proxy']);
      await new Promise((r) => setTimeout(r, 1000));
      const result = await poller.stop();
      figure('upgrade: requests sent', result.sent);
      figure('upgrade: requests failed', result.failed);
      figure('upgrade: longest gap between two answers (ms)', result.longestGapMs);
      assert.ok(result.sent > 100, `the poller ran through the upgrade (${result.sent} requests)`);
      assert.equal(result.failed, 0, `failed requests during the upgrade: ${JSON.stringify(result.failures)}`);
      assert.ok(await nodeReady(), 'the Node is Ready after the upgrade');
    },
  );

  test(
    'a real Prometheus in the node namespace finds the proxy pod through the API (pods, as kubernetes_sd role pod) and scrapes its authenticated /metrics with the scraper token; no token is 401, a token without the grant 403',
    { timeout: 5 * 60_000, skip: prometheusMissing },
    async () => {
      const port = 9462;
      const etc = join(dir, 'etc-kubeward');
      // The metrics listener as docs/proxy.md enables it on a static pod: the node's address, a
      // serving certificate for it, the kubelet's kubeconfig for the reviews, the container port
      // named "metrics" the PodMonitor selects. The key and kubeconfig belong to the pod's user.
      await mkdir(join(dir, 'metrics-ca'));
      const ca = await createTestCa('kw-node-metrics-ca', join(dir, 'metrics-ca'));
      const serving = await ca.issueServer('node-metrics', [`IP:${env.NODE_IP}`]);
      await writeFile(join(etc, 'metrics.crt'), await readFile(serving.certFile));
      await writeFile(join(etc, 'metrics.key'), await readFile(serving.keyFile), { mode: 0o600 });
      await writeFile(join(etc, 'metrics.kubeconfig'), await readFile(join(env.KUBELET_STATE, 'kubelet.kubeconfig')), { mode: 0o600 });
      await sh('chown', ['65532:65532', join(etc, 'metrics.key'), join(etc, 'metrics.kubeconfig')]);
      await writeProxyConfig(env.ADDRS.split(' '), '', [
        `metricsAddress: "${env.NODE_IP}:${port}"`,
        'metricsTlsCertFile: /etc/kubeward/metrics.crt',
        'metricsTlsKeyFile: /etc/kubeward/metrics.key',
        'metricsKubeconfig: /etc/kubeward/metrics.kubeconfig',
      ]);
      const t = performance.now();
      await writeFile(
        join(env.MANIFESTS, 'kubeward-proxy.yaml'),
        await proxyManifest('metrics', (pod) => void (pod.spec.containers[0]!.ports = [{ name: 'metrics', containerPort: port, protocol: 'TCP' }])),
      );
      // Only the new pod listens there: any HTTP answer (401 without a token) is from it.
      await waitFor(
        async () =>
          (
            await inNs([
              'curl',
              '-sS',
              '--max-time',
              '2',
              '-o',
              '/dev/null',
              '-w',
              '%{http_code}',
              '--cacert',
              ca.certFile,
              `https://${env.NODE_IP}:${port}/metrics`,
            ]).catch(() => ({ stdout: '' }))
          ).stdout === '401',
        { timeoutMs: 120_000, intervalMs: 300, what: `the metrics listener on ${env.NODE_IP}:${port} answering 401 to no token` },
      );
      figure('metrics: manifest to the metrics listener answering (s)', seconds(t));

      // The shipped RBAC (the reader ClusterRole bound to monitoring/kubeward-metrics-scraper), and
      // what Prometheus's own install grants it for discovery: get, list and watch pods. No token
      // controller runs here, so the tokens come from the TokenRequest API (kubectl create token).
      await kubectl(['create', 'namespace', 'monitoring']);
      await kubectl(['apply', '--server-side', '--field-manager=kubeward-kubelet-it', '-f', join(ROOT, 'deploy/monitoring/rbac.yaml')]);
      await kubectl(['create', 'clusterrole', 'kw-it-pod-discovery', '--verb=get,list,watch', '--resource=pods']);
      await kubectl([
        'create',
        'clusterrolebinding',
        'kw-it-pod-discovery',
        '--clusterrole=kw-it-pod-discovery',
        '--serviceaccount=monitoring:kubeward-metrics-scraper',
      ]);
      await kubectl(['-n', 'monitoring', 'create', 'serviceaccount', 'kw-it-no-grant']);
      const prom = join(dir, 'prometheus');
      await mkdir(prom);
      for (const sa of ['kubeward-metrics-scraper', 'kw-it-no-grant'])
        await writeFile(join(prom, `${sa}.token`), (await kubectl(['-n', 'monitoring', 'create', 'token', sa, '--duration=1h'])).trim(), { mode: 0o600 });
      await writeFile(join(prom, 'metrics-ca.crt'), ca.cert);
      // The scraper's token discovers too: kubernetes_sd lists pods with it. Debian's Prometheus
      // is built without kubernetes_sd; with such a binary pod-sd.ts lists the pods with the same
      // token and hands Prometheus kubernetes_sd's targets and labels through http_sd_configs.
      type Sd = 'kubernetes' | 'http';
      const discoveryAuth = { type: 'Bearer', credentials_file: join(prom, 'kubeward-metrics-scraper.token') };
      const job = (sd: { kind: Sd; port?: number }, name: string, token?: string) => ({
        job_name: name,
        scheme: 'https',
        scrape_interval: '1s',
        scrape_timeout: '1s',
        tls_config: { ca_file: join(prom, 'metrics-ca.crt') },
        ...(token ? { authorization: { type: 'Bearer', credentials_file: join(prom, `${token}.token`) } } : {}),
        ...(sd.kind === 'kubernetes'
          ? { kubernetes_sd_configs: [{ role: 'pod', api_server: 'https://127.0.0.1:6443', tls_config: { ca_file: env.CA }, authorization: discoveryAuth }] }
          : { http_sd_configs: [{ url: `http://127.0.0.1:${sd.port}/`, refresh_interval: '2s', authorization: discoveryAuth }] }),
        relabel_configs: PROMETHEUS_POD_RELABEL,
      });
      const started: ChildProcess[] = [];
      const stop = async (child: ChildProcess) => {
        child.kill('SIGTERM');
        const gone = await waitFor(() => child.exitCode !== null || child.signalCode !== null, { timeoutMs: 15_000, intervalMs: 100, what: 'stopped' }).then(
          () => true,
          () => false,
        );
        if (!gone) child.kill('SIGKILL');
      };
      /** Prometheus in the node's namespace on 127.0.0.1:0 (ss tells the port); web undefined when it exited. */
      const startPrometheus = async (sd: { kind: Sd; port?: number }) => {
        await writeFile(
          join(prom, 'prometheus.yml'),
          stringify({
            scrape_configs: [
              job(sd, 'kubeward-node', 'kubeward-metrics-scraper'),
              job(sd, 'kubeward-no-grant', 'kw-it-no-grant'),
              job(sd, 'kubeward-no-token'),
            ],
          }),
        );
        const at = performance.now();
        const child = spawn(
          'ip',
          [
            'netns',
            'exec',
            env.NETNS,
            PROMETHEUS,
            `--config.file=${join(prom, 'prometheus.yml')}`,
            `--storage.tsdb.path=${join(prom, 'data')}`,
            '--web.listen-address=127.0.0.1:0',
          ],
          { stdio: ['ignore', 'ignore', 'pipe'] },
        );
        children.push(child);
        started.push(child);
        let log = '';
        child.stderr!.setEncoding('utf8').on('data', (d: string) => (log = (log + d).slice(-4000)));
        const web = await waitFor(
          async () => {
            if (child.exitCode !== null) return 'exited';
            const ss = (await inNs(['ss', '-Hltnp'])).stdout;
            return new RegExp(`127\\.0\\.0\\.1:(\\d+)\\s.*pid=${child.pid},`).exec(ss)?.[1];
          },
          { timeoutMs: 30_000, intervalMs: 200, what: 'prometheus listening' },
        ).catch((err: unknown) => assert.fail(`${String(err)}; prometheus log: ${log.slice(-1000)}`));
        return { web: web === 'exited' ? undefined : web, at, log: () => log };
      };
      try {
        let sd: { kind: Sd; port?: number } = { kind: 'kubernetes' };
        let p = await startPrometheus(sd);
        if (p.web === undefined) {
          assert.match(p.log(), /field kubernetes_sd_configs not found/, 'Prometheus exited for no other reason than a missing kubernetes_sd');
          const podSd = spawnIn('pod-sd.ts', ['--server', 'https://127.0.0.1:6443', '--ca', env.CA, '--max-seconds', '300']);
          started.push(podSd);
          let out = '';
          podSd.stdout!.on('data', (d: Buffer) => (out += d.toString()));
          const sdPort = await waitFor(() => /^\{"port":(\d+)\}\n/.exec(out)?.[1], { timeoutMs: 30_000, intervalMs: 100, what: 'pod-sd.ts listening' });
          sd = { kind: 'http', port: Number(sdPort) };
          p = await startPrometheus(sd);
          assert.ok(p.web !== undefined, `prometheus with http_sd_configs: ${p.log().slice(-1000)}`);
        }
        const { web, log } = p;
        figure(
          'metrics: Prometheus discovery',
          sd.kind === 'kubernetes' ? 'kubernetes_sd_configs' : 'http_sd_configs (pod-sd.ts; this Prometheus has no kubernetes_sd)',
        );
        const api = async <T>(path: string): Promise<T> =>
          (JSON.parse((await inNs(['curl', '-fsS', '--max-time', '2', `http://127.0.0.1:${web}/api/v1/${path}`])).stdout) as { data: T }).data;
        interface Target {
          labels: Record<string, string>;
          scrapeUrl: string;
          health: string;
          lastError: string;
        }
        const byJob = new Map<string, Target[]>();
        await waitFor(
          async () => {
            byJob.clear();
            for (const x of (await api<{ activeTargets: Target[] }>('targets').catch(() => ({ activeTargets: [] }))).activeTargets)
              byJob.set(x.labels.job!, [...(byJob.get(x.labels.job!) ?? []), x]);
            return byJob.get('kubeward-node')?.some((x) => x.health === 'up') ?? false;
          },
          { timeoutMs: 90_000, intervalMs: 200, what: 'the proxy pod scraped up' },
        ).catch((err: unknown) => assert.fail(`${String(err)}; targets: ${JSON.stringify([...byJob])}; prometheus log: ${log().slice(-1000)}`));
        figure('metrics: Prometheus start to first successful scrape (s)', seconds(p.at));
        const [node] = byJob.get('kubeward-node')!;
        assert.equal(byJob.get('kubeward-node')!.length, 1, 'one target: the proxy pod, through its port named metrics');
        assert.equal(node!.scrapeUrl, `https://${env.NODE_IP}:${port}/metrics`);
        assert.match(node!.labels.pod!, /^kubeward-proxy-/, 'the mirror pod of the proxy static pod');
        const refused = await waitFor(
          async () => {
            const ts = (await api<{ activeTargets: Target[] }>('targets')).activeTargets;
            const of = (job: string) => ts.find((x) => x.labels.job === job && x.health !== 'unknown');
            const [noGrant, noToken] = [of('kubeward-no-grant'), of('kubeward-no-token')];
            return noGrant && noToken ? { noGrant, noToken } : undefined;
          },
          { timeoutMs: 30_000, intervalMs: 200, what: 'the refused jobs scraped' },
        );
        assert.equal(refused.noGrant.health, 'down');
        assert.match(refused.noGrant.lastError, /\b403\b/, 'a token without the grant: 403');
        assert.equal(refused.noToken.health, 'down');
        assert.match(refused.noToken.lastError, /\b401\b/, 'no token: 401');
        const series = await api<{ result: { metric: Record<string, string> }[] }>(
          `query?query=${encodeURIComponent('kubeward_build_info{job="kubeward-node"}')}`,
        );
        assert.equal(series.result.length, 1, 'kubeward_build_info stored by Prometheus');
        assert.equal(series.result[0]!.metric.relay, 'native');
      } finally {
        for (const c of started) await stop(c);
      }
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

      const { child: watcher, events } = startWatchers(6);
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
    'the node agents: watch and routes as static pods, then as the DaemonSet, routes programming nftables in the node namespace; every upgrade hands over without publishing the VIP down or withdrawing its rule',
    { timeout: 12 * 60_000 },
    async () => {
      const vip = '198.51.100.100';
      const local = env.ADDRS.split(' ')[2]!;
      await mkdir(join(dir, 'cloud-routes'), { recursive: true });
      const hostPaths = {
        '/run/cloud-routes': `${dir}/cloud-routes`,
        '/run/cloud-routes-heartbeat': `${dir}/cloud-routes-heartbeat`,
        '/etc/kubernetes/pki/ca.crt': `${dir}/ssl/ca.crt`,
        '/run/kubeward-handover/watch': `${dir}/watch-handover`,
        '/run/kubeward-handover/routes': `${dir}/routes-handover`,
      };
      // The VIP and the local apiserver of this node instead of DNS; the rest of the args as shipped.
      const watchArgs = (args: string[]) => [
        ...args.filter((a) => !a.startsWith('--vip-from-dns=')),
        `--vip=${vip}`,
        `--health-url=https://${local}:6443/readyz`,
        '--interval=500ms',
      ];
      const adapt = async (file: string, revision?: string) =>
        adaptManifest(await readFile(join(ROOT, file), 'utf8'), {
          image: imageRef,
          hostPaths,
          args: { watch: watchArgs },
          ...(revision ? { annotations: { 'kubeward.io/test-revision': revision } } : {}),
        }).yaml;
      const watchPod = await adapt('deploy/watch/static-pod.yaml');
      const routesPod = await adapt('deploy/routes/static-pod.yaml');
      assert.ok(
        watchPod.includes(`--vip=${vip}`) && !/path: \/run\/(cloud-routes|kubeward-handover)/.test(watchPod + routesPod),
        'no state, heartbeat or hand-over directory under the host /run',
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

      // Upgrades, one pod after the other: each new container takes its predecessor's admin listener
      // (--handover-socket), the old watcher leaves the VIP's files and the old routes its rules.
      const upgrading = watchVip(join(dir, 'cloud-routes'), vip);
      await upgradeStaticPod('watch upgrade', 'kubeward-watch.yaml', await adapt('deploy/watch/static-pod.yaml', '2'), ['watch']);
      await upgradeStaticPod('routes upgrade', 'kubeward-routes.yaml', await adapt('deploy/routes/static-pod.yaml', '2'), ['routes']);
      const seen = await upgrading.stop();
      figure('node agents upgrade: rule checks without the VIP', seen.missing);
      assert.ok(seen.checks > 10, `the rule was looked for through the upgrades (${seen.checks} times)`);
      assert.equal(seen.missing, 0, `the VIP's rule was missing in ${seen.missing} of ${seen.checks} looks during the upgrades`);
      assert.ok(!seen.publishedDown, `the VIP was never published down during the upgrades (${seen.files.join(', ')})`);
      assert.ok(existsSync(join(dir, `cloud-routes/${vip}.up`)), 'the VIP stays up');
      // What follows (the kill) is served by the new pods: they publish down and withdraw the redirect.

      // The local apiserver dies: watch publishes down, routes withdraws the redirect; it comes back.
      const k = await apiserverArgv(3);
      process.kill(k.pid, 'SIGKILL');
      await waitFor(() => existsSync(join(dir, `cloud-routes/${vip}.down`)), { timeoutMs: 60_000, intervalMs: 100, what: `watch publishes ${vip}.down` });
      await waitFor(async () => !(await redirected()), { timeoutMs: 30_000, intervalMs: 100, what: 'the redirect withdrawn' });
      await respawnApiserver(3, k.argv);
      await waitFor(redirected, { timeoutMs: 120_000, intervalMs: 300, what: 'the redirect back with the apiserver' });

      const gone = (name: string) =>
        waitFor(async () => !(await containers(name)).some((c) => c.running), { timeoutMs: 90_000, intervalMs: 300, what: `the ${name} container stopped` });
      // A kubelet v1.20 can start a removed static pod's containers once more in a new sandbox while
      // it tears the pod down (seen: a routes container back for a second, writing its table after
      // the clean-up). The pod is done when the kubelet has removed its directory.
      const podUids = async (name: string): Promise<string[]> => {
        const uids = new Set<string>();
        for (const { id } of await containers(name)) {
          const info = (await sh('ctr', ['-n', 'k8s.io', 'containers', 'info', id]).catch(() => ({ stdout: '' }))).stdout;
          const uid = /"io\.kubernetes\.pod\.uid": "([^"]+)"/.exec(info)?.[1];
          if (uid) uids.add(uid);
        }
        return [...uids];
      };
      const torndown = (uids: string[]) =>
        waitFor(() => uids.every((u) => !existsSync(`/var/lib/kubelet/pods/${u}`)), {
          timeoutMs: 90_000,
          intervalMs: 300,
          what: `the kubelet done with pod ${uids.join(', ')}`,
        });
      // Removing the static pods keeps the rules (a restart must not reopen the hairpin, as OpenShift's
      // azure-routes never removes them); `kubeward routes --clean-up` removes them for good.
      const staticPods = [...(await podUids('routes')), ...(await podUids('watch'))];
      await rm(join(env.MANIFESTS, 'kubeward-routes.yaml'));
      await rm(join(env.MANIFESTS, 'kubeward-watch.yaml'));
      await gone('routes');
      await gone('watch');
      await torndown(staticPods);
      // The watcher published .down on its way out, so what stays is our table without the redirect.
      assert.ok((await inNs(['nft', 'list', 'tables'])).stdout.includes('kubeward-routes'), 'the rules outlive the routes pod');
      await cleanUp();

      // The DaemonSet: applied to the API for real; no scheduler runs here, so the kubelet runs its
      // pod template (both containers, as shipped) as a static pod on the node it selects.
      const dsShipped = await readFile(join(ROOT, 'deploy/node-agents/daemonset.yaml'), 'utf8');
      const dsFile = join(dir, 'daemonset-v1.20.yaml');
      await writeFile(dsFile, daemonSetForApiserver120(dsShipped));
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
      const ds = adaptManifest(dsShipped, { image: imageRef, hostPaths, args: { watch: watchArgs } });
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
      // Its update, as the pod a surging DaemonSet starts beside the old one: both containers hand over.
      const updating = watchVip(join(dir, 'cloud-routes'), vip);
      await upgradeStaticPod('node agents DaemonSet update', 'kubeward-node-agents.yaml', await adapt('deploy/node-agents/daemonset.yaml', '2'), [
        'watch',
        'routes',
      ]);
      const dsSeen = await updating.stop();
      figure('node agents DaemonSet update: rule checks without the VIP', dsSeen.missing);
      assert.equal(dsSeen.missing, 0, `the VIP's rule was missing in ${dsSeen.missing} of ${dsSeen.checks} looks during the update`);
      assert.ok(!dsSeen.publishedDown, `the VIP was never published down during the update (${dsSeen.files.join(', ')})`);
      const dsPod = await podUids('routes');
      await rm(join(env.MANIFESTS, 'kubeward-node-agents.yaml'));
      await gone('routes');
      await torndown(dsPod);
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
      const tables = (await inNs(['nft', 'list', 'tables'])).stdout;
      if (tables.includes('kubeward-routes')) {
        const running = (await sh('ctr', ['-n', 'k8s.io', 'containers', 'ls'])).stdout;
        const table = (await inNs(['nft', 'list', 'table', 'inet', 'kubeward-routes']).catch((e: unknown) => ({ stdout: String(e) }))).stdout;
        const status = await statusOf('routes', 'routes', 9451).catch((e: unknown) => String(e));
        assert.fail(
          `no rules without NET_ADMIN, yet the table is there:\n${table}\n/status: ${status}\ncontainers:\n${running}\ntasks:\n${(await sh('ctr', ['-n', 'k8s.io', 'tasks', 'ls'])).stdout}`,
        );
      }
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
    const vipSeen = watchVip(join(dir, 'agent-routes'), vip);
    const agentPoller = startPoller(50, '/readyz', 'https://127.0.0.1:16443');
    await new Promise((r) => setTimeout(r, 2000)); // the poller's baseline before the change, as in the proxy upgrade
    const revised = adaptManifest(await readFile(join(ROOT, 'deploy/agent/static-pod.yaml'), 'utf8'), {
      ...agentAdaptation,
      annotations: { 'kubeward.io/test-revision': '2' },
    });
    await upgradeStaticPod('agent upgrade', 'kubeward-agent.yaml', revised.yaml, ['agent']);
    await waitFor(ok(['http://127.0.0.1:9456/readyz']), { timeoutMs: 60_000, intervalMs: 300, what: 'the new agent ready' });
    const seen = await vipSeen.stop();
    const agentResult = await agentPoller.stop();
    figure('agent upgrade: requests sent', agentResult.sent);
    figure('agent upgrade: requests failed', agentResult.failed);
    figure('agent upgrade: longest gap between two answers (ms)', agentResult.longestGapMs);
    figure('agent upgrade: rule checks without the VIP', seen.missing);
    // 2 s of baseline are 40 requests; more means the poller ran across the change too.
    assert.ok(agentResult.sent > 60, `the poller ran through the agent upgrade (${agentResult.sent} requests)`);
    assert.equal(agentResult.failed, 0, `failed requests through the agent's proxy during the upgrade: ${JSON.stringify(agentResult.failures)}`);
    assert.ok(seen.checks > 10, `the rule was looked for through the upgrade (${seen.checks} times)`);
    assert.equal(seen.missing, 0, `the VIP's rule was missing in ${seen.missing} of ${seen.checks} looks during the upgrade`);
    assert.ok(!seen.publishedDown, `the VIP was never published down during the upgrade (${seen.files.join(', ')})`);
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

  // The control plane under the node: every apiserver replaced at a new address, a rolling restart,
  // then every apiserver replaced again with discovery on. They run last (the steps above expect
  // the first three apiservers), in this order, and can be run alone with the bootstrap:
  // --test-name-pattern='bootstrap|control plane'.
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

  /**
   * Every apiserver moved to a new address, one at a time, behind one DNS name each; with
   * `discovery` the proxy also follows default/kubernetes (the names' addresses its backups).
   * Reports the poller's figures under `label`; returns them.
   */
  const replaceControlPlane = async (variant: { label: string; discovery: boolean; to: string[]; poll: '/readyz' | '/livez' }) => {
    const { label, discovery, to: fresh } = variant;
    const old = [...slotOf.keys()];
    assert.equal(old.length, 3, `three apiservers to replace: ${old.join(' ')}`);
    for (const a of fresh) await sh('ip', ['-n', env.NETNS, 'addr', 'add', `${a}/32`, 'dev', 'lo']);
    // The name resolves through the proxy container's own /etc/hosts: a file of this test mounted
    // there (the kubelet then leaves its own hosts file out), rewritten in place as DNS would change.
    const hosts = join(dir, 'hosts');
    const writeHosts = (addrs: string[]) =>
      writeFile(hosts, ['127.0.0.1 localhost', ...addrs.map((a, i) => `${a} ${apiserverName(i)}`)].join('\n') + '\n', { mode: 0o644 });
    await writeHosts(old);
    // Discovery reads default/kubernetes through the proxy's own frontend with this kubeconfig.
    if (discovery) await writeFile(join(dir, 'etc-kubeward/kubeconfig'), await readFile(env.KUBECONFIG), { mode: 0o644 });
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
        ...(discovery ? ['    discovery: kubernetes', '    kubeconfig: /etc/kubeward/kubeconfig', '    discoveryDebounce: 500ms'] : []),
      ].join('\n') + '\n',
    );
    const manifest = await proxyManifest(discovery ? 'dns-discovery' : 'dns', (pod) => {
      const spec = pod.spec as unknown as { volumes: object[]; containers: { volumeMounts: object[] }[] };
      spec.volumes.push({ name: 'hosts', hostPath: { path: hosts, type: 'File' } });
      spec.containers[0]!.volumeMounts.push({ name: 'hosts', mountPath: '/etc/hosts', readOnly: true });
    });
    const previous = (await containers('kubeward-proxy')).filter((c) => c.running).map((c) => c.id);
    await writeFile(join(env.MANIFESTS, 'kubeward-proxy.yaml'), manifest);
    // The admin address answers from the previous pod until it is gone: wait for the new one alone.
    await waitFor(async () => !(await containers('kubeward-proxy')).some((c) => c.running && previous.includes(c.id)), {
      timeoutMs: 120_000,
      intervalMs: 300,
      what: 'the previous proxy pod gone',
    });
    // With discovery an upstream is in use as a discovered one, not as a backup from the names.
    const inUse = async (addr: string): Promise<boolean> =>
      (await proxyUpstreams()).some((u) => u.upstream === `${addr}:6443` && u.state === 'up' && !(discovery && u.backup));
    await waitFor(async () => (await Promise.all(old.map(inUse))).every(Boolean), {
      timeoutMs: 120_000,
      intervalMs: 300,
      what: discovery ? 'the three apiservers discovered and up' : 'the three apiservers up through their names',
    });
    adminServer = 'https://127.0.0.1:6443';
    const poller = startPoller(100, variant.poll);
    const node = await nodeName();
    const startedAt = Date.now();
    const t = performance.now();
    let nextSlot = Math.max(...slotOf.values()) + 1;
    for (const [i, from] of old.entries()) {
      const to = fresh[i]!;
      const slot = slotOf.get(from)!;
      const { argv } = await apiserverArgv(slot);
      // DNS moves first: the departing address stays an upstream until the new one passes its checks.
      await writeHosts([...fresh.slice(0, i + 1), ...old.slice(i + 1)]);
      await new Promise((r) => setTimeout(r, 3000)); // more than one --dns-refresh with the new answer
      assert.ok(await upstreamUp(from), `${from} is kept while its replacement ${to} has not passed its checks: ${JSON.stringify(await proxyUpstreams())}`);
      const newSlot = nextSlot++;
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
      await waitFor(() => inUse(to), { timeoutMs: 180_000, intervalMs: 300, what: `replacement ${to} ${discovery ? 'discovered and ' : ''}up in the proxy` });
      const left = () =>
        waitFor(async () => !(await proxyUpstreams()).some((u) => u.upstream === `${from}:6443`), {
          timeoutMs: 60_000,
          intervalMs: 300,
          what: `${from} leaves the proxy once ${to} is up`,
        });
      // Without discovery the name alone moves the proxy off the old address, before it stops; with
      // discovery the old apiserver is listed until its shutdown takes it out of default/kubernetes.
      if (!discovery) await left();
      await stopApiserver(slot);
      if (discovery) await left();
      slotOf.delete(from);
    }
    figure(`${label}: three apiservers at new addresses (s)`, seconds(t));
    await waitFor(() => nodeReady(startedAt + 1000), { timeoutMs: 90_000, intervalMs: 500, what: 'Node Ready with a heartbeat after the replacement' });
    const renewed = Date.parse((await kubectl(['-n', 'kube-node-lease', 'get', 'lease', node, '-o', 'jsonpath={.spec.renewTime}'])).trim());
    assert.ok(renewed > startedAt, 'the node lease is renewed through the new apiservers');
    const result = await poller.stop();
    figure(`${label}: API requests through the proxy (every 100 ms)`, result.sent);
    figure(`${label}: failed requests`, result.failed);
    figure(`${label}: longest gap in API access (ms)`, result.longestGapMs);
    const us = await proxyUpstreams();
    assert.deepEqual(us.map((u) => u.upstream).sort(), fresh.map((a) => `${a}:6443`).sort(), 'the proxy follows the name to the new addresses only');
    assert.ok(result.sent > 100, `the poller ran through the replacement (${result.sent} requests)`);
    assert.ok(result.longestGapMs < 10_000, `the longest gap in API access is under 10 s (${result.longestGapMs} ms)`);
    return result;
  };

  test(
    'control plane replaced: all three apiservers move to new addresses one at a time behind a DNS name; the node keeps the API and stays Ready',
    { timeout: 10 * 60_000 },
    async () => {
      env.ADDRS.split(' ').forEach((a, i) => slotOf.set(a, i + 1));
      // Each address leaves the proxy before its apiserver stops: no request meets a shutdown, /readyz included.
      await replaceControlPlane({ label: 'replacement', discovery: false, to: ['198.51.100.5', '198.51.100.6', '198.51.100.7'], poll: '/readyz' });
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
      assert.equal(result.failed, 0, `failed requests during the roll: ${JSON.stringify(result.failures)}`);
      assert.ok(
        even,
        `connections within 20 % of even 2 minutes after the roll (${last.us.map((u) => `${u.upstream}=${u.active}`).join(' ')}; largest deviation ${Math.round(last.worst * 100)} %)`,
      );
    },
  );

  test(
    'control plane replaced with discovery: the apiservers move again, found through default/kubernetes and their DNS names; no request fails',
    { timeout: 10 * 60_000 },
    async () => {
      // An apiserver is listed in default/kubernetes until its SIGTERM: the proxy lets it go within
      // the debounce and a check, while its shutdown delay serves the requests that still reach it
      // and answers /readyz 500. The client polls /livez, as in the roll.
      const result = await replaceControlPlane({
        label: 'replacement with discovery',
        discovery: true,
        to: ['198.51.100.11', '198.51.100.12', '198.51.100.13'],
        poll: '/livez',
      });
      assert.equal(result.failed, 0, `failed requests during the replacement with discovery: ${JSON.stringify(result.failures)}`);
    },
  );
});
