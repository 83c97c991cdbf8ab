import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { z } from 'zod';
import { duration, integer, parseHostPort } from './fields.ts';
import { flagNameOf, mergeConfig, readConfigFile } from './load-config.ts';

const schema = z.strictObject({
  interval: z.prefault(duration(), '2s'),
  fall: z._default(integer(1, 100), 8),
  vip: z.array(z.string()).default([]),
});

test('flags override the file key by key, and defaults fill the rest', () => {
  const cfg = mergeConfig(schema, { interval: '5s', fall: 3 }, { fall: '4', vip: undefined });
  assert.deepEqual(cfg, { interval: 5000, fall: 4, vip: [] });
});

test('a bad flag value is reported under the flag name', () => {
  assert.throws(() => mergeConfig(schema, {}, { interval: 'soon' }), /^UsageError: --interval: "soon" is not a duration/);
  assert.throws(() => mergeConfig(schema, {}, { fall: '0' }), /--fall: must be at least 1/);
});

test('a bad file value names the file and the key', () => {
  assert.throws(() => mergeConfig(schema, { fall: 'x' }, {}, '/etc/kw.yaml'), /\/etc\/kw.yaml: key "fall": expected a whole number/);
});

test('unknown keys in the file are errors, not silently ignored', () => {
  assert.throws(() => mergeConfig(schema, { intervall: '1s' }, {}, 'kw.yaml'), /kw.yaml: unknown key "intervall"/);
});

test('config files that are not YAML mappings are refused with the path', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-config-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'list.yaml'), '- a\n- b\n');
  await writeFile(join(dir, 'broken.yaml'), 'a: [1, 2\n');
  await assert.rejects(readConfigFile(join(dir, 'list.yaml')), /list.yaml: the top level must be a mapping/);
  await assert.rejects(readConfigFile(join(dir, 'broken.yaml')), /broken.yaml: not valid YAML/);
  await assert.rejects(readConfigFile(join(dir, 'missing.yaml')), /--config .*missing.yaml: cannot read the file/);
});

test('flag names are the kebab-case form of config keys', () => {
  assert.equal(flagNameOf('healthUrl'), '--health-url');
  assert.equal(flagNameOf('onExit'), '--on-exit');
});

test('HOST:PORT accepts IPv4, names and bracketed IPv6, and nothing else', () => {
  assert.deepEqual(parseHostPort('127.0.0.1:6443'), { host: '127.0.0.1', port: 6443 });
  assert.deepEqual(parseHostPort('[::1]:6443'), { host: '::1', port: 6443 });
  assert.deepEqual(parseHostPort('api.example:443'), { host: 'api.example', port: 443 });
  for (const bad of ['::1:6443', '127.0.0.1', '127.0.0.1:70000', '[nothost]:1', ':80']) assert.equal(parseHostPort(bad), undefined, bad);
});

test("a value of the wrong kind is described in the words of a config file, not the validator's", () => {
  const s = z.strictObject({ vip: z.array(z.string()).optional(), name: z.string() });
  assert.throws(() => mergeConfig(s, { vip: 'x', name: 'a' }, {}, 'w.yaml'), /^UsageError: w\.yaml: key "vip": expected a list, not text$/);
  assert.throws(() => mergeConfig(s, { name: 5 }, {}, 'w.yaml'), /^UsageError: w\.yaml: key "name": expected a text value, not a number$/);
  assert.throws(() => mergeConfig(s, {}, {}, 'w.yaml'), /^UsageError: --name: is required \(a text value\)$/);
});

test("the file is parsed in the parser's process to what yaml gives in this one (numbers JSON cannot spell, __proto__, anchors)", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-cfg-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const text = [
    'interval: 2s',
    'vip: [10.0.0.1, "fd00::1"]',
    'odd: [.inf, -.inf, .nan, -0, 0x1F, 1e3, ~, true, "yes"]',
    '__proto__: {polluted: true}',
    'base: &b {a: 1}',
    'copy: *b',
    'nested: {list: [{k: v}], empty: {}}',
    '',
  ].join('\n');
  const file = join(dir, 'kw.yaml');
  await writeFile(file, text);
  const got = await readConfigFile(file);
  assert.deepEqual(got, parseYaml(text));
  assert.ok(Object.is((got.odd as number[])[3], -0) && Number.isNaN((got.odd as number[])[2]) && (got.odd as number[])[0] === Infinity);
  assert.ok(Object.hasOwn(got, '__proto__') && Object.getPrototypeOf(got) === Object.prototype, '__proto__ is a key, not the prototype');
  await writeFile(file, '');
  assert.deepEqual(await readConfigFile(file), {}, 'an empty file is no keys');
});

test('any mapping written as YAML reads back as yaml parses it', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-cfg-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'kw.yaml');
  const leaf = fc.oneof(fc.string(), fc.double(), fc.integer(), fc.boolean(), fc.constant(null));
  const doc = fc.dictionary(fc.string(), fc.oneof(leaf, fc.array(leaf, { maxLength: 3 }), fc.dictionary(fc.string(), leaf, { maxKeys: 3 })), { maxKeys: 5 });
  // Each run starts a process: few runs, the encoding itself has its own property test (yaml-json.property.test.ts).
  await fc.assert(
    fc.asyncProperty(doc, async (d) => {
      const text = stringifyYaml(d);
      await writeFile(file, text);
      assert.deepEqual(await readConfigFile(file), parseYaml(text) ?? {});
    }),
    { numRuns: 15 },
  );
});

test('a YAML syntax error names the line and column, never the line itself (it may hold a secret)', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-cfg-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'kw.yaml');
  await writeFile(file, 'a: [1\npassword: hunter2-secret\n');
  await assert.rejects(readConfigFile(file), (err: Error) => {
    assert.match(err.message, /kw\.yaml: not valid YAML: YAML syntax error at line 2, column 1/);
    assert.doesNotMatch(err.message, /hunter2/);
    return true;
  });
});
