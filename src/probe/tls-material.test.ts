import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createTestCa, type TestCa, type CertPair } from '../../testkit/certs.ts';
import { caBundleProblem, checkToken, clientPairProblem } from './tls-material.ts';

let ca: TestCa;
let client: CertPair;
let other: CertPair;
before(async () => {
  ca = await createTestCa();
  client = await ca.issueClient('client', 'kubeward', 'system:masters');
  other = await ca.issueClient('other', 'kubeward', 'system:masters');
});
after(() => ca.close());

test('a CA bundle must hold at least one certificate that parses', () => {
  assert.equal(caBundleProblem(ca.cert), undefined);
  assert.equal(caBundleProblem(ca.cert + ca.cert), undefined);
  assert.match(caBundleProblem('') ?? '', /holds no certificate/);
  assert.match(caBundleProblem(client.key) ?? '', /holds no certificate/);
  assert.match(caBundleProblem('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n') ?? '', /certificate 1 of 1 does not parse/);
});

test('a client certificate and key must be PEM and belong together', () => {
  assert.equal(clientPairProblem(client.cert, client.key), undefined);
  assert.deepEqual(clientPairProblem(client.cert, 'not a key'), { key: 'key', problem: 'holds no PEM private key' });
  assert.deepEqual(clientPairProblem('nope', client.key), { key: 'cert', problem: 'holds no PEM certificate' });
  const mismatch = clientPairProblem(client.cert, other.key);
  assert.equal(mismatch?.key, 'key');
  assert.match(mismatch!.problem, /cannot be used with the certificate/);
  assert.ok(!mismatch!.problem.includes('PRIVATE KEY'), 'no PEM text in the message');
});

test('a token is one line of visible ASCII; the problem never quotes it', () => {
  assert.deepEqual(checkToken('abc.def-ghi_jkl\n'), { ok: true, token: 'abc.def-ghi_jkl' });
  for (const [text, want] of [
    ['', /empty/],
    ['s3cret\nsecond\n', /2 lines/],
    ['s3c ret', /spaces/],
    ['s3cré', /characters/],
  ] as const) {
    const r = checkToken(text);
    assert.equal(r.ok, false);
    assert.match((r as { problem: string }).problem, want);
    assert.ok(!(r as { problem: string }).problem.includes('s3c'));
  }
});
