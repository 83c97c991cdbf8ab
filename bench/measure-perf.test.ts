import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pacedScript, runWrk } from './measure-perf.ts';

test('pacedScript accepts whole milliseconds from 1 to 1000 only', () => {
  assert.match(pacedScript(10), /function delay\(\)\n {2}return math\.random\(0, 20\)\nend/);
  for (const bad of [0, -1, 1.5, 1001, Number.NaN]) assert.throws(() => pacedScript(bad), /pacing/);
});

const hasWrk = (() => {
  try {
    execFileSync('wrk', ['-v'], { stdio: 'ignore' });
    return true;
  } catch (err) {
    // wrk -v prints its version and exits 1; only a missing binary is missing.
    return (err as NodeJS.ErrnoException).code !== 'ENOENT';
  }
})();

test('a paced wrk run stays near connections / think time, far below the unpaced rate', { skip: hasWrk ? false : 'wrk is not installed' }, async () => {
  const server = createServer((_req, res) => res.end('ok\n'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const dir = await mkdtemp(join(tmpdir(), 'kw-paced-'));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const script = join(dir, 'paced.lua');
    await writeFile(script, pacedScript(50));
    // 4 connections, 50 ms apart on average: about 80 requests/s, whatever the machine (the
    // random waits average 50 ms; 100 allows for their spread over a 2 s run).
    const paced = await runWrk(url, { durationS: 2, connections: 4, threads: 1, script });
    assert.ok(paced.requests > 0, 'the paced run sent requests');
    assert.ok(paced.requestsPerSec <= 100, `paced rate ${paced.requestsPerSec}/s is near 4 connections / 50 ms`);
    assert.equal(paced.socketErrors + paced.badResponses, 0);
  } finally {
    server.close();
    await rm(dir, { recursive: true, force: true });
  }
});
