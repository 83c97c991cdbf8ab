import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { OpenStackBodyError, parseResponseText, readArrayBody, readListPage, readObjectBody } from './response-body.ts';

const SRC = { service: 'cinder', method: 'GET', path: '/volumes/detail', status: 200 };

function outcome(f: () => unknown): { ok: true; value: unknown } | { ok: false; err: unknown } {
  try {
    return { ok: true, value: f() };
  } catch (err) {
    return { ok: false, err };
  }
}

test('bodies that are not a list of volumes are errors that say what came', () => {
  const cases: [string, string, RegExp][] = [
    ['an HTML maintenance page', '<html><body><h1>503 Service Unavailable</h1>Back soon</body></html>', /got text/],
    ['an empty object', '{}', /expected "volumes" in the answer, got an empty object/],
    ['a renamed key', '{"Volumes": []}', /got an object with keys Volumes/],
    ['null under the key', '{"volumes": null}', /"volumes" is null, not a list/],
    ['an object under the key', '{"volumes": {}}', /not a list/],
    ['a string item', '{"volumes": ["vol-1"]}', /"volumes"\[0\] is text/],
    ['bad links', '{"volumes": [], "volumes_links": "next"}', /"volumes_links" is text/],
    ['an empty body', '', /got nothing/],
    ['a bare array', '[]', /got an array/],
  ];
  for (const [name, text, msg] of cases) {
    const r = outcome(() => readListPage(parseResponseText(text), 'volumes', SRC));
    assert.equal(r.ok, false, name);
    assert.ok(!r.ok && r.err instanceof OpenStackBodyError, name);
    const err = (r as { err: OpenStackBodyError }).err;
    assert.equal(err.problem, 'UnexpectedBody', name);
    assert.equal(err.code, 'E_UPSTREAM', name);
    assert.match(err.message, msg, name);
    assert.match(err.message, /^cinder GET \/volumes\/detail: 200 UnexpectedBody/, name);
  }
});

test('a real empty list and a real page are read as such', () => {
  assert.deepEqual(readListPage(parseResponseText('{"volumes": []}'), 'volumes', SRC).items, []);
  const page = readListPage<{ id: string }>(
    parseResponseText('{"volumes": [{"id": "a"}], "volumes_links": [{"rel": "next", "href": "x?marker=a"}]}'),
    'volumes',
    SRC,
  );
  assert.deepEqual(page.items, [{ id: 'a' }]);
  assert.equal(page.links?.length, 1);
  assert.deepEqual(readObjectBody(parseResponseText('{"router": {"id": "r"}}'), 'router', SRC), { id: 'r' });
  assert.throws(() => readObjectBody(parseResponseText('{}'), 'router', SRC), OpenStackBodyError);
  assert.throws(() => readArrayBody(parseResponseText('{"tag": []}'), 'tags', SRC), OpenStackBodyError);
});

// Any text or JSON value a broken proxy or service could send.
const anyBody = fc.oneof(
  fc.string().map(parseResponseText),
  fc.jsonValue(),
  fc.anything(),
  fc.dictionary(fc.constantFrom('volumes', 'Volumes', 'volumes_links', 'items', 'servers'), fc.jsonValue()),
  fc.record({ volumes: fc.array(fc.oneof(fc.jsonValue(), fc.record({ id: fc.string() }))), volumes_links: fc.option(fc.jsonValue(), { nil: undefined }) }),
);

test('property: no body throws anything but OpenStackBodyError, and none reads as an empty list unless "volumes" is an empty array', () => {
  fc.assert(
    fc.property(anyBody, (body) => {
      const r = outcome(() => readListPage(body, 'volumes', SRC));
      if (!r.ok) return r.err instanceof OpenStackBodyError;
      const items = (r.value as { items: unknown[] }).items;
      const held = (body as Record<string, unknown>).volumes;
      if (!Array.isArray(held) || held !== items) return false;
      return items.every((x) => typeof x === 'object' && x !== null && !Array.isArray(x));
    }),
    { numRuns: 2000 },
  );
});

test('property: object and array readers throw only OpenStackBodyError', () => {
  fc.assert(
    fc.property(anyBody, (body) => {
      for (const f of [() => readObjectBody(body, 'volumes', SRC), () => readArrayBody(body, 'volumes', SRC)]) {
        const r = outcome(f);
        if (!r.ok && !(r.err instanceof OpenStackBodyError)) return false;
      }
      return true;
    }),
    { numRuns: 1000 },
  );
});
