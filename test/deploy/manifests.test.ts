// deploy/: every way kubeward is installed. The flags each manifest and unit passes exist in the
// mode's --help; the Kubernetes objects are applied to a real kube-apiserver with server-side apply
// (the operator's kustomize base, example and two-shards overlays for real, the static pods and the DaemonSet
// as a server-side dry run, which validates them against the API's schema), and the operator's
// RBAC grants what it needs and not more.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { kubeApiserverMissing, startKubeApiserver, type KubeTestServer } from '../../testkit/kube/kube-test-server.ts';
import { runKubeward } from '../../testkit/kubeward-process.ts';
import { waitFor } from '../../testkit/wait-for.ts';
import { daemonSetForApiserver120 } from '../kubelet/adapt-manifest.ts';

const run = promisify(execFile);
const DEPLOY = join(import.meta.dirname, '../../deploy');
const POD_MANIFESTS = ['proxy/static-pod.yaml', 'watch/static-pod.yaml', 'routes/static-pod.yaml', 'node-agents/daemonset.yaml', 'agent/static-pod.yaml'];
const UNITS = ['proxy/kubeward-proxy.service', 'watch/kubeward-watch.service', 'routes/kubeward-routes.service', 'agent/kubeward-agent.service'];

const kubectlVersion = await run('kubectl', ['version', '--client', '-o', 'json']).then(
  (r) => JSON.parse(r.stdout) as { kustomizeVersion?: string },
  () => undefined,
);
const kustomizeMajor = Number(/^v(\d+)/.exec(kubectlVersion?.kustomizeVersion ?? '')?.[1] ?? 0);
const kubeSkip =
  kubeApiserverMissing() ??
  (kubectlVersion ? (kustomizeMajor >= 4 ? false : `kubectl's kustomize is ${kubectlVersion.kustomizeVersion ?? 'missing'}; deploy/operator needs kustomize v4+ (kubectl 1.21+)`) : 'no kubectl; install one (Debian: kubernetes-client)');

interface Invocation {
  where: string;
  mode: string;
  flags: string[];
}

/** The kubeward invocations of a pod manifest: each container's args (or command after "kubeward"). */
function podInvocations(file: string, text: string): Invocation[] {
  const out: Invocation[] = [];
  for (const doc of parseAllDocuments(text)) {
    const obj = doc.toJS() as { spec?: { containers?: unknown[]; template?: { spec?: { containers?: unknown[] } } } };
    const containers = (obj.spec?.containers ?? obj.spec?.template?.spec?.containers ?? []) as { name: string; command?: string[]; args?: string[] }[];
    for (const c of containers) {
      const argv = c.command?.[0] === 'kubeward' ? [...c.command.slice(1), ...(c.args ?? [])] : (c.args ?? []);
      out.push({ where: `${file} container ${c.name}`, mode: argv[0]!, flags: argv.slice(1).filter((a) => a.startsWith('--')).map((a) => a.split('=')[0]!) });
    }
  }
  return out;
}

function unitInvocation(file: string, text: string): Invocation {
  const exec = /^ExecStart=(.*(?:\\\n.*)*)/m.exec(text)![1]!.replace(/\\\n/g, ' ');
  const argv = exec.split(/\s+/).filter(Boolean);
  assert.equal(argv[0], '/usr/local/bin/kubeward', `${file}: ExecStart runs /usr/local/bin/kubeward`);
  return { where: file, mode: argv[1]!, flags: argv.slice(2).filter((a) => a.startsWith('--')).map((a) => a.split('=')[0]!) };
}

test('every flag a static pod, DaemonSet or systemd unit passes is a flag of its mode', async () => {
  const invocations: Invocation[] = [];
  for (const f of POD_MANIFESTS) invocations.push(...podInvocations(f, await readFile(join(DEPLOY, f), 'utf8')));
  for (const f of UNITS) invocations.push(unitInvocation(f, await readFile(join(DEPLOY, f), 'utf8')));
  assert.ok(invocations.length >= 7);
  const help = new Map<string, string>();
  for (const inv of invocations) {
    if (!help.has(inv.mode)) {
      const r = await runKubeward([inv.mode, '--help']);
      assert.equal(r.code, 0, `${inv.where}: kubeward ${inv.mode} --help: ${r.stderr}`);
      help.set(inv.mode, r.stdout);
    }
    for (const flag of inv.flags) assert.match(help.get(inv.mode)!, new RegExp(`${flag}[ ,\\n]`), `${inv.where}: kubeward ${inv.mode} has no ${flag}`);
  }
});

