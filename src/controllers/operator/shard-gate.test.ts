// The shard gate's log: a skipped cluster once at debug (with why), not again per event; a label
// moving a cluster in or out at info; a label naming no shard at warn by one shard only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger } from '../../base/logger.ts';
import { SHARD_LABEL, hashShard } from './shard.ts';
import { shardGate } from './shard-gate.ts';

test('the gate logs each decision once and every change of owner', () => {
  const lines: { level: number; msg: string; cluster: string; reason?: string }[] = [];
  const log = createLogger({ format: 'json', level: 'debug', write: (l) => lines.push(JSON.parse(l) as (typeof lines)[number]) });
  // Two clusters of shard 0 and one of shard 1 (of 2), found by the hash itself.
  const names = Array.from({ length: 40 }, (_, i) => `k${i}`);
  const mine = names.filter((n) => hashShard('t', n, 2) === 1);
  const other = names.find((n) => hashShard('t', n, 2) === 0)!;
  const gate = shardGate({ index: 1, count: 2 }, log);

  for (let i = 0; i < 3; i++) assert.equal(gate.owns({ namespace: 't', name: other }), false);
  assert.deepEqual(
    lines.map((l) => [l.level, l.msg, l.cluster, l.reason]),
    [[20, 'shard: skipped, another shard owns it', `t/${other}`, 'hashes to shard 0']],
    'once, at debug, with the reason',
  );
  assert.equal(gate.owns({ namespace: 't', name: mine[0]! }), true);
  assert.equal(lines.length, 1, 'an owned cluster is not logged');

  lines.length = 0;
  assert.equal(gate.owns({ namespace: 't', name: other, labels: { [SHARD_LABEL]: '1' } }), true);
  assert.equal(gate.owns({ namespace: 't', name: mine[0]!, labels: { [SHARD_LABEL]: '0' } }), false);
  assert.deepEqual(
    lines.map((l) => [l.level, l.msg, l.cluster]),
    [
      [30, 'shard: cluster moved to this shard', `t/${other}`],
      [30, 'shard: cluster moved away from this shard', `t/${mine[0]}`],
    ],
  );

  lines.length = 0;
  const bad = { namespace: 't', name: mine[1]!, labels: { [SHARD_LABEL]: '5' } };
  assert.equal(gate.owns(bad), false);
  assert.equal(gate.owns(bad), false);
  assert.deepEqual(
    lines.map((l) => [l.level, l.cluster]),
    [
      [40, `t/${mine[1]}`],
      [20, `t/${mine[1]}`],
    ],
    'warned once (this is its hash shard), and skipped at debug (first seen)',
  );
  assert.match(lines[0]!.msg, /no shard acts on this cluster: label kubeward\.io\/shard=5 names no shard \(there are 2: 0 to 1\)/);
  const elsewhere = shardGate(
    { index: 0, count: 2 },
    createLogger({ format: 'json', level: 'debug', write: (l) => lines.push(JSON.parse(l) as (typeof lines)[number]) }),
  );
  lines.length = 0;
  assert.equal(elsewhere.owns(bad), false);
  assert.ok(
    lines.every((l) => l.level < 40),
    'the other shard does not warn about it',
  );

  gate.prune(new Set([`t/${other}`]));
  lines.length = 0;
  gate.owns({ namespace: 't', name: mine[0]!, labels: { [SHARD_LABEL]: '0' } });
  assert.equal(lines.length, 1, 'a pruned cluster is new again');
});
