import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalIp } from '../base/ip.ts';
import { parseRecord, parseStateFileName, serializeRecord, type StateRecord } from './state-record.ts';

test('IPv6 VIPs are named in their compressed lower-case form', () => {
  assert.equal(canonicalIp('FD00:0:0:0:0:0:0:2'), 'fd00::2');
  assert.equal(canonicalIp('10.0.0.2'), '10.0.0.2');
  assert.equal(canonicalIp('api.example.com'), undefined);
});

test('state file names parse back to VIP and state; other names are not state files', () => {
  assert.deepEqual(parseStateFileName('10.0.0.2.up'), { vip: '10.0.0.2', state: 'up' });
  assert.deepEqual(parseStateFileName('fd00::2.down'), { vip: 'fd00::2', state: 'down' });
  for (const other of ['apiserver-watcher.lock', 'notanip.up', '.10.0.0.2.up.ab12.tmp', '10.0.0.2.upx']) {
    assert.equal(parseStateFileName(other), undefined, other);
  }
});

test('records round-trip; empty or foreign content is a plain marker', () => {
  const r: StateRecord = { state: 'up', since: '2026-01-01T00:00:00.000Z', reason: 'x', pid: 1, generation: 2, heartbeat: '2026-01-01T00:00:05.000Z' };
  assert.deepEqual(parseRecord(serializeRecord(r)), r);
  assert.equal(parseRecord(''), undefined);
  assert.equal(parseRecord('garbage'), undefined);
  assert.equal(parseRecord('{"state":"up"}'), undefined);
});
