import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { detachHandle, setOnListener, socketOnHandle, takeAccepts, type AcceptedHandle } from './adopt-socket.ts';

async function listening(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** One client that sends "ping" and resolves with what the socket on the accepted handle read, through its own buffer. */
async function pingThrough(port: number, handles: AcceptedHandle[]): Promise<{ text: string; intoOurBuffer: boolean }> {
  const client = connect({ host: '127.0.0.1', port });
  client.on('error', () => {});
  client.write('ping');
  while (handles.length === 0) await new Promise((r) => setImmediate(r));
  const buffer = Buffer.alloc(64);
  return new Promise((resolve) => {
    const socket = socketOnHandle(handles.shift()!, {
      buffer,
      callback: (n, buf) => {
        resolve({ text: buf.subarray(0, n).toString(), intoOurBuffer: buf === buffer });
        socket.destroy();
        client.destroy();
        return true;
      },
    });
    socket.resume();
  });
}

test("takeAccepts hands the listening server's connections over as handles, counted by no server", async (t) => {
  const server = createServer({ pauseOnConnect: true });
  t.after(() => server.close());
  const port = await listening(server);
  const handles: AcceptedHandle[] = [];
  let connectionEvents = 0;
  server.on('connection', () => connectionEvents++);
  assert.equal(
    takeAccepts(server, { noDelay: true, keepAliveSeconds: 15 }, (h) => handles.push(h)),
    true,
  );
  assert.deepEqual(await pingThrough(port, handles), { text: 'ping', intoOurBuffer: true });
  assert.equal(connectionEvents, 0, 'no Socket was built by net.Server');
  const count = await new Promise<number>((resolve, reject) => server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
  assert.equal(count, 0, "server.close() does not wait for the proxy's connections");
});

test('takeAccepts refuses a server that does not listen; detachHandle is the way then', async (t) => {
  const server = createServer({ pauseOnConnect: true });
  assert.equal(
    takeAccepts(server, { noDelay: true, keepAliveSeconds: undefined }, () => assert.fail('not listening')),
    false,
  );
  t.after(() => server.close());
  const handles: AcceptedHandle[] = [];
  server.on('connection', (s) => {
    const h = detachHandle(s);
    if (h) handles.push(h);
  });
  const port = await listening(server);
  assert.deepEqual(await pingThrough(port, handles), { text: 'ping', intoOurBuffer: true });
});

test('on Linux the accepted connection inherits keep-alive from the listening socket, set once there', async (t) => {
  if (process.platform !== 'linux') return t.skip('Linux only');
  const server = createServer({ pauseOnConnect: true });
  t.after(() => server.close());
  const port = await listening(server);
  const handles: AcceptedHandle[] = [];
  assert.equal(
    takeAccepts(server, { noDelay: true, keepAliveSeconds: 15 }, (h) => handles.push(h)),
    true,
  );
  const client = connect({ host: '127.0.0.1', port });
  t.after(() => client.destroy());
  while (handles.length === 0) await new Promise((r) => setImmediate(r));
  t.after(() => handles[0]!.close());
  // ss shows the kernel's keep-alive timer on the accepted socket (15 s idle): set by nobody but the listener.
  const { stdout } = await promisify(execFile)('ss', ['-Htno', 'state', 'established', `( sport = :${port} )`]);
  assert.match(stdout, /timer:\(keepalive,1[0-5]sec/);
});

test('setOnListener leaves the options to each connection off Linux or when the listener refuses them', () => {
  const calls: string[] = [];
  const ok = { setNoDelay: () => (calls.push('nodelay'), 0), setKeepAlive: () => (calls.push('keepalive'), 0) };
  assert.equal(setOnListener(ok, { noDelay: true, keepAliveSeconds: 15 }, 'darwin'), false);
  assert.deepEqual(calls, []);
  assert.equal(setOnListener(ok, { noDelay: true, keepAliveSeconds: 15 }, 'linux'), true);
  assert.deepEqual(calls, ['nodelay', 'keepalive']);
  assert.equal(setOnListener({ ...ok, setKeepAlive: () => -22 }, { noDelay: true, keepAliveSeconds: 15 }, 'linux'), false);
  assert.equal(setOnListener({}, { noDelay: true, keepAliveSeconds: 15 }, 'linux'), false);
});