test('the proxy static pod is an nginx-proxy drop-in that can overlap its successor', async () => {
  const text = await readFile(join(DEPLOY, 'proxy/static-pod.yaml'), 'utf8');
  const pod = parseAllDocuments(text)[0]!.toJS() as {
    metadata: { namespace: string };
    spec: { hostNetwork: boolean; priorityClassName: string; terminationGracePeriodSeconds: number; containers: { args: string[]; image: string; lifecycle: { preStop: { exec: { command: string[] } } } }[] };
  };
  assert.equal(pod.metadata.namespace, 'kube-system');
  assert.equal(pod.spec.hostNetwork, true);
  assert.equal(pod.spec.priorityClassName, 'system-node-critical');
  const c = pod.spec.containers[0]!;
  assert.ok(c.args.includes('--handover-socket=/var/lib/kubeward/proxy-handover/listeners.sock'), 'listeners handed to the successor');
  assert.ok(!c.args.includes('--reuse-port'), 'no port another process of the uid could join');
  const hook = c.lifecycle.preStop.exec.command;
  assert.deepEqual(hook.slice(0, 2), ['/usr/local/bin/node', '/opt/kubeward/src/handover/await-successor.ts']);
  const hookTimeout = Number(/^(\d+)s$/.exec(hook[hook.indexOf('--timeout') + 1]!)![1]);
  const grace = Number(/^(\d+)s$/.exec(c.args.find((a) => a.startsWith('--shutdown-grace='))!.split('=')[1]!)![1]);
  assert.ok(pod.spec.terminationGracePeriodSeconds > hookTimeout + grace, 'the grace period covers the preStop wait and the drain');
});

