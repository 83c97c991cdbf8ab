import { test } from 'node:test';
import assert from 'node:assert/strict';
import { skipReason } from './cluster-gate.ts';

test('R4 and F8: only Running clusters with a cloud are worked on', () => {
  const cases: [Parameters<typeof skipReason>[0], RegExp | undefined][] = [
    [{ phase: 'Running' }, undefined],
    [{ phase: 'Upgrading' }, /Upgrading/],
    [{ phase: 'Terminating' }, /Terminating/],
    [{ phase: 'Running', noCloud: true }, /noCloud/],
    [{ phase: 'Running', deleting: true }, /deleted/],
    [{}, /unset/],
  ];
  for (const [input, want] of cases) {
    const got = skipReason(input);
    if (want) assert.match(got ?? '', want);
    else assert.equal(got, undefined);
  }
});
