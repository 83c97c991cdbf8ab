import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { test } from 'node:test';
import fc from 'fast-check';
import { checkPinned, cpuSets, parsePlacements, pinTree, PLACEMENTS, readThreadsAllowed } from './placement.ts';

test('cpuSets: shared is every CPU for both sides; pinned is the proxy on 1 and the load on 0, and needs two CPUs', () => {
  assert.deepEqual(cpuSets('shared', 2), { proxy: '0-1', load: '0-1' });
  assert.deepEqual(cpuSets('pinned', 2), { proxy: '1', load: '0' });
  assert.deepEqual(cpuSets('shared', 1), { proxy: '0', load: '0' });
  assert.throws(() => cpuSets('pinned', 1), /at least 2 CPUs/);
});

test('parsePlacements: both, or a comma list without repeats; anything else names the word', () => {
  assert.deepEqual(parsePlacements('both'), ['shared', 'pinned']);
  assert.deepEqual(parsePlacements('pinned'), ['pinned']);
  assert.throws(() => parsePlacements('isolated'), /"isolated" is not shared, pinned or both/);
  assert.throws(() => parsePlacements(''), /"" is not/);
});

test('property: a comma list of placements parses to its distinct words in order; one unknown word is refused', () => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...PLACEMENTS), { minLength: 1, maxLength: 5 }), fc.string(), (words, junk) => {
      assert.deepEqual(parsePlacements(words.join(',')), [...new Set(words)]);
      if (!(PLACEMENTS as readonly string[]).includes(junk.trim()) && junk !== 'both' && !junk.includes(','))
        assert.throws(() => parsePlacements([...words, junk].join(',')), /is not shared, pinned or both/);
    }),
  );
});

test('pinTree sets every thread of a process and its children, and checkPinned sees it', { skip: cpus().length < 2 ? 'needs 2 CPUs' : false }, async () => {
  // sh with a child sleep: a tree of two processes.
  const child = spawn('sh', ['-c', 'sleep 30 & wait'], { stdio: 'ignore' });
  try {
    await new Promise((r) => setTimeout(r, 200));
    await pinTree(child.pid!, '1');
    checkPinned(child.pid!, '1');
    assert.deepEqual(readThreadsAllowed(child.pid!), ['1']);
    assert.throws(() => checkPinned(child.pid!, '0'), /not on CPU 0/);
    await pinTree(child.pid!, '0-1');
    checkPinned(child.pid!, '0-1');
  } finally {
    child.kill('SIGKILL');
  }
  assert.deepEqual(readThreadsAllowed(2 ** 22 + 1), [], 'a pid that does not exist has no threads');
});
