import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parse as parseWithYaml, stringify } from 'yaml';
import type { Secret } from '../../clients/kube/kube-types.ts';
import type { ResourceClient } from '../../clients/kube/resource-client.ts';
import { parseClouds, secretClusterSource } from './cluster-clients.ts';
import type { ManagedCluster } from './managed-cluster.ts';

const KUBECONFIG = `apiVersion: v1
kind: Config
clusters: [{ name: c, cluster: { server: 'https://127.0.0.1:6443' } }]
users: [{ name: u, user: { token: t } }]
contexts: [{ name: x, context: { cluster: c, user: u } }]
current-context: x
`;
const MC: ManagedCluster = {
  metadata: { name: 'k1', namespace: 't', uid: 'u1' },
  spec: { kubeconfigSecretRef: { name: 'kc' }, cloudCredentialsSecretRef: { name: 'cc', cloud: 'emu' } },
};

test('with the Secret versions cache, a cluster whose Secrets did not change is served without a read, and a new version rebuilds', async () => {
  const rv: Record<string, string> = { kc: '1', cc: '1' };
  let reads = 0;
  const secrets = {
    get: async (_ns: string, name: string) => {
      reads++;
      const data: Record<string, string> =
        name === 'kc' ? { kubeconfig: Buffer.from(KUBECONFIG).toString('base64') } : { 'clouds.yaml': Buffer.from('clouds: { emu: {} }').toString('base64') };
      return { metadata: { name, namespace: 't', resourceVersion: rv[name] }, data } satisfies Secret;
    },
  } as unknown as ResourceClient<Secret>;
  let builds = 0;
  const source = secretClusterSource({ secrets, versions: { version: (_ns, name) => rv[name] }, build: () => ({ n: ++builds }) });
  const first = await source.get(MC);
  assert.equal(reads, 2);
  assert.equal(await source.get(MC), first, 'same clients');
  assert.equal(reads, 2, 'no read while the versions are the ones built from');
  rv.cc = '2';
  const second = await source.get(MC);
  assert.notEqual(second, first, 'a rotated credential rebuilds the clients');
  assert.equal(reads, 4);
  assert.equal(builds, 2);
});

test('two controllers asking for one cluster at the same moment share one build (one Keystone token, not two)', async () => {
  let reads = 0;
  const secrets = {
    get: async (_ns: string, name: string) => {
      reads++;
      await new Promise((r) => setImmediate(r)); // both callers are in flight before either read returns
      const data: Record<string, string> =
        name === 'kc' ? { kubeconfig: Buffer.from(KUBECONFIG).toString('base64') } : { 'clouds.yaml': Buffer.from('clouds: { emu: {} }').toString('base64') };
      return { metadata: { name, namespace: 't', resourceVersion: '1' }, data } satisfies Secret;
    },
  } as unknown as ResourceClient<Secret>;
  let builds = 0;
  const source = secretClusterSource({ secrets, build: () => ({ n: ++builds }) });
  const [a, b] = await Promise.all([source.get(MC), source.get(MC)]);
  assert.equal(a, b, 'the same clients');
  assert.equal(builds, 1);
  assert.equal(reads, 2, 'each Secret read once');
});

test("a cluster's clouds.yaml reads the same with js-yaml (core schema) as with yaml, the parser of the other modes", () => {
  const scalar = fc.oneof(
    fc.string(),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constantFrom('3', 'true', 'null', '0x1f', '1e3', 'yes', '~', '2024-01-01', ''),
  );
  const key = fc.oneof(fc.string({ minLength: 1 }), fc.constantFrom('auth', 'auth_url', 'region_name', 'interface', 'identity_api_version'));
  const tree = fc.letrec((tie) => ({ node: fc.dictionary(key, fc.oneof({ depthSize: 'small' }, scalar, tie('node'))) })).node;
  fc.assert(
    fc.property(fc.dictionary(key, tree, { minKeys: 1 }), fc.boolean(), (doc, flow) => {
      const text = stringify({ clouds: doc }, { collectionStyle: flow ? 'flow' : 'block' });
      assert.deepEqual(parseClouds(text, 'Secret t/cc key clouds.yaml'), parseWithYaml(text));
    }),
  );
  // Text as people write it: plain scalars that the core schema types (and a date it leaves a string).
  const text =
    'clouds:\n  emu:\n    auth: {auth_url: http://k:5000/v3, password: 0123, username: "007"}\n    verify: false\n    identity_api_version: 3\n    since: 2024-01-01\n';
  assert.deepEqual(parseClouds(text, 's'), parseWithYaml(text));
});

test('a clouds.yaml that is not YAML, not a mapping, or has a key twice is refused with its source', () => {
  for (const text of ['clouds: [', '- a\n- b\n', 'just text', 'clouds:\n  a: 1\n  a: 2\n'])
    assert.throws(
      () => parseClouds(text, 'Secret t/cc key clouds.yaml'),
      (err: Error & { code?: string }) => err.code === 'E_CONFIG' && err.message.startsWith('Secret t/cc key clouds.yaml: '),
      JSON.stringify(text),
    );
});
