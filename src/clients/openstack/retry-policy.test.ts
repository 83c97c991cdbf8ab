import { test } from 'node:test';
import assert from 'node:assert/strict';
import { retryDelayMs, isRetryable, type AttemptOutcome } from './retry-policy.ts';

const CASES: [AttemptOutcome, string, boolean, boolean][] = [
  [{ kind: 'status', status: 503 }, 'GET', false, true],
  [{ kind: 'status', status: 500 }, 'PUT', false, true],
  [{ kind: 'status', status: 502 }, 'DELETE', false, true],
  [{ kind: 'timeout' }, 'GET', false, true],
  [{ kind: 'network' }, 'GET', false, true],
  [{ kind: 'status', status: 400 }, 'GET', false, false],
  [{ kind: 'status', status: 404 }, 'DELETE', false, false],
  [{ kind: 'status', status: 409 }, 'PUT', false, false],
  [{ kind: 'status', status: 429 }, 'GET', false, false],
  [{ kind: 'status', status: 503 }, 'POST', false, false],
  [{ kind: 'timeout' }, 'POST', false, false],
  [{ kind: 'status', status: 503 }, 'POST', true, true],
  [{ kind: 'status', status: 400 }, 'POST', true, false],
];
for (const [outcome, method, idempotent, want] of CASES) {
  const what = outcome.kind === 'status' ? String(outcome.status) : outcome.kind;
  test(`${method}${idempotent ? ' (idempotent)' : ''} after ${what} is ${want ? '' : 'not '}retried`, () => {
    assert.equal(isRetryable(outcome, method, idempotent), want);
  });
}

test('backoff doubles per retry, stays within [ceiling/2, ceiling] and is capped', () => {
  const policy = { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 300, attemptTimeoutMs: 1000 };
  assert.deepEqual(
    [1, 2, 3, 4].map((n) => retryDelayMs(n, policy, () => 0)),
    [50, 100, 150, 150],
  );
  assert.deepEqual(
    [1, 2, 3, 4].map((n) => retryDelayMs(n, policy, () => 1)),
    [100, 200, 300, 300],
  );
});
