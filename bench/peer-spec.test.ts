import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePeer } from './peer-spec.ts';

test('a bench peer by name runs this checkout with nothing added', () => {
  assert.deepEqual(parsePeer('nginx', '/repo'), { label: 'nginx', peer: 'nginx', main: '/repo/bin/kubeward.js', nodeArgs: [], extraArgs: [] });
  assert.throws(() => parsePeer('envoy', '/repo'), /--peer envoy: not a peer/);
});

test('LABEL=[node flags] path[@proxy flags]: node flags go in front of the entry, proxy flags after it', () => {
  assert.deepEqual(parsePeer('head=/tmp/h/bin/kubeward.js', '/repo'), {
    label: 'head',
    peer: 'kubeward',
    main: '/tmp/h/bin/kubeward.js',
    nodeArgs: [],
    extraArgs: [],
  });
  assert.deepEqual(parsePeer('st=--single-threaded --sparkplug /tmp/h/bin/kubeward.js@--relay socket', '/repo'), {
    label: 'st',
    peer: 'kubeward',
    main: '/tmp/h/bin/kubeward.js',
    nodeArgs: ['--single-threaded', '--sparkplug'],
    extraArgs: ['--relay', 'socket'],
  });
  assert.throws(() => parsePeer('x=--single-threaded', '/repo'), /no path to bin\/kubeward.js/);
});
