import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MetricsAuth, type TokenReviewer } from './metrics-auth.ts';
import { bearerToken, decideAuthentication, decideAuthorization } from './decide-metrics-access.ts';

/** A reviewer that knows two tokens: "reader" may get /metrics, "nobody" is a user without the grant. */
function reviewer(calls: string[], fail = { on: false }): TokenReviewer {
  return {
    async reviewToken(token) {
      calls.push(`token:${token}`);
      if (fail.on) throw new Error('connect ECONNREFUSED 127.0.0.1:6443');
      if (token === 'reader-token')
        return { authenticated: true, user: { username: 'system:serviceaccount:monitoring:reader', groups: ['system:serviceaccounts'] } };
      if (token === 'nobody-token') return { authenticated: true, user: { username: 'nobody' } };
      return { authenticated: false, error: 'invalid bearer token' };
    },
    async reviewAccess(user, path, verb) {
      calls.push(`access:${user.username}:${verb}:${path}`);
      return user.username.endsWith(':reader') ? { allowed: true } : { allowed: false, reason: 'no RBAC policy matched' };
    },
  };
}

function clockAt(start = 1_000_000) {
  const c = { t: start, now: () => c.t, sleep: async () => {} };
  return c;
}

test('200 for a token the apiserver authenticates and authorizes, 403 for one it only authenticates, 401 otherwise', async () => {
  const calls: string[] = [];
  const auth = new MetricsAuth({ reviewer: reviewer(calls), clock: clockAt() });
  assert.deepEqual(await auth.check('Bearer reader-token', '/metrics'), { status: 200, user: 'system:serviceaccount:monitoring:reader' });
  const denied = await auth.check('Bearer nobody-token', '/metrics');
  assert.equal(denied.status, 403);
  assert.match((denied as { reason: string }).reason, /nobody may not get \/metrics: no RBAC policy matched/);
  assert.equal((await auth.check('Bearer forged', '/metrics')).status, 401);
  assert.equal((await auth.check(undefined, '/metrics')).status, 401);
  assert.equal((await auth.check('Basic dXNlcjpwYXNz', '/metrics')).status, 401);
  assert.deepEqual(calls, [
    'token:reader-token',
    'access:system:serviceaccount:monitoring:reader:get:/metrics',
    'token:nobody-token',
    'access:nobody:get:/metrics',
    'token:forged',
  ]);
});

test('verdicts are cached for a short time (allowed longer than refused); an unreachable apiserver is 503 and never cached', async () => {
  const calls: string[] = [];
  const fail = { on: false };
  const clock = clockAt();
  const auth = new MetricsAuth({ reviewer: reviewer(calls, fail), clock, allowedTtlMs: 60_000, deniedTtlMs: 10_000 });
  await auth.check('Bearer reader-token', '/metrics');
  await auth.check('Bearer nobody-token', '/metrics');
  assert.equal(auth.reviews, 2);
  clock.t += 9_000;
  await auth.check('Bearer reader-token', '/metrics');
  await auth.check('Bearer nobody-token', '/metrics');
  assert.equal(auth.reviews, 2, 'both from the cache');
  clock.t += 2_000;
  await auth.check('Bearer nobody-token', '/metrics');
  assert.equal(auth.reviews, 3, 'a refusal is asked again after 10 s');
  clock.t += 50_000;
  fail.on = true;
  const down = await auth.check('Bearer reader-token', '/metrics');
  assert.equal(down.status, 503);
  assert.match((down as { reason: string }).reason, /cannot check the token with the apiserver \(connect ECONNREFUSED/);
  assert.ok(!(down as { reason: string }).reason.includes('reader-token'), 'the token is never echoed');
  fail.on = false;
  assert.equal((await auth.check('Bearer reader-token', '/metrics')).status, 200, 'the 503 was not cached');
});

test('the cache holds at most maxEntries verdicts', async () => {
  const calls: string[] = [];
  const auth = new MetricsAuth({ reviewer: reviewer(calls), clock: clockAt(), maxEntries: 2 });
  for (const t of ['a', 'b', 'c']) await auth.check(`Bearer ${t}`, '/metrics');
  await auth.check('Bearer a', '/metrics');
  assert.equal(auth.reviews, 4, 'the oldest entry was dropped');
});

test('property: a verdict is 200 only when the token authenticates to a named user and the access review allows without denying', () => {
  fc.assert(
    fc.property(
      fc.option(fc.boolean()),
      fc.option(fc.string()),
      fc.option(fc.boolean()),
      fc.option(fc.boolean()),
      (authenticated, username, allowed, denied) => {
        const user = username === null ? undefined : { username };
        const authn = decideAuthentication({ authenticated: authenticated ?? undefined, user });
        if (!authn.ok) {
          assert.equal(authn.access.status, 401);
          assert.ok(authenticated !== true || !username);
          return;
        }
        const v = decideAuthorization(authn.user, { allowed: allowed ?? undefined, denied: denied ?? undefined }, '/metrics');
        assert.equal(v.status === 200, allowed === true && denied !== true);
      },
    ),
  );
});

test('property: bearerToken takes exactly one visible-ASCII token after "Bearer "', () => {
  fc.assert(
    fc.property(fc.string(), (text) => {
      const t = bearerToken(`Bearer ${text}`);
      assert.equal(t, /^[\x21-\x7e]+$/.test(text) ? text : undefined);
    }),
  );
});
