// One source for every node manifest: deploy/'s pods and DaemonSet, the docs' copies and the pod
// `kubeward plan render` writes all come from src/manifests/ (npm run manifests writes the files);
// every image reference names the one image the build tags; every node pod hands its listeners to
// its successor on an upgrade.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { findSnippets } from '../../src/manifests/doc-snippets.ts';
import { KUBEWARD_IMAGE } from '../../src/manifests/kubeward-image.ts';
import { HANDOVER_WAIT_S } from '../../src/manifests/handover-parts.ts';
import { SHUTDOWN_GRACE_S } from '../../src/manifests/proxy-static-pod.ts';
import { renderShipped, renderSnippet, shippedManifests } from '../../src/manifests/shipped-manifests.ts';
import { parseInventory } from '../../src/plan/parse-inventory.ts';
import { renderPlan } from '../../src/plan/render-plan.ts';

const ROOT = join(import.meta.dirname, '../..');
const FIX = 'run `npm run manifests` (or change src/manifests/, not the file)';

async function filesUnder(dir: string, ext: RegExp): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(ROOT, dir), { withFileTypes: true, recursive: true })) {
    if (e.isFile() && ext.test(e.name)) out.push(join(e.parentPath, e.name).slice(ROOT.length + 1));
  }
  return out.sort();
}

interface Container {
  name: string;
  image: string;
  args?: string[];
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
}
interface PodSpec {
  terminationGracePeriodSeconds?: number;
  containers: Container[];
}
interface PodLike {
  kind: string;
  spec: Partial<PodSpec> & {
    template?: { spec: PodSpec };
    updateStrategy?: { type: string; rollingUpdate?: { maxSurge?: number; maxUnavailable?: number } };
  };
}
const podSpecOf = (o: PodLike): Partial<PodSpec> => o.spec.template?.spec ?? o.spec;
const containersOf = (o: PodLike): Container[] => podSpecOf(o).containers ?? [];

test('deploy/ holds exactly what src/manifests renders, byte for byte', async () => {
  for (const m of shippedManifests()) {
    assert.equal(await readFile(join(ROOT, m.path), 'utf8'), renderShipped(m), `${m.path} differs from src/manifests; ${FIX}`);
  }
});

test("the docs' copies of shipped manifests are the rendered manifests", async () => {
  const byPath = new Map(shippedManifests().map((m) => [m.path, m]));
  const seen: string[] = [];
  for (const doc of [...(await filesUnder('docs', /\.md$/)), 'README.md']) {
    for (const s of findSnippets(await readFile(join(ROOT, doc), 'utf8'))) {
      const m = byPath.get(s.path);
      const expected = m ? renderSnippet(m) : s.path.endsWith('.service') ? await readFile(join(ROOT, s.path), 'utf8').catch(() => undefined) : undefined;
      assert.ok(expected !== undefined, `${doc}: <!-- manifest: ${s.path} --> names no shipped manifest or unit`);
      assert.equal(s.body, expected, `${doc}: the copy of ${s.path} differs; ${FIX}`);
      seen.push(`${doc}:${s.path}`);
    }
  }
  assert.ok(seen.includes('docs/proxy.md:deploy/proxy/static-pod.yaml'), 'docs/proxy.md shows the proxy pod');
  assert.ok(seen.includes('docs/routes.md:deploy/routes/static-pod.yaml'), 'docs/routes.md shows the routes pod');
  assert.ok(seen.includes('docs/routes.md:deploy/routes/kubeward-routes.service'), 'docs/routes.md shows the routes unit');
  // No other pod manifest in the docs: a hand-written one would drift.
  for (const doc of await filesUnder('docs', /\.md$/)) {
    const text = await readFile(join(ROOT, doc), 'utf8');
    const unmarked = [...text.matchAll(/^(<!-- manifest: \S+ -->\n)?```(?:ya?ml|ini)\n(?:(?!```)[\s\S])*?^(kind: Pod|kind: DaemonSet|\[Service\])$/gm)].filter((m) => m[1] === undefined);
    assert.deepEqual(unmarked.map((m) => m[2]), [], `${doc}: a ${unmarked[0]?.[2]} written by hand; mark it with <!-- manifest: deploy/... -->`);
  }
});

