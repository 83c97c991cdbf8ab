import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { followPrimary, type WorkerReport } from './proxy-workers.ts';
import { waitFor } from '../../testkit/wait-for.ts';
import type { AcceptedHandle } from './adopt-socket.ts';

/** The parts of `process` a worker's side uses: messages in, send out, kill for the shutdown. */
function fakeProcess() {
  const proc = new EventEmitter() as EventEmitter & { connected: boolean; pid: number; sent: WorkerReport[]; killed: string[] };
  Object.assign(proc, {
    connected: true,
    pid: 4242,
    sent: [],
    killed: [],
    send(m: WorkerReport) {
      proc.sent.push(m);
      return true;
    },
    kill(_pid: number, signal: string) {
      proc.killed.push(signal);
      return true;
    },
  });
  return proc;
}

const handle = (): AcceptedHandle & { closed: boolean } => {
  const h = { closed: false, close: () => void (h.closed = true) };
  return h;
};

test('a worker serves the connections the primary hands over and reports the ends of its connections, one message per turn', async () => {
  const proc = fakeProcess();
  let open = 0;
  const got: string[] = [];
  const following = followPrimary(
    {
      reload: () => assert.fail('no reload asked'),
      drain: () => assert.fail('no drain asked'),
      connection: (frontend) => {
        got.push(frontend);
        open++;
        return true;
      },
      open: () => open,
      frontends: () => ['api'],
    },
    proc as unknown as NodeJS.Process,
  );
  following.ready();
  assert.deepEqual(proc.sent, [{ kind: 'kubeward-proxy:ready', frontends: ['api'] }]);

  for (let i = 0; i < 3; i++) proc.emit('message', { kind: 'kubeward-proxy:connection', frontend: 'api' }, handle());
  proc.emit('message', { kind: 'kubeward-proxy:connection', frontend: 'api' }, undefined); // no socket came with it: ignored
  assert.deepEqual(got, ['api', 'api', 'api']);
  await delay(30);
  assert.equal(proc.sent.length, 1, 'no report for connections received: the primary counted them when it sent them');

  open = 1;
  following.closed();
  following.closed();
  await waitFor(() => proc.sent.length > 1, { timeoutMs: 2000, what: 'the load report' });
  await delay(30);
  assert.deepEqual(proc.sent.slice(1), [{ kind: 'kubeward-proxy:load', open: 1, received: 3 }], 'one report for both ends');

  proc.emit('disconnect');
  assert.deepEqual(proc.killed, ['SIGTERM'], 'the primary gone: the worker shuts down gracefully');
  following.stop();
  proc.emit('message', { kind: 'kubeward-proxy:connection', frontend: 'api' }, handle());
  assert.equal(got.length, 3, 'stopped: no more connections taken');
});
