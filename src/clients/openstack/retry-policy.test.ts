import { test } from 'node:test';
import assert from 'node:assert/strict';
import { retryDelayMs, isRetryable, type AttemptOutcome } from './retry-policy.ts';

const CASES: [AttemptOutcome, string, boolean | undefined, boolean][] = [
  [{ kind: 'status', status: 503 }, 'GET', undefined, true],
  [{ kind: 'status', status: 500 }, 'PUT', undefined, true],
  [{ kind: 'status', status: 502 }, 'DELETE', undefined, true],
  [{ kind: 'timeout' }, 'GET', undefined, true],
  [{ kind: 'network' }, 'GET', undefined, true],
  [{ kind: 'status', status: 400 }, 'GET', undefined, false],
  [{ kind: 'status', status: 404 }, 'DELETE', undefined, false],
  [{ kind: 'status', status: 409 }, 'PUT', undefined, false],
  [{ kind: 'status', status: 429 }, 'GET', undefined, false],
  [{ kind: 'status', status: 503 }, 'POST', undefined, false],
  [{ kind: 'timeout' }, 'POST', undefined, false],
  [{ kind: 'status', status: 503 }, 'POST', false, false],
  [{ kind: 'status', status: 502 }, 'PUT', false, false],
  [{ kind: 'timeout' }, 'PUT', false, false],
  [{ kind: 'status', status: 503 }, 'POST', true, true],
  [{ kind: 'status', status: 400 }, 'POST', true, false],
];
for (const [outcome, method, idempotent, want] of CASES) {
  const what = outcome.kind === 'status' ? String(outcome.status) : outcome.kind;
  const declared = idempotent === undefined ? '' : idempotent ? ' (declared idempotent)' : ' (declared not idempotent)';
  test(`${method}${declared} after ${what} is ${want ? '' : 'not '}retried`, () => {
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
