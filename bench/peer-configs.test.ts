import { test } from 'node:test';
import assert from 'node:assert/strict';
import { askedRelay, isNginxListenParam, renderNginxStream } from './peer-configs.ts';
import { renderProvenance } from './render-table.ts';

test("nginx's listen directive is kubespray's unless --nginx-listen adds a parameter, and only a listen parameter", () => {
  const base = { dir: '/tmp/x', listenPort: 7000, upstreamPorts: [7001, 7002] };
  assert.match(renderNginxStream(base), /^ {4}listen 127\.0\.0\.1:7000;$/m);
  assert.match(renderNginxStream({ ...base, listenParams: ['reuseport', 'backlog=8192'] }), /^ {4}listen 127\.0\.0\.1:7000 reuseport backlog=8192;$/m);
  for (const bad of ['reuseport; daemon on', 'a b', '', 'x=;', '}']) {
    assert.equal(isNginxListenParam(bad), false, bad);
    assert.throws(() => renderNginxStream({ ...base, listenParams: [bad] }), /nginx listen parameter/);
  }
});

test('a run with nginx listening otherwise says so where it says what was measured', () => {
  const machine = {
    kubewardCommit: 'abc1234',
    cores: 2,
    cpu: 'EPYC',
    memoryGiB: 24,
    kernel: '6.18',
    node: 'v24',
    nginx: 'nginx/1.22.1',
    haproxy: 'HAProxy 2.6',
  };
  const settings = { rounds: 3, load: { durationS: 5 }, idleConnections: 5000 };
  assert.doesNotMatch(renderProvenance({ date: '2026-11-28', machine, settings }), /nginx listening/);
  assert.match(
    renderProvenance({ date: '2026-11-28', machine, settings: { ...settings, nginxListenParams: ['reuseport'] } }),
    /nginx listening with reuseport \(not kubespray's setting\)/,
  );
});

test('the data path the bench expects of kubeward: native unless --relay asks otherwise, the last one winning', () => {
  assert.equal(askedRelay([]), 'native');
  assert.equal(askedRelay(['--workers=2']), 'native');
  assert.equal(askedRelay(['--relay=handle']), 'handle');
  assert.equal(askedRelay(['--relay', 'socket']), 'socket');
  assert.equal(askedRelay(['--relay=handle', '--relay', 'native']), 'native');
});

test("the line saying what was measured names kubeward's data path when the run checked it", () => {
  const machine = { kubewardCommit: 'abc1234', cores: 2, cpu: 'EPYC', memoryGiB: 24, kernel: '6.18', node: 'v24', nginx: 'nginx', haproxy: 'HAProxy' };
  const settings = { rounds: 3, load: { durationS: 5 }, idleConnections: 5000 };
  assert.doesNotMatch(renderProvenance({ date: '2026-11-28', machine, settings }), /data path/);
  assert.match(renderProvenance({ date: '2026-11-28', machine, settings: { ...settings, kubewardRelay: 'native' } }), /kubeward's data path native/);
});
