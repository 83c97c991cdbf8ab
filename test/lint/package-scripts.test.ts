// npm test runs the suite through test:coverage (Node's coverage, CI's figures); test:all is the same
// run without it. Both must name the same test files, or CI would skip what test:all runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

const repo = join(import.meta.dirname, '..', '..');

test('test:coverage runs the test files test:all runs, and npm test runs test:coverage', async () => {
  const { scripts } = JSON.parse(await readFile(join(repo, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const files = (script: string) => [...script.matchAll(/ "([^"]+[.]test[.]ts)"/g)].map((m) => m[1]);
  assert.ok(files(scripts['test:all']!).length > 0);
  assert.deepEqual(files(scripts['test:coverage']!), files(scripts['test:all']!));
  assert.match(scripts['test:coverage']!, /--experimental-test-coverage/);
  assert.match(scripts.test!, /npm run test:coverage/);
});
