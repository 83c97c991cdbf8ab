import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createTestCa, type TestCa, type CertPair } from '../../testkit/certs.ts';
import { ApiserverStandin } from '../../testkit/apiserver-standin.ts';
import { freePort } from '../../testkit/wait-for.ts';
import { probeHttps } from './https-probe.ts';
import { ProbeTlsContext } from './probe-tls-context.ts';
import { probeTcp, probeTls } from './socket-probe.ts';
import { classifyProbeError } from './probe-result.ts';

let ca: TestCa;
let otherCa: TestCa;
let serverCert: CertPair;
let standin: ApiserverStandin;

before(async () => {
  ca = await createTestCa();
  otherCa = await createTestCa('other-ca');
  serverCert = await ca.issueServer('server', ['DNS:localhost', 'IP:127.0.0.1', 'IP:::1']);
  standin = new ApiserverStandin({ cert: serverCert.cert, key: serverCert.key });
  await standin.open();
});
after(() => Promise.all([standin.close(), ca.close(), otherCa.close()]));

const url = () => new URL(`https://127.0.0.1:${standin.port}/readyz`);

test('a 200 from /readyz is healthy, with latency measured', async () => {
  standin.setReadyz('ok');
  const r = await probeHttps({ url: url(), timeoutMs: 2000, ca: ca.cert });
  assert.equal(r.ok, true);
  assert.equal(r.status, 200);
  assert.equal(r.reason, 'ok');
  assert.ok(r.latencyMs > 0);
});

test("an owner's TLS context serves every probe with the same material and is rebuilt for new material", async () => {
  const tls = new ProbeTlsContext();
  const first = await probeHttps({ url: url(), timeoutMs: 2000, ca: ca.cert, tlsContext: tls });
  const context = tls.for({ ca: ca.cert });
  const second = await probeHttps({ url: url(), timeoutMs: 2000, ca: ca.cert, tlsContext: tls });
  assert.ok(first.ok && second.ok, `${first.detail} / ${second.detail}`);
  assert.equal(tls.for({ ca: ca.cert }), context, 'the same material keeps its context');
  // A reload's material (another CA) brings a new context, and the probe verifies against it.
  const rejected = await probeHttps({ url: url(), timeoutMs: 2000, ca: otherCa.cert, tlsContext: tls });
  assert.equal(rejected.reason, 'tls');
  assert.notEqual(tls.for({ ca: otherCa.cert }), context);
});

test('a 503 is a failure with reason http-status and the body as evidence', async () => {
  standin.setReadyz('fail');
  const r = await probeHttps({ url: url(), timeoutMs: 2000, ca: ca.cert });
  assert.deepEqual([r.ok, r.status, r.reason], [false, 503, 'http-status']);
  assert.match(r.detail, /HTTP 503.*shutting down/);
});

test('a server that accepts but never answers times out within the deadline', async () => {
  standin.setReadyz('hang');
  const started = performance.now();
  const r = await probeHttps({ url: url(), timeoutMs: 300, ca: ca.cert });
  assert.equal(r.reason, 'timeout');
  assert.ok(performance.now() - started < 1500, 'the deadline held');
  standin.setReadyz('ok');
});

test('a closed port is reported as refused', async () => {
  const port = await freePort();
  const r = await probeHttps({ url: new URL(`https://127.0.0.1:${port}/readyz`), timeoutMs: 1000, ca: ca.cert });
  assert.equal(r.reason, 'refused');
  assert.equal((await probeTcp({ host: '127.0.0.1', port, timeoutMs: 500 })).reason, 'refused');
});

test('a certificate from another CA fails verification with reason tls', async () => {
  standin.setReadyz('ok');
  const r = await probeHttps({ url: url(), timeoutMs: 2000, ca: otherCa.cert });
  assert.equal(r.reason, 'tls');
  assert.equal((await probeTls({ host: '127.0.0.1', port: standin.port, timeoutMs: 1000, ca: otherCa.cert })).reason, 'tls');
});

test('verification can be turned off explicitly', async () => {
  const r = await probeHttps({ url: url(), timeoutMs: 2000, insecureSkipTlsVerify: true });
  assert.equal(r.ok, true);
});

test('a bearer token is read from its file and sent', async () => {
  const tokenServer = new ApiserverStandin({ cert: serverCert.cert, key: serverCert.key, token: 's3cret' });
  await tokenServer.open();
  try {
    const tokenFile = join(ca.dir, 'token');
    await writeFile(tokenFile, 's3cret\n');
    const u = new URL(`https://localhost:${tokenServer.port}/readyz`);
    assert.equal((await probeHttps({ url: u, timeoutMs: 2000, ca: ca.cert })).status, 401);
    assert.equal((await probeHttps({ url: u, timeoutMs: 2000, ca: ca.cert, tokenFile })).ok, true);
  } finally {
    await tokenServer.close();
  }
});

test('a client certificate is presented when the server requires one', async () => {
  const client = await ca.issueClient('client', 'kubeward', 'system:masters');
  const mtls = new ApiserverStandin({ cert: serverCert.cert, key: serverCert.key, clientCa: ca.cert });
  await mtls.open();
  try {
    const u = new URL(`https://127.0.0.1:${mtls.port}/health`);
    assert.equal((await probeHttps({ url: u, timeoutMs: 2000, ca: ca.cert })).ok, false);
    assert.equal((await probeHttps({ url: u, timeoutMs: 2000, ca: ca.cert, cert: client.cert, key: client.key })).ok, true);
  } finally {
    await mtls.close();
  }
});

test('tcp and tls probes succeed against a live server', async () => {
  assert.equal((await probeTcp({ host: '127.0.0.1', port: standin.port, timeoutMs: 1000 })).ok, true);
  assert.equal((await probeTls({ host: '127.0.0.1', port: standin.port, timeoutMs: 1000, ca: ca.cert })).ok, true);
});

test('local faults are reason local, returned as values: token file missing, two lines, a key that is not a key', async () => {
  standin.setReadyz('ok');
  const dir = ca.dir;
  const twoLines = join(dir, 'token-two-lines');
  await writeFile(twoLines, 'abc\ndef\n');
  const missing = await probeHttps({ url: url(), timeoutMs: 2000, ca: ca.cert, tokenFile: join(dir, 'no-such-token') });
  assert.deepEqual([missing.ok, missing.reason], [false, 'local']);
  assert.match(missing.detail, /cannot read token file .*ENOENT/);
  const lines = await probeHttps({ url: url(), timeoutMs: 2000, ca: ca.cert, tokenFile: twoLines });
  assert.deepEqual([lines.reason, lines.detail.includes('abc')], ['local', false], 'the token itself is never in the detail');
  const badKey = await probeHttps({ url: url(), timeoutMs: 2000, ca: ca.cert, cert: serverCert.cert, key: 'not a key' });
  assert.equal(badKey.reason, 'local');
  const badTls = await probeTls({ host: '127.0.0.1', port: standin.port, timeoutMs: 1000, ca: ca.cert, cert: serverCert.cert, key: 'not a key' });
  assert.equal(badTls.reason, 'local');
});

test('fd and buffer exhaustion are local, not the peer', () => {
  for (const code of ['EMFILE', 'ENFILE', 'ENOBUFS', 'ENOMEM']) {
    assert.equal(classifyProbeError(Object.assign(new Error(code), { code }), false), 'local', code);
  }
  assert.equal(classifyProbeError(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }), false), 'refused');
});
