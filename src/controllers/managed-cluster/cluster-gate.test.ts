import { test } from 'node:test';
import assert from 'node:assert/strict';
import { skipReason, terminationRefusal } from './cluster-gate.ts';

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

test("a deleted cluster's routes are cleaned up only when deorbit's rule asks for it (deletionPolicy Delete, Terminating, or a deorbit under way)", () => {
  const cases: [Parameters<typeof terminationRefusal>[0], RegExp | undefined][] = [
    [{ spec: {} }, /Orphan \(default\)/],
    [{ spec: { deletionPolicy: 'Orphan' } }, /deletionPolicy is Orphan and/],
    [{ spec: { deletionPolicy: 'Delete' } }, undefined],
    [{ spec: {}, status: { phase: 'Terminating' } }, undefined],
    [{ spec: { deletionPolicy: 'Orphan' }, status: { phase: 'Running', deorbit: { attempt: 1 } } }, undefined],
    [{ spec: { deletionPolicy: 'Delete', noCloud: true } }, /noCloud/],
    [{ spec: { deletionPolicy: 'Delete', terminationProtection: true } }, /terminationProtection is set/],
    [{ spec: { terminationProtection: false }, status: { phase: 'Terminating' } }, undefined],
  ];
  for (const [input, want] of cases) {
    const got = terminationRefusal(input)?.message;
    if (want) assert.match(got ?? '', want, JSON.stringify(input));
    else assert.equal(got, undefined, JSON.stringify(input));
  }
});
