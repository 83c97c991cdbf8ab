import { test } from 'node:test';
import assert from 'node:assert/strict';
import { REDACTED, redactSecrets, stripUserinfo } from './redact.ts';

test('values under secret keys are replaced at any depth; other values stay', () => {
  const input = {
    healthUrl: 'https://admin:hunter2@10.0.0.1:6443/readyz',
    auth: { password: 'hunter2', username: 'kubeward', application_credential_secret: 'abc' },
    users: [{ user: { token: 'eyJhbGci', 'client-key-data': 'LS0t' } }],
    tokenFile: '/var/run/token',
    empty: { password: '' },
  };
  assert.deepEqual(redactSecrets(input), {
    healthUrl: 'https://10.0.0.1:6443/readyz',
    auth: { password: REDACTED, username: 'kubeward', application_credential_secret: REDACTED },
    users: [{ user: { token: REDACTED, 'client-key-data': REDACTED } }],
    tokenFile: '/var/run/token',
    empty: { password: '' },
  });
  assert.ok(!JSON.stringify(redactSecrets(input)).includes('hunter2'));
});

test('userinfo is stripped from any URL inside a string', () => {
  assert.equal(stripUserinfo('GET https://u:p@h/x failed; see http://a@b:1/'), 'GET https://h/x failed; see http://b:1/');
  assert.equal(stripUserinfo('no url here: a@b'), 'no url here: a@b');
});
