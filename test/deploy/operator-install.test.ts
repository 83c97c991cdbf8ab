// The operator's install as docs/operator.md writes it, against a real kube-apiserver: the
// documented commands succeed on their first run (the CRD is established before the ManagedCluster
// arrives), the default install reads Secrets in its watched namespaces only, the cluster-wide
// overlay grants what its header says, and the operator itself, under its service account's token
// and nothing else, lists the Secrets of the namespaces it is given and is refused elsewhere.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { kubeApiserverMissing, startKubeApiserver, type KubeTestServer } from '../../testkit/kube/kube-test-server.ts';
import { KubewardProcess, envWithoutOpenStack } from '../../testkit/kubeward-process.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
const SA = 'system:serviceaccount:kubeward-system:kubeward-operator';

const kubectlVersion = await run('kubectl', ['version', '--client', '-o', 'json']).then(
  (r) => JSON.parse(r.stdout) as { kustomizeVersion?: string },
  () => undefined,
);
const kustomizeMajor = Number(/^v(\d+)/.exec(kubectlVersion?.kustomizeVersion ?? '')?.[1] ?? 0);
const kubeSkip =
  kubeApiserverMissing() ??
  (kubectlVersion ? (kustomizeMajor >= 4 ? false : `kubectl's kustomize is ${kubectlVersion.kustomizeVersion ?? 'missing'}; deploy/operator needs kustomize v4+`) : 'no kubectl; install one (Debian: kubernetes-client)');