test('every image reference in deploy/, the docs and the plan defaults is the image the build tags', async () => {
  const refs: string[] = [];
  for (const f of [...(await filesUnder('deploy', /\.ya?ml$/)), ...(await filesUnder('docs', /\.md$/)), 'README.md']) {
    const text = await readFile(join(ROOT, f), 'utf8');
    for (const m of text.matchAll(/^\s*(?:- )?image: ["']?([^\s"'#]+)/gm)) {
      refs.push(m[1]!);
      assert.equal(m[1], KUBEWARD_IMAGE, `${f}: image ${m[1]}; every manifest names ${KUBEWARD_IMAGE} (npm run image tags it; push it with --push REGISTRY)`);
    }
  }
  assert.ok(refs.length >= 7, `image references found: ${refs.length}`);
  const script = await readFile(join(ROOT, 'deploy/image/build-image.sh'), 'utf8');
  assert.match(script, /KUBEWARD_IMAGE_NAME:-localhost\/kubeward\}/, 'the build names its image localhost/kubeward');
  assert.match(script, /"\$name:\$version/, 'the build also tags <name>:<version>');
  const parsed = parseInventory({ source: 'inventory.yaml', text: PLAN_INVENTORY });
  assert.ok(parsed.ok);
  const pod = renderPlan(parsed.inventory).find((f) => f.path === 'nodes/node1/etc/kubernetes/manifests/kubeward-proxy.yml');
  assert.match(pod!.content, new RegExp(`image: ${KUBEWARD_IMAGE.replace(/[.]/g, '\\.')}\\n`), 'plan renders the same image by default');
});

const PLAN_INVENTORY = [
  'hosts:',
  '  cp1: {ip: 10.0.0.11}',
  '  node1: {ip: 10.0.0.21}',
  'groups:',
  '  kube_control_plane: [cp1]',
  '  etcd: [cp1]',
  '  kube_node: [node1]',
  'vars:',
  '  loadbalancer_apiserver_type: kubeward',
].join('\n');

test('every node pod hands over on an upgrade: each container of deploy/ and the proxy pod plan renders; none shares a port with SO_REUSEPORT', async () => {
  const parsed = parseInventory({ source: 'inventory.yaml', text: PLAN_INVENTORY });
  assert.ok(parsed.ok);
  const planned = renderPlan(parsed.inventory).find((f) => f.path === 'nodes/node1/etc/kubernetes/manifests/kubeward-proxy.yml')!;
  const pods: [string, PodLike][] = [
    ...shippedManifests().map((m): [string, PodLike] => [m.path, m.object as unknown as PodLike]),
    ['plan render (node1)', parseAllDocuments(planned.content)[0]!.toJS() as PodLike],
  ];
  const modes: string[] = [];
  for (const [where, pod] of pods) {
    for (const c of containersOf(pod)) {
      const mode = c.args![0]!;
      modes.push(mode);
      assert.ok(!c.args!.includes('--reuse-port'), `${where}: no shipped pod lets another process join its ports (--reuse-port)`);
      const socket = c.args!.find((a) => a.startsWith('--handover-socket='))?.split('=')[1];
      // A directory of the container's uid that only that mode's pods mount (docs/design/listener-handover.md).
      const expected = mode === 'proxy' ? '/var/lib/kubeward/proxy-handover/' : `/run/kubeward-handover/${mode}/`;
      assert.ok(socket?.startsWith(expected), `${where} ${c.name}: the listeners go to the successor over a socket in ${expected} (${socket})`);
      const hook = c.lifecycle?.preStop?.exec?.command ?? [];
      assert.deepEqual(hook.slice(0, 2), ['/usr/local/bin/node', '/opt/kubeward/src/handover/await-successor.ts'], `${where} ${c.name}: preStop waits for the successor`);
      const handedOver = { proxy: '127.0.0.1:6443', agent: '127.0.0.1:9456', watch: '127.0.0.1:9450', routes: '127.0.0.1:9451' }[mode];
      assert.ok(handedOver && hook.includes(handedOver), `${where} ${c.name}: the hook waits on a handed-over address (${handedOver})`);
      const drain = mode === 'proxy' ? SHUTDOWN_GRACE_S : 0;
      if (mode === 'proxy') assert.ok(c.args!.includes(`--shutdown-grace=${SHUTDOWN_GRACE_S}s`));
      assert.ok(podSpecOf(pod).terminationGracePeriodSeconds! > HANDOVER_WAIT_S + drain, `${where}: the grace covers the wait and the shutdown`);
    }
    // A DaemonSet hands over only if the new pod starts while the old one runs.
    if (pod.kind === 'DaemonSet') assert.deepEqual(pod.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } }, where);
  }
  assert.deepEqual(modes.sort(), ['agent', 'proxy', 'proxy', 'routes', 'routes', 'watch', 'watch'], 'every container of every node pod was looked at');
});
