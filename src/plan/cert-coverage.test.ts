import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkCertificate, isCovered, matchesDnsName, x509HostnameError, type ServerCertFacts } from './cert-coverage.ts';
import { parseSubjectAltName } from './fetch-server-cert.ts';

const cert = (over: Partial<ServerCertFacts> = {}): ServerCertFacts => ({
  subject: 'CN=kube-apiserver',
  issuer: 'CN=kubernetes',
  dnsNames: ['kubernetes', '*.apps.example.com'],
  ipAddresses: ['10.233.0.1', '::1'],
  notBefore: new Date('2026-01-01T00:00:00Z'),
  notAfter: new Date('2027-01-01T00:00:00Z'),
  ...over,
});

test('DNS matching is case-insensitive, ignores a trailing dot, and a wildcard covers exactly one label', () => {
  assert.ok(matchesDnsName('Kubernetes', 'kubernetes.'));
  assert.ok(matchesDnsName('*.apps.example.com', 'x.apps.example.com'));
  assert.ok(!matchesDnsName('*.apps.example.com', 'a.b.apps.example.com'));
  assert.ok(!matchesDnsName('*.apps.example.com', 'apps.example.com'));
});

test('IP targets match IP SANs in any spelling and never DNS SANs', () => {
  assert.ok(isCovered(cert(), '0:0:0:0:0:0:0:1'));
  assert.ok(!isCovered(cert({ dnsNames: ['10.0.0.5'] }), '10.0.0.5'));
});

test('the x509 messages are those Go prints', () => {
  assert.equal(x509HostnameError(cert(), 'lb.example.com'), 'x509: certificate is valid for kubernetes, *.apps.example.com, not lb.example.com');
  assert.equal(x509HostnameError(cert(), '10.0.0.5'), 'x509: certificate is valid for 10.233.0.1, ::1, not 10.0.0.5');
  assert.equal(
    x509HostnameError(cert({ ipAddresses: [] }), '10.0.0.5'),
    "x509: cannot validate certificate for 10.0.0.5 because it doesn't contain any IP SANs",
  );
});

test('expiry is judged from the injected clock, and a chain expiry is not reported twice', () => {
  const later = new Date('2027-02-01T00:00:00Z');
  const findings = checkCertificate(cert({ chain: { verified: false, error: 'CERT_HAS_EXPIRED', caLabel: 'ca.crt' } }), ['kubernetes'], later);
  assert.deepEqual(
    findings.map((f) => [f.kind, f.ok]),
    [
      ['expired', false],
      ['covered', true],
    ],
  );
  assert.match(findings[0]!.message, /31 days ago/);
  const early = checkCertificate(cert(), [], new Date('2025-12-31T00:00:00Z'));
  assert.equal(early[0]!.kind, 'not-yet-valid');
});

test("Node's subjectaltname text is split into DNS names and addresses, quoted names included", () => {
  assert.deepEqual(parseSubjectAltName('DNS:a.example, IP Address:10.0.0.1, DNS:"b,c.example", IP Address:0:0:0:0:0:0:0:1'), {
    dnsNames: ['a.example', 'b,c.example'],
    ipAddresses: ['10.0.0.1', '0:0:0:0:0:0:0:1'],
  });
});
