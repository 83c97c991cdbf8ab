import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildAuthBody, needsRenewal } from './keystone-session.ts';

test('password auth by user name, scoped to a project by name and domain', () => {
  assert.deepEqual(
    buildAuthBody({ type: 'password', username: 'u', userDomainName: 'Default', password: 'p', projectName: 'k8s', projectDomainName: 'Default' }),
    {
      auth: {
        identity: { methods: ['password'], password: { user: { name: 'u', domain: { name: 'Default' }, password: 'p' } } },
        scope: { project: { name: 'k8s', domain: { name: 'Default' } } },
      },
    },
  );
});

test('password auth by user ID scoped to a project ID, and to a domain when no project is named', () => {
  const byId = buildAuthBody({ type: 'password', userId: 'u1', password: 'p', projectId: 'p1' }) as {
    auth: { scope: unknown; identity: { password: { user: unknown } } };
  };
  assert.deepEqual(byId.auth.scope, { project: { id: 'p1' } });
  assert.deepEqual(byId.auth.identity.password.user, { id: 'u1', password: 'p' });
  const domain = buildAuthBody({ type: 'password', userId: 'u1', password: 'p', domainName: 'D' }) as { auth: { scope: unknown } };
  assert.deepEqual(domain.auth.scope, { domain: { name: 'D' } });
});

test('application credentials by ID carry no scope; by name they name their user', () => {
  assert.deepEqual(buildAuthBody({ type: 'applicationCredential', id: 'ac', secret: 's' }), {
    auth: { identity: { methods: ['application_credential'], application_credential: { id: 'ac', secret: 's' } } },
  });
  const byName = buildAuthBody({ type: 'applicationCredential', name: 'n', secret: 's', username: 'u', userDomainId: 'default' }) as {
    auth: { identity: { application_credential: unknown } };
  };
  assert.deepEqual(byName.auth.identity.application_credential, { name: 'n', secret: 's', user: { name: 'u', domain: { id: 'default' } } });
});

const RENEW: [string, number, boolean][] = [
  ['early in a 1 h token', 10 * 60_000, false],
  ['just before the 5 min margin', 54 * 60_000, false],
  ['inside the 5 min margin', 56 * 60_000, true],
  ['after expiry', 61 * 60_000, true],
];
for (const [when, at, want] of RENEW) {
  test(`a token is ${want ? '' : 'not '}renewed ${when}`, () => {
    assert.equal(needsRenewal(at, { issuedAtMs: 0, info: { expiresAtMs: 60 * 60_000 } }, 5 * 60_000), want);
  });
}

test('a short-lived token is renewed at half its lifetime, not after it expired', () => {
  const tok = { issuedAtMs: 0, info: { expiresAtMs: 4 * 60_000 } };
  assert.equal(needsRenewal(119_000, tok, 5 * 60_000), false);
  assert.equal(needsRenewal(120_000, tok, 5 * 60_000), true);
});
