import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { checkVip } from '../watch/vip-address.ts';
import { decideVipStates, type StateFile } from './vip-states.ts';

const NOW = Date.parse('2026-05-01T12:00:00.000Z');
const opts = { nowMs: NOW, staleAfterMs: 30_000 };

function record(state: 'up' | 'down', heartbeatMsAgo: number): string {
  const heartbeat = new Date(NOW - heartbeatMsAgo).toISOString();
  return JSON.stringify({ state, since: heartbeat, reason: 'test', pid: 7, generation: 1, heartbeat }) + '\n';
}

function states(files: StateFile[], extra: Partial<typeof opts> & { managed?: string[] } = {}) {
  return decideVipStates(files, { ...opts, ...extra });
}

test('an empty .up file is up and an empty .down file is down, as older watchers write them', () => {
  const d = states([
    { name: '10.0.0.2.up', content: '' },
    { name: '10.0.0.3.down', content: '' },
  ]);
  assert.deepEqual(
    d.vips.map((v) => [v.vip, v.file, v.up]),
    [
      ['10.0.0.2', 'up', true],
      ['10.0.0.3', 'down', false],
    ],
  );
});

test('both files at once count as down', () => {
  const [v] = states([
    { name: '10.0.0.2.up', content: '' },
    { name: '10.0.0.2.down', content: '' },
  ]).vips;
  assert.deepEqual([v!.file, v!.up], ['both', false]);
});

test('a heartbeat younger than --stale-after is up, an older one is down, and the turning point is reported', () => {
  const fresh = states([{ name: '10.0.0.2.up', content: record('up', 10_000) }]);
  assert.equal(fresh.vips[0]!.up, true);
  assert.equal(fresh.vips[0]!.heartbeatAgeMs, 10_000);
  assert.equal(fresh.nextChangeAtMs, NOW + 20_001);
  const stale = states([{ name: '10.0.0.2.up', content: record('up', 31_000) }]);
  assert.equal(stale.vips[0]!.up, false);
  assert.match(stale.vips[0]!.reason, /stale/);
  assert.equal(stale.nextChangeAtMs, undefined);
});

test('a heartbeat far in the future is treated as stale, and --stale-after 0 turns the check off', () => {
  assert.equal(states([{ name: '10.0.0.2.up', content: record('up', -60_000) }]).vips[0]!.up, false);
  assert.equal(states([{ name: '10.0.0.2.up', content: record('up', 3_600_000) }], { staleAfterMs: 0 }).vips[0]!.up, true);
});

test('temporary files, foreign files and the lock file are ignored; non-IP state names are reported', () => {
  const d = states([
    { name: '.10.0.0.2.up.ab12.tmp', content: '' },
    { name: 'x.tmp', content: '' },
    { name: 'apiserver-watcher.lock', content: '' },
    { name: 'api.example.com.up', content: '' },
    { name: 'README', content: 'hello' },
  ]);
  assert.deepEqual(d.vips, []);
  assert.deepEqual(d.badNames, ['api.example.com.up']);
});

test('IPv6 names are canonicalised, and IPv4 sorts before IPv6 in numeric order', () => {
  const d = states([
    { name: '2001:DB8:100:0::100.up', content: '' },
    { name: '10.0.0.10.up', content: '' },
    { name: '10.0.0.9.down', content: '' },
  ]);
  assert.deepEqual(
    d.vips.map((v) => [v.vip, v.family]),
    [
      ['10.0.0.9', 4],
      ['10.0.0.10', 4],
      ['2001:db8:100::100', 6],
    ],
  );
});

test('with a managed list, every managed VIP is reported (no file: down) and others are left out', () => {
  const d = states([{ name: '10.0.0.7.up', content: '' }], { managed: ['10.0.0.2'] });
  assert.deepEqual(
    d.vips.map((v) => [v.vip, v.file, v.up]),
    [['10.0.0.2', 'none', false]],
  );
});

test('content that is not a record is a plain marker: the file name carries the state', () => {
  assert.equal(states([{ name: '10.0.0.2.up', content: 'garbage' }]).vips[0]!.up, true);
});

test('bad names (zone ids, metadata address, multicast, unspecified) are reported and the rest decided as usual', () => {
  const d = states([
    { name: 'fe80::1%eth0.up', content: '' },
    { name: '169.254.169.254.up', content: '' },
    { name: 'ff02::1.up', content: '' },
    { name: '0.0.0.0.up', content: '' },
    { name: '::.up', content: '' },
    { name: '10.0.0.2.up', content: '' },
    { name: 'notes.txt', content: '' },
  ]);
  assert.deepEqual(
    d.vips.map((v) => [v.vip, v.up]),
    [['10.0.0.2', true]],
  );
  assert.deepEqual(d.badNames.sort(), ['0.0.0.0.up', '169.254.169.254.up', '::.up', 'fe80::1%eth0.up', 'ff02::1.up']);
});

