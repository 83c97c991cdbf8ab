import { test } from 'node:test';
import assert from 'node:assert/strict';
import { judgeSnapshots } from './snapshot-rules.ts';
import { CSI, snap } from './deorbit-fixtures.test-helpers.ts';

test("only snapshots of a class whose driver is a Cinder CSI driver are Cinder's", () => {
  const classes = [
    { name: 'cinder', driver: CSI },
    { name: 'backup', driver: 'backup.example.com' },
  ];
  const cases: [string, ReturnType<typeof snap>, boolean][] = [
    ['class with the Cinder driver', snap('a', 'cinder'), true],
    ['class of another driver (a backup tool)', snap('b', 'backup'), false],
    ['no class name', snap('c', null), false],
    ['a class that does not exist', snap('d', 'gone'), false],
  ];
  for (const [name, s, cinder] of cases) {
    const j = judgeSnapshots([s], classes, [CSI]);
    assert.equal(j.cinder.length === 1, cinder, name);
    assert.equal(j.other.length === 1, !cinder, name);
  }
  assert.deepEqual(judgeSnapshots([snap('a', 'cinder')], undefined, [CSI]).cinder, [], 'without the class API nothing is proven');
});
