import { test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyKubeFailure, errorFromResponse } from './kube-api-error.ts';

test('failures are classified so that only an unavailable API counts as unavailable', () => {
  const cases: [number | undefined, string | undefined, string][] = [
    [undefined, undefined, 'unavailable'],
    [500, undefined, 'unavailable'],
    [503, 'ServiceUnavailable', 'unavailable'],
    [504, 'Timeout', 'unavailable'],
    [500, 'ServerTimeout', 'unavailable'],
    [429, 'TooManyRequests', 'unavailable'],
    [401, 'Unauthorized', 'unauthorized'],
    [403, 'Forbidden', 'unauthorized'],
    [404, 'NotFound', 'not-found'],
    [409, 'Conflict', 'conflict'],
    [422, 'Invalid', 'invalid'],
    [400, 'BadRequest', 'invalid'],
  ];
  for (const [status, reason, want] of cases) assert.equal(classifyKubeFailure(status, reason), want, `${status} ${reason}`);
});

test('a Status body gives the reason and message; a plain-text body is kept as the message', () => {
  const st = errorFromResponse('GET', '/api/v1/pods', 500, JSON.stringify({ kind: 'Status', reason: 'ServerTimeout', message: 'too slow', code: 500 }));
  assert.equal(st.reason, 'ServerTimeout');
  assert.match(st.message, /too slow/);
  assert.equal(st.kind, 'unavailable');
  const text = errorFromResponse('GET', '/api/v1/pods', 502, '<html>bad gateway</html>');
  assert.equal(text.reason, undefined);
  assert.match(text.message, /502 <html>bad gateway/);
  assert.equal(errorFromResponse('GET', '/x', 404, '').code, 'E_NOT_FOUND');
});
