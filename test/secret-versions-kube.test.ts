// Reads from caches: the operator's Secret cache asks a real kube-apiserver for metadata
// only (PartialObjectMetadata), so no Secret's contents reach it, and it follows a rotation by its
// resourceVersion: what decides when a cluster's clients are rebuilt (cluster-clients.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { systemClock } from '../src/base/clock.ts';
import { createSilentLogger } from '../src/base/logger.ts';
import { createKubeApi, type KubeApi } from '../src/clients/kube/kube-api.ts';
import { loadKubeConfig } from '../src/clients/kube/load-kube-config.ts';
import { SecretVersions } from '../src/controllers/managed-cluster/secret-versions.ts';
import { ensureNamespace } from '../testkit/kube/kube-objects.ts';
import { kubeApiserverMissing, startKubeApiserver, type KubeTestServer } from '../testkit/kube/kube-test-server.ts';
import { waitFor } from '../testkit/wait-for.ts';

const NS = `secver-${process.pid}`;

describe("the operator's Secret versions cache (real kube-apiserver)", { skip: kubeApiserverMissing() }, () => {
  let kube: KubeTestServer;
  let api: KubeApi;
  before(async () => {
    kube = await startKubeApiserver();
    api = createKubeApi(loadKubeConfig({ kind: 'file', path: kube.kubeconfigPath }));
    await ensureNamespace(api, NS);
  });
  after(async () => {
    await kube?.stop();
  });

  test('lists and watches metadata only, and sees a rotation by its resourceVersion', async (t) => {
    const made = await api.secrets.create({ metadata: { name: 'k1-cloud', namespace: NS }, data: { 'clouds.yaml': Buffer.from('secret').toString('base64') } });
    const page = await api.secrets.list(NS, { metadataOnly: true });
    assert.ok(page.items.length >= 1);
    assert.ok(
      page.items.every((s) => s.data === undefined),
      'a metadata list carries no Secret data',
    );
    const versions = new SecretVersions({ secrets: api.secrets, namespace: NS, clock: systemClock, log: createSilentLogger() });
    versions.start();
    t.after(() => versions.close());
    await waitFor(() => versions.version(NS, 'k1-cloud') === made.metadata.resourceVersion, { timeoutMs: 20_000, what: 'the first version' });
    const rotated = await api.secrets.replace({ ...made, data: { 'clouds.yaml': Buffer.from('rotated').toString('base64') } });
    assert.notEqual(rotated.metadata.resourceVersion, made.metadata.resourceVersion);
    await waitFor(() => versions.version(NS, 'k1-cloud') === rotated.metadata.resourceVersion, {
      timeoutMs: 20_000,
      what: 'the rotation, through the metadata watch',
    });
    assert.equal(versions.version(NS, 'no-such-secret'), undefined);
  });

  test("a namespace with no Secret at all is an empty list (the apiserver writes its metadata list's items as null), and the watch then sees the first", async (t) => {
    const empty = `${NS}-empty`;
    await ensureNamespace(api, empty);
    assert.deepEqual((await api.secrets.list(empty, { metadataOnly: true })).items, []);
    const versions = new SecretVersions({ secrets: api.secrets, namespace: [NS, empty], clock: systemClock, log: createSilentLogger() });
    versions.start();
    t.after(() => versions.close());
    const first = await api.secrets.create({ metadata: { name: 'first', namespace: empty }, data: { a: Buffer.from('x').toString('base64') } });
    await waitFor(() => versions.version(empty, 'first') === first.metadata.resourceVersion, {
      timeoutMs: 20_000,
      what: 'the first Secret of an empty namespace',
    });
  });
});