test('a .up too large to be a state file is not trusted (down) and reported; a large .down is still down', () => {
  const d = states([
    { name: '10.0.0.2.up', content: '', tooLarge: true },
    { name: '10.0.0.3.down', content: '', tooLarge: true },
  ]);
  assert.deepEqual(
    d.vips.map((v) => [v.vip, v.up, v.reason]),
    [
      ['10.0.0.2', false, 'up file too large to be a state file, or unreadable: not trusted'],
      ['10.0.0.3', false, 'down file'],
    ],
  );
  assert.deepEqual(d.badNames, ['10.0.0.2.up', '10.0.0.3.down']);
});

test('without a state file a managed VIP is down by default and up with the GCP reading', () => {
  const files: StateFile[] = [{ name: '10.0.0.3.down', content: '' }];
  assert.deepEqual(
    states(files, { managed: ['10.0.0.2', '10.0.0.3'] }).vips.map((v) => v.up),
    [false, false],
  );
  const gcp = decideVipStates(files, { ...opts, managed: ['10.0.0.2', '10.0.0.3'], withoutStateFile: 'up' });
  assert.deepEqual(
    gcp.vips.map((v) => [v.vip, v.file, v.up]),
    [
      ['10.0.0.2', 'none', true],
      ['10.0.0.3', 'down', false],
    ],
  );
});

test('separate heartbeats: a beat of the same watcher and verdict keeps the VIP up; any other beat does not', () => {
  const at = (msAgo: number) => new Date(NOW - msAgo).toISOString();
  const up = JSON.stringify({ state: 'up', since: at(60_000), reason: 'x', pid: 7, generation: 3, heartbeat: at(60_000), heartbeats: 'separate' });
  const beat = (pid: number, generation: number, msAgo: number) => ({
    name: '10.0.0.2.beat',
    content: JSON.stringify({ pid, generation, heartbeat: at(msAgo) }),
  });
  const decide = (beats: StateFile[]) => decideVipStates([{ name: '10.0.0.2.up', content: up }], { ...opts, beats }).vips[0]!;
  assert.equal(decide([]).up, false, 'no beat: the transition time is 60 s old');
  assert.match(decide([]).reason, /no 10\.0\.0\.2\.beat in the heartbeat directory: mount/, 'says what is probably wrong');
  assert.equal(decide([beat(7, 3, 2000)]).up, true);
  assert.equal(decide([beat(8, 3, 2000)]).up, false, 'another process');
  assert.equal(decide([beat(7, 2, 2000)]).up, false, 'an older verdict');
  assert.equal(decide([beat(7, 3, 40_000)]).up, false, 'a stale beat');
  assert.equal(decide([{ name: '10.0.0.2.beat', content: 'junk' }]).up, false);
});

test('an unreadable .up is not trusted and reported; other VIPs are decided as usual', () => {
  const d = states([
    { name: '10.0.0.2.up', content: '', error: 'EIO: i/o error' },
    { name: '10.0.0.3.up', content: '' },
  ]);
  assert.deepEqual(
    d.vips.map((v) => [v.vip, v.up]),
    [
      ['10.0.0.2', false],
      ['10.0.0.3', true],
    ],
  );
  assert.deepEqual(d.badNames, ['10.0.0.2.up']);
});

test('property: any directory content decides without throwing, and every decided VIP is a valid one', () => {
  const name = fc.oneof(
    fc.string({ maxLength: 30 }),
    fc
      .tuple(fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4Extended(), fc.string({ maxLength: 12 })), fc.constantFrom('.up', '.down', '.beat', ''))
      .map(([a, b]) => a + b),
  );
  const content = fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.json(),
    fc
      .record({
        state: fc.constantFrom('up', 'down', 'x'),
        heartbeat: fc.oneof(
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          fc.string(),
        ),
        pid: fc.integer(),
        generation: fc.integer(),
        heartbeats: fc.constantFrom('separate', undefined),
      })
      .map((r) => JSON.stringify(r)),
  );
  const file = fc.record({ name, content, tooLarge: fc.boolean() });
  fc.assert(
    fc.property(
      fc.array(file, { maxLength: 10 }),
      fc.array(file, { maxLength: 4 }),
      fc.constantFrom('up', 'down') as fc.Arbitrary<'up' | 'down'>,
      (files, beats, withoutStateFile) => {
        const d = decideVipStates(files, { nowMs: NOW, staleAfterMs: 30_000, withoutStateFile, beats });
        for (const v of d.vips) assert.equal(checkVip(v.vip).ok, true, v.vip);
        return true;
      },
    ),
    { numRuns: 2000 },
  );
});