/** The kubectl lines of the first sh block under the operator's install heading, comments cut. */
async function documentedInstall(): Promise<string[][]> {
  const page = await readFile(join(ROOT, 'docs/operator.md'), 'utf8');
  const section = page.slice(page.indexOf('### operator: kustomize base'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
  return block
    .split('\n')
    .map((l) => l.replace(/#.*$/, '').trim())
    .filter((l) => l.startsWith('kubectl '))
    .map((l) => l.split(/\s+/).slice(1));
}

test('the documented install is the CRD, a wait for it to be established, then the overlay', async () => {
  const lines = await documentedInstall();
  assert.deepEqual(
    lines.map((l) => l.slice(0, 2).join(' ')),
    ['apply --server-side', 'wait --for', 'apply --server-side'],
  );
  assert.ok(lines[0]!.includes('deploy/operator/base/managedcluster-crd.yaml'));
  assert.ok(lines[1]!.includes('crd/managedclusters.kubeward.io'));
});

test('the base grants no Secret outside its watched namespace: its ClusterRole names none, its Role is in kubeward-clusters, and the operator is told that namespace', { skip: kubectlVersion ? false : 'no kubectl; install one (Debian: kubernetes-client)' }, async () => {
  const { stdout } = await run('kubectl', ['kustomize', join(ROOT, 'deploy/operator/base')]);
  type Obj = { kind: string; metadata: { name: string; namespace?: string }; rules?: { resources: string[] }[]; spec?: { template: { spec: { containers: { args: string[] }[] } } } };
  const objs = parseAllDocuments(stdout).map((d) => d.toJS() as Obj);
  const secretRules = objs.filter((o) => o.rules?.some((r) => r.resources.includes('secrets')));
  assert.deepEqual(
    secretRules.map((o) => `${o.kind} ${o.metadata.namespace ?? '(cluster)'}/${o.metadata.name}`),
    ['Role kubeward-clusters/kubeward-operator-secrets'],
  );
  const args = objs.find((o) => o.kind === 'Deployment')!.spec!.template.spec.containers[0]!.args;
  assert.ok(args.includes('--namespace=kubeward-clusters'), args.join(' '));
});

describe('the operator install on a real kube-apiserver', { skip: kubeSkip }, () => {
  let kube: KubeTestServer;
  let dir: string;
  const procs: KubewardProcess[] = [];
  const kubectl = async (args: string[]): Promise<string> => {
    const r = await run('kubectl', ['--kubeconfig', kube.kubeconfigPath, ...args], { cwd: ROOT, maxBuffer: 16 << 20 }).catch((e: { stderr?: string; message: string }) => {
      throw new Error(`kubectl ${args.join(' ')}: ${e.stderr?.trim() || e.message}`);
    });
    return r.stdout;
  };
  // can-i prints yes or no and exits 0 or 1.
  const can = (args: string[]) =>
    run('kubectl', ['--kubeconfig', kube.kubeconfigPath, 'auth', 'can-i', '--as', SA, ...args]).then(
      (r) => r.stdout.trim(),
      (e: { stdout?: string; message: string }) => e.stdout?.trim() || e.message,
    );

  before(async () => {
    kube = await startKubeApiserver();
    dir = await mkdtemp(join(tmpdir(), 'kw-operator-install-'));
  });
  after(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await kube?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('the documented commands succeed on their first run, each once, on an empty apiserver', async () => {
    for (const args of await documentedInstall()) await kubectl(args);
    await kubectl(['-n', 'tenant-a', 'get', 'managedcluster', 'k1']);
    const dep = JSON.parse(await kubectl(['-n', 'kubeward-system', 'get', 'deployment', 'kubeward-operator', '-o', 'json'])) as {
      spec: { template: { spec: { containers: { args: string[] }[] } } };
    };
    assert.ok(dep.spec.template.spec.containers[0]!.args.includes('--namespace=tenant-a'));
  });

  test('the example reads Secrets in tenant-a only, and never writes one', async () => {
    for (const verb of ['get', 'list', 'watch']) assert.equal(await can([verb, 'secrets', '-n', 'tenant-a']), 'yes', `${verb} in tenant-a`);
    for (const verb of ['create', 'update', 'patch', 'delete']) assert.equal(await can([verb, 'secrets', '-n', 'tenant-a']), 'no', `no ${verb}`);
    for (const ns of ['kube-system', 'kubeward-system', 'default']) assert.equal(await can(['get', 'secrets', '-n', ns]), 'no', `no Secret in ${ns}`);
    assert.equal(await can(['list', 'secrets', '-A']), 'no', 'no cluster-wide list');
    assert.equal(await can(['watch', 'managedclusters.kubeward.io', '-A']), 'yes');
    assert.equal(await can(['patch', 'managedclusters.kubeward.io/status', '-n', 'tenant-a']), 'yes');
  });

  test("the operator under its service account's token lists the Secrets of its namespaces, and is refused in a namespace without the Role", async () => {
    const { stdout: token } = await run('kubectl', ['--kubeconfig', kube.kubeconfigPath, '-n', 'kubeward-system', 'create', 'token', 'kubeward-operator']);
    const kc = join(dir, 'operator.kubeconfig');
    await writeFile(
      kc,
      [
        'apiVersion: v1',
        'kind: Config',
        'current-context: op',
        `clusters: [{ name: k, cluster: { server: "https://127.0.0.1:${kube.port}", certificate-authority: ${kube.caFile} } }]`,
        `users: [{ name: op, user: { token: "${token.trim()}" } }]`,
        'contexts: [{ name: op, context: { cluster: k, user: op } }]',
        '',
      ].join('\n'),
    );
    const start = (namespace: string): KubewardProcess => {
      const p = new KubewardProcess(
        ['operator', '--kubeconfig', kc, '--namespace', namespace, '--controllers', 'deorbit', '--lease-namespace', 'kubeward-system', '--admin-address', 'off'],
        { env: envWithoutOpenStack() },
      );
      procs.push(p);
      return p;
    };
    // Granted: the Secret cache of tenant-a syncs (its list is the first thing a refusal would stop).
    const granted = start('tenant-a');
    await granted.waitForLog(/^became leader$/, { timeoutMs: 60_000 });
    // Not granted: kube-system has no Role for the operator, so its Secret list is refused.
    const refused = start('tenant-a,kube-system');
    const line = await refused.waitForLog(/list\/watch failed/, { timeoutMs: 60_000, where: (l) => l.informer === 'secrets in kube-system' });
    assert.match(JSON.stringify(line), /forbidden|403/i);
    await refused.stop();
    assert.doesNotMatch(granted.stderr, /forbidden|list\/watch failed/i, 'the granted operator was refused something');
    await granted.stop();
  });

  test('the cluster-wide overlay grants every Secret, as its header says, and drops --namespace', async () => {
    const header = await readFile(join(ROOT, 'deploy/operator/overlays/cluster-wide-secrets/kustomization.yaml'), 'utf8');
    assert.match(header, /EVERY Secret in EVERY namespace/);
    await kubectl(['apply', '--server-side', '-k', 'deploy/operator/overlays/cluster-wide-secrets']);
    assert.equal(await can(['list', 'secrets', '-A']), 'yes');
    assert.equal(await can(['create', 'secrets', '-n', 'kube-system']), 'no', 'still no write');
    const dep = JSON.parse(await kubectl(['-n', 'kubeward-system', 'get', 'deployment', 'kubeward-operator', '-o', 'json'])) as {
      spec: { template: { spec: { containers: { args: string[] }[] } } };
    };
    assert.deepEqual(
      dep.spec.template.spec.containers[0]!.args.filter((a) => a.startsWith('--namespace')),
      [],
    );
  });
});
