// The stand-in's graceful shutdown is as kube-apiserver's: /readyz 503 while it still serves for the
// delay (new connections too), then answers in flight carry "Connection: close", the listener is
// gone and the keep-alive connection is closed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'node:https';
import { connect } from 'node:net';
import { createTestCa } from './certs.ts';
import { ApiserverStandin } from './apiserver-standin.ts';
import { waitFor } from './wait-for.ts';

function get(port: number, path: string, agent: Agent): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
    });
    req.on('error', reject);
    req.end();
  });
}

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => (s.destroy(), resolve(false)));
    s.once('error', () => resolve(true));
  });

test('shutdown: readyz 503 and still serving for the delay, then the listener and the keep-alive connections close', async (t) => {
  const ca = await createTestCa('standin-shutdown-ca');
  const cert = await ca.issueServer('apiserver', ['IP:127.0.0.1']);
  const standin = new ApiserverStandin({ cert: cert.cert, key: cert.key });
  await standin.open();
  t.after(() => standin.close());
  const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: ca.cert });
  t.after(() => agent.destroy());
  const port = standin.port;
  assert.equal((await get(port, '/readyz', agent)).status, 200);
  const stopped = standin.shutdown(400);
  assert.equal((await get(port, '/readyz', agent)).status, 503, 'not ready at once');
  const during = await get(port, '/api/v1/pods', agent);
  assert.deepEqual([during.status, during.connection], [200, 'keep-alive'], 'still serving on the kept connection');
  assert.equal(await refused(port), false, 'new connections accepted during the delay');
  await stopped;
  assert.equal(await refused(port), true, 'the listener is closed after the delay');
  await waitFor(() => standin.openConnections === 0, { timeoutMs: 5000, what: 'no connection left open' });
});
