// kubeward check-cert as a process, against TLS servers with certificates this test makes:
// covered name, covered IP, uncovered name (the x509 case), expired, wrong CA, and an inventory.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execCommand } from '../src/sys/exec.ts';
import { kubewardArgv } from '../testkit/kubeward-process.ts';
import { createTestCa, type TestCa } from '../testkit/certs.ts';
import { ApiserverStandin } from '../testkit/apiserver-standin.ts';
import { freePort } from '../testkit/wait-for.ts';
import { parseInventory } from '../src/plan/parse-inventory.ts';
import { computeSans } from '../src/plan/apiserver-sans.ts';

function kubeward(...args: string[]) {
  return execCommand(kubewardArgv(args), { okCodes: [0, 1, 2], timeoutMs: 20_000 });
}

describe('kubeward check-cert', () => {
  let ca: TestCa;
  let otherCa: TestCa;
  const servers: ApiserverStandin[] = [];
  let good: ApiserverStandin;
  let expired: ApiserverStandin;

  async function serve(cert: { cert: string; key: string }, host = '127.0.0.1', port = 0): Promise<ApiserverStandin> {
    const s = new ApiserverStandin({ cert: cert.cert, key: cert.key, host, port });
    await s.open();
    servers.push(s);
    return s;
  }

  before(async () => {
    ca = await createTestCa('check-cert-ca');
    otherCa = await createTestCa('some-other-ca');
    good = await serve(await ca.issueServer('good', ['DNS:api.test.local', 'DNS:*.apps.test.local', 'IP:127.0.0.1', 'IP:::1']));
    expired = await serve(await ca.issueServer('expired', ['DNS:api.test.local', 'IP:127.0.0.1'], { notAfterPast: true }));
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await ca.close();
    await otherCa.close();
  });

  test('a covered name with a verified chain exits 0', async () => {
    const r = await kubeward('check-cert', `https://127.0.0.1:${good.port}`, '--name', 'api.test.local', '--ca-file', ca.certFile);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /ok +api\.test\.local is covered \(DNS SAN\)/);
    assert.match(r.stdout, /ok +chain verified against ca\.crt/);
    assert.match(r.stdout, /SANs +DNS:api\.test\.local, DNS:\*\.apps\.test\.local, IP:127\.0\.0\.1, IP:::1/);
  });

  test('the URL host itself is checked when no --name is given: a covered IP exits 0', async () => {
    const r = await kubeward('check-cert', `https://127.0.0.1:${good.port}`);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /127\.0\.0\.1 is covered \(IP SAN\)/);
    assert.match(r.stdout, /chain +not checked/);
  });

  test('a wildcard SAN covers exactly one label', async () => {
    const r = await kubeward('check-cert', `https://127.0.0.1:${good.port}`, '--name', 'x.apps.test.local', '--name', 'a.b.apps.test.local');
    assert.equal(r.code, 1);
    assert.match(r.stdout, /ok +x\.apps\.test\.local is covered/);
    assert.match(r.stdout, /FAIL +a\.b\.apps\.test\.local is not covered/);
  });

  test('an uncovered name exits 1 with the x509 error clients see and the exact fix', async () => {
    const r = await kubeward('check-cert', `https://127.0.0.1:${good.port}`, '--name', 'lb.example.com', '--ip', '10.9.9.9', '--ca-file', ca.certFile);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      /FAIL +lb\.example\.com is not covered; clients get "x509: certificate is valid for api\.test\.local, \*\.apps\.test\.local, not lb\.example\.com"/,
    );
    assert.match(
      r.stdout,
      /fix: add "lb\.example\.com" to the apiserver certificate\. kubespray: add it to supplementary_addresses_in_ssl_keys .*kubeadm: add it to apiServer\.certSANs/,
    );
    assert.match(r.stdout, /x509: certificate is valid for 127\.0\.0\.1, ::1, not 10\.9\.9\.9/);
  });

  test('an expired certificate exits 1 and says how to renew it', async () => {
    const r = await kubeward('check-cert', `https://127.0.0.1:${expired.port}`, '--ca-file', ca.certFile);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stdout, /FAIL +expired at \S+ \(\d+ days ago\)/);
    assert.match(r.stdout, /kubeadm certs renew apiserver/);
    assert.match(r.stdout, /ok +127\.0\.0\.1 is covered/, 'the name is still judged');
  });

  test('a certificate from another CA exits 1 as untrusted', async () => {
    const r = await kubeward('check-cert', `https://127.0.0.1:${good.port}`, '--ca-file', otherCa.certFile, '-o', 'json');
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const report = JSON.parse(r.stdout) as { ok: boolean; servers: { findings: { kind: string; message: string }[] }[] };
    assert.equal(report.ok, false);
    const untrusted = report.servers[0]!.findings.find((f) => f.kind === 'untrusted');
    assert.ok(untrusted, JSON.stringify(report));
    assert.match(untrusted.message, /not signed by the CA in ca\.crt/);
  });

  test('nothing listening exits 1 naming the address', async () => {
    const port = await freePort();
    const r = await kubeward('check-cert', `127.0.0.1:${port}`, '--timeout', '2s');
    assert.equal(r.code, 1);
    assert.match(r.stdout, new RegExp(`FAIL +cannot read the certificate: .*ECONNREFUSED`));
  });

  test('bad usage exits 2 with one line', async () => {
    const none = await kubeward('check-cert');
    assert.equal(none.code, 2);
    assert.equal(none.stderr.trim().split('\n').length, 1);
    assert.match(none.stderr, /give a URL .* or --inventory FILE/);
    const http = await kubeward('check-cert', 'http://127.0.0.1:80');
    assert.equal(http.code, 2);
    assert.match(http.stderr, /only https:\/\/ servers/);
  });

  test('--inventory checks every control-plane apiserver against every planned SAN and names what is missing', async (t) => {
    const port = await freePort('127.0.0.2');
    const inventory = `hosts:\n  cp1: {ip: 127.0.0.2}\n  cp2: {ip: 127.0.0.3}\n  w1: {ip: 10.0.0.21}\ngroups:\n  kube_control_plane: [cp1, cp2]\n  kube_node: [w1]\nvars:\n  kube_apiserver_port: ${port}\n  supplementary_addresses_in_ssl_keys: [api.example.com]\n`;
    const file = join(ca.dir, 'inventory.yaml');
    await writeFile(file, inventory);
    const parsed = parseInventory({ source: file, text: inventory });
    assert.ok(parsed.ok);
    const sans = computeSans(parsed.inventory).map((s) => `${s.kind === 'ip' ? 'IP' : 'DNS'}:${s.value}`);
    const complete = await ca.issueServer('cp1', sans);
    const lacking = await ca.issueServer(
      'cp2',
      sans.filter((s) => s !== 'DNS:api.example.com'),
    );
    await serve(complete, '127.0.0.2', port);
    await serve(lacking, '127.0.0.3', port);
    t.diagnostic(`planned SANs: ${sans.join(' ')}`);
    const r = await kubeward('check-cert', '--inventory', file, '--ca-file', ca.certFile);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    const [cp1, cp2] = r.stdout.split(/\n(?===)/);
    assert.match(cp1!, /== cp1 \(127\.0\.0\.2:\d+\)/);
    assert.doesNotMatch(cp1!, /FAIL/);
    assert.match(cp1!, new RegExp(`ok +${sans.length} names and addresses covered`));
    assert.match(cp2!, /FAIL +api\.example\.com is not covered/);
    assert.match(cp2!, /fix: add api\.example\.com to the apiserver certificate/);
  });
});
