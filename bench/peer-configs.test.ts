import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isNginxListenParam, renderNginxStream } from './peer-configs.ts';
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
