// The proxy's close/destroy contract (docs/architecture.md, "Close vs destroy"): close() stops
// accepting, lets open connections finish and is idempotent; destroy() ends what is left at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { KubewardProxy } from '../../src/proxy/start-proxy.ts';
import { frontendConfig, listenPort, openGreeted, startTestProxy, startUpstreams } from './proxy-fixtures.ts';

const refused = (port: number) =>
  new Promise<string>((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => (s.destroy(), resolve('connected')));
    s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });

test('close() stops accepting, lets an open connection finish and is idempotent; destroy() ends the rest', async (t) => {
  const [a] = await startUpstreams(t, ['a']);
  const proxy = await startTestProxy(t, [frontendConfig([a!.address])], 30_000);
  assert.ok(proxy instanceof KubewardProxy);
  const port = listenPort(proxy);
  const open = await openGreeted(port);
  assert.equal(open.upstream, 'a');

  let closed = false;
  const closing = proxy.close();
  assert.equal(proxy.close(), closing, 'a second close joins the first');
  void closing.then(() => (closed = true));
  assert.equal(await refused(port), 'ECONNREFUSED', 'no new connections');
  assert.equal(closed, false, 'the open connection holds close() within the grace period');
  const ended = new Promise((resolve) => open.socket.once('close', resolve));
  proxy.destroy();
  await ended;
  await closing;
});
