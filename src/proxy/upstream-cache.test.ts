import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseUpstreamCache, readUpstreamCache, renderUpstreamCache, writeUpstreamCache } from './upstream-cache.ts';

test('a rendered cache parses back to the same lists', () => {
  const lists = new Map([
    [
      'api',
      [
        { host: '10.0.0.1', port: 6443 },
        { host: 'fd00::2', port: 6443 },
      ],
    ],
  ]);
  const back = parseUpstreamCache(renderUpstreamCache(lists, new Date(0)));
  assert.deepEqual(back, { ok: true, lists });
});

const bad: [string, string, RegExp][] = [
  ['truncated JSON', '{"kind":"KubewardProxyUp', /^not JSON/],
  ["another program's file", '{"apiVersion":"v1","kind":"ConfigMap"}', /not a kubeward proxy upstream cache \(kind:/],
  ['an empty list', '{"kind":"KubewardProxyUpstreams","version":1,"frontends":{"api":{"upstreams":[],"updatedAt":"x"}}}', /frontends\.api\.upstreams/],
  ['a bad address', '{"kind":"KubewardProxyUpstreams","version":1,"frontends":{"api":{"upstreams":["nope"],"updatedAt":"x"}}}', /frontends\.api\.upstreams\.0/],
  ['a future version', '{"kind":"KubewardProxyUpstreams","version":2,"frontends":{}}', /version/],
];
for (const [name, text, problem] of bad) {
  test(`a cache file with ${name} is reported, not thrown`, () => {
    const r = parseUpstreamCache(text);
    assert.equal(r.ok, false);
    if (!r.ok) assert.match(r.problem, problem);
  });
}

test('the cache is written atomically into a directory it creates, and a missing file is told apart', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-cache-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'sub', 'proxy-upstreams.json');
  assert.deepEqual(await readUpstreamCache(path), { ok: false, missing: true, problem: 'no cache file yet' });
  await writeUpstreamCache(path, new Map([['api', [{ host: '10.0.0.1', port: 6443 }]]]));
  assert.match(await readFile(path, 'utf8'), /"10\.0\.0\.1:6443"/);
  assert.equal((await readUpstreamCache(path)).ok, true);
  await writeFile(path, 'garbage');
  assert.equal((await readUpstreamCache(path)).ok, false);
});
