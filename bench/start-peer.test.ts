import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProcessGroup } from './process-group.ts';
import { startProxy, type PeerEnv } from './start-peer.ts';

// A stand-in for bin/kubeward.js: serves the listen and admin addresses it is given, and reports
// the data path named by RELAY in /status, as a kubeward that fell back from native would.
const STANDIN = `
import { createServer } from 'node:http';
const arg = (f) => process.argv[process.argv.indexOf(f) + 1];
const [, listenPort] = arg('--listen').split(':');
const [, adminPort] = arg('--admin-address').split(':');
createServer((_q, s) => s.end('ok')).listen(Number(listenPort), '127.0.0.1');
createServer((q, s) => s.end(q.url === '/status' ? JSON.stringify({ relay: process.argv.at(-1) }) : 'ok')).listen(Number(adminPort), '127.0.0.1');
`;

test('a kubeward that does not relay on the path it was asked for is refused, with its stderr', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-start-peer-'));
  const group = new ProcessGroup();
  t.after(async () => {
    await group.stopAll();
    await rm(dir, { recursive: true, force: true });
  });
  const main = join(dir, 'standin.mjs');
  await writeFile(main, STANDIN);
  const env = (extra: string[]): PeerEnv => ({ group, dir, kubewardMain: main, nodeBin: process.execPath, kubewardExtraArgs: extra });
  const spec = { upstreamPorts: [1], tlsUpstreams: false };
  // The stand-in reports its last argument as the path: here, the fallback's.
  await assert.rejects(startProxy(env(['handle']), 'kubeward', spec, 'fallback'), /relays on the handle path, not the native one/);
  await assert.rejects(startProxy(env(['--relay=socket', 'handle']), 'kubeward', spec, 'asked'), /not the socket one/);
  const ok = await startProxy(env(['--relay', 'handle', 'handle']), 'kubeward-2', spec, 'match');
  assert.equal(ok.peer, 'kubeward-2');
});
