import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatDuration, parseDuration } from './duration.ts';

test('durations parse in every unit and in combinations', () => {
  const cases: [string, number][] = [
    ['500ms', 500],
    ['2s', 2000],
    ['1m', 60_000],
    ['1h', 3_600_000],
    ['1m30s', 90_000],
    ['1.5s', 1500],
    ['0', 0],
  ];
  for (const [text, ms] of cases) assert.equal(parseDuration(text), ms, text);
});

test('anything that is not a duration is refused rather than guessed', () => {
  for (const bad of ['', '5', 'ms', '2 s', '-1s', '1d', '2s garbage', '1e3ms']) {
    assert.equal(parseDuration(bad), undefined, JSON.stringify(bad));
  }
});

test('formatting picks the largest whole unit', () => {
  assert.equal(formatDuration(300_000), '5m');
  assert.equal(formatDuration(1500), '1500ms');
  assert.equal(formatDuration(2000), '2s');
});
