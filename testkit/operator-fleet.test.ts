import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { withOwnTlsIdentity } from './operator-fleet.ts';
import { createTestCa } from './certs.ts';

test("a cluster's own TLS identity: other CA bytes per cluster, the same certificate", async (t) => {
  const ca = await createTestCa('fleet-test-ca');
  t.after(() => ca.close());
  const kubeconfig = `apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: ${Buffer.from(ca.cert).toString('base64')}\n    server: https://127.0.0.1:6443\n  name: c\n`;
  const caOf = (text: string) => Buffer.from(/certificate-authority-data: (\S+)/.exec(text)![1]!, 'base64').toString();
  const a = caOf(withOwnTlsIdentity(kubeconfig, 'c1'));
  const b = caOf(withOwnTlsIdentity(kubeconfig, 'c2'));
  assert.notEqual(a, b);
  assert.equal(new X509Certificate(a).fingerprint256, new X509Certificate(ca.cert).fingerprint256);
  assert.equal(new X509Certificate(b).fingerprint256, new X509Certificate(ca.cert).fingerprint256);
  assert.ok(withOwnTlsIdentity(kubeconfig, 'c1').includes('server: https://127.0.0.1:6443'));
});
