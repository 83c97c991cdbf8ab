import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, formatTextLine, infoAtAnyLevel } from './logger.ts';

test('json logs carry level, message and fields on one line', () => {
  const lines: string[] = [];
  const log = createLogger({ format: 'json', level: 'info', write: (l) => lines.push(l) });
  log.info({ vip: '10.0.0.1' }, 'state changed');
  log.debug('not shown at info');
  assert.equal(lines.length, 1);
  const rec = JSON.parse(lines[0]!);
  assert.equal(rec.msg, 'state changed');
  assert.equal(rec.vip, '10.0.0.1');
  assert.equal(rec.level, 30);
});

test('text logs read as time, level, message, then key=value pairs', () => {
  const line = formatTextLine(JSON.stringify({ level: 40, time: 0, pid: 1, msg: 'probe failed', reason: 'refused', note: 'a b' }));
  assert.equal(line, '1970-01-01T00:00:00.000Z WARN  probe failed reason=refused note="a b"\n');
});

test('a bound address is written at info whatever the level, once, and nothing else at info passes', () => {
  for (const level of ['trace', 'info', 'warn', 'error', 'fatal'] as const) {
    const lines: string[] = [];
    const log = createLogger({ format: 'json', level, write: (l) => lines.push(l) });
    log.info('an ordinary info line');
    infoAtAnyLevel(log, { address: '127.0.0.1:41234' }, 'admin listener ready');
    const bound = lines.map((l) => JSON.parse(l) as { msg: string; address?: string; level: number }).filter((l) => l.msg === 'admin listener ready');
    assert.deepEqual(bound, [{ ...bound[0], address: '127.0.0.1:41234', level: 30 }], level);
    assert.equal(lines.length, level === 'trace' || level === 'info' ? 2 : 1, level);
  }
});