describe('deploy/ applied to a real kube-apiserver (server-side apply)', { skip: kubeSkip }, () => {
  let kube: KubeTestServer;
  const kubectl = async (args: string[], input?: string): Promise<string> => {
    const child = execFile('kubectl', ['--kubeconfig', kube.kubeconfigPath, ...args], { maxBuffer: 16 << 20 });
    if (input !== undefined) child.stdin!.end(input);
    else child.stdin!.end();
    let out = '';
    let err = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((r) => child.once('exit', r));
    if (code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${err.trim()}`);
    return out;
  };

  before(async () => {
    kube = await startKubeApiserver();
  });
  after(async () => {
    await kube?.stop();
  });

  test('the operator: kustomize base and example overlay, applied server-side; RBAC as needed', async () => {
    const base = await kubectl(['kustomize', join(DEPLOY, 'operator/base')]);
    assert.deepEqual(
      [...base.matchAll(/^kind: (\S+)/gm)].map((m) => m[1]).sort(),
      // Two of Namespace, Role and RoleBinding: the operator's own, and the watched namespace with its Secret reads.
      ['ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'Deployment', 'Namespace', 'Namespace', 'NetworkPolicy', 'Role', 'Role', 'RoleBinding', 'RoleBinding', 'ServiceAccount'],
    );
    const overlay = await kubectl(['kustomize', join(DEPLOY, 'operator/overlays/example')]);
    const apply = () => kubectl(['apply', '--server-side', '--field-manager=kubeward-deploy-test', '-f', '-'], overlay);
    // The ManagedCluster can be applied only once its CRD is established.
    await apply().catch(() => undefined);
    await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/managedclusters.kubeward.io']);
    await waitFor(() => apply().then(() => true), { timeoutMs: 30_000, intervalMs: 1000, what: 'the overlay applied whole' });
    await apply(); // again: server-side apply is idempotent, no conflicts with itself

    const dep = JSON.parse(await kubectl(['-n', 'kubeward-system', 'get', 'deployment', 'kubeward-operator', '-o', 'json'])) as {
      spec: { replicas: number; template: { spec: { containers: { image: string; args: string[] }[]; securityContext: { runAsNonRoot: boolean } } } };
    };
    assert.equal(dep.spec.replicas, 1);
    assert.equal(dep.spec.template.spec.containers[0]!.image, 'localhost/kubeward:0.1.0');
    assert.ok(dep.spec.template.spec.containers[0]!.args.includes('--controllers=deorbit,routegc'));
    assert.equal(dep.spec.template.spec.securityContext.runAsNonRoot, true);
    await kubectl(['-n', 'kubeward-system', 'get', 'networkpolicy', 'kubeward-operator']);
    await kubectl(['-n', 'tenant-a', 'get', 'managedcluster', 'k1']);

    const sa = 'system:serviceaccount:kubeward-system:kubeward-operator';
    // can-i prints yes or no and exits 0 or 1.
    const can = (args: string[]) =>
      run('kubectl', ['--kubeconfig', kube.kubeconfigPath, 'auth', 'can-i', '--as', sa, ...args]).then(
        (r) => r.stdout.trim(),
        (e: { stdout?: string; message: string }) => e.stdout?.trim() || e.message,
      );
    assert.equal(await can(['watch', 'managedclusters.kubeward.io', '-A']), 'yes');
    assert.equal(await can(['patch', 'managedclusters.kubeward.io/status', '-n', 'tenant-a']), 'yes');
    assert.equal(await can(['get', 'secrets', '-n', 'tenant-a']), 'yes');
    // list/watch feed the metadata-only cache of credential resourceVersions: clients are
    // rebuilt when a credential changes, and no Secret is read on an ordinary cycle. Never a write.
    assert.equal(await can(['watch', 'secrets', '-n', 'tenant-a']), 'yes');
    for (const verb of ['create', 'update', 'patch', 'delete']) assert.equal(await can([verb, 'secrets', '-n', 'tenant-a']), 'no', `no ${verb} on Secrets`);
    assert.equal(await can(['update', 'leases', '-n', 'kubeward-system']), 'yes');
    assert.equal(await can(['update', 'leases', '-n', 'kube-system']), 'no', 'Leases in its own namespace only');
    assert.equal(await can(['delete', 'managedclusters.kubeward.io', '-n', 'tenant-a']), 'no');
  });

  test('the operator in two shards: the two-shards overlay applied server-side, one Deployment per shard, selectors apart', async () => {
    const text = await kubectl(['kustomize', join(DEPLOY, 'operator/overlays/two-shards')]);
    const objs = parseAllDocuments(text).map((d) => d.toJS() as { kind: string; metadata: { name: string } });
    const deployments = objs.filter((o) => o.kind === 'Deployment').map((o) => o.metadata.name).sort();
    assert.deepEqual(deployments, ['kubeward-operator-shard-0', 'kubeward-operator-shard-1'], 'the base Deployment only as its two shards');
    assert.equal(objs.filter((o) => o.kind === 'CustomResourceDefinition').length, 1, 'the rest of the base once');
    const apply = () => kubectl(['apply', '--server-side', '--field-manager=kubeward-deploy-test-shards', '-f', '-'], text);
    await apply().catch(() => undefined);
    await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd/managedclusters.kubeward.io']);
    await waitFor(() => apply().then(() => true), { timeoutMs: 30_000, intervalMs: 1000, what: 'the two-shards overlay applied whole' });
    await apply();
    type Dep = { spec: { selector: { matchLabels: Record<string, string> }; template: { metadata: { labels: Record<string, string> }; spec: { serviceAccountName: string; containers: { args: string[] }[] } } } };
    const shards: Dep[] = [];
    for (const i of [0, 1]) shards.push(JSON.parse(await kubectl(['-n', 'kubeward-system', 'get', 'deployment', `kubeward-operator-shard-${i}`, '-o', 'json'])) as Dep);
    for (const [i, dep] of shards.entries()) {
      const args = dep.spec.template.spec.containers[0]!.args;
      assert.equal(args.filter((a) => a.startsWith('--shard')).join(), `--shard=${i}/2`);
      assert.equal(dep.spec.template.spec.serviceAccountName, 'kubeward-operator');
      assert.equal(dep.spec.template.metadata.labels['app.kubernetes.io/name'], 'kubeward-operator', 'the NetworkPolicy selects every shard');
      // The flags as the pod passes them pass the operator's own checks (it stops at the missing kubeconfig instead).
      const r = await runKubeward([...args, '--kubeconfig', '/nonexistent', '--admin-address', 'off']);
      assert.doesNotMatch(r.stderr, /--shard|unknown option/, `shard ${i}: ${r.stderr}`);
    }
    const selects = (sel: Record<string, string>, labels: Record<string, string>) => Object.entries(sel).every(([k, v]) => labels[k] === v);
    assert.ok(!selects(shards[0]!.spec.selector.matchLabels, shards[1]!.spec.template.metadata.labels), 'shard 0 does not select shard 1\'s pods');
    assert.ok(!selects(shards[1]!.spec.selector.matchLabels, shards[0]!.spec.template.metadata.labels), 'shard 1 does not select shard 0\'s pods');
    const can = (args: string[]) =>
      run('kubectl', ['--kubeconfig', kube.kubeconfigPath, 'auth', 'can-i', '--as', 'system:serviceaccount:kubeward-system:kubeward-operator', ...args]).then(
        (r) => r.stdout.trim(),
        (e: { stdout?: string; message: string }) => e.stdout?.trim() || e.message,
      );
    assert.equal(await can(['update', 'leases/kubeward-operator-shard-1-of-2', '-n', 'kubeward-system']), 'yes', 'each shard\'s Lease');
  });

  test('the static pods and the DaemonSet validate against the API (server-side dry run)', async () => {
    for (const f of POD_MANIFESTS) {
      const text = await readFile(join(DEPLOY, f), 'utf8');
      const sent = f === 'node-agents/daemonset.yaml' ? daemonSetForApiserver120(text) : text;
      const out = await kubectl(['apply', '--server-side', '--dry-run=server', '--field-manager=kubeward-deploy-test', '-f', '-'], sent);
      assert.match(out, /serverside-applied \(server dry run\)/, f);
    }
    assert.deepEqual((await readdir(join(DEPLOY, 'proxy'))).sort(), ['kubeward-proxy.service', 'proxy.yaml', 'static-pod.yaml']);
  });
});
