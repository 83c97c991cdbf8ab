import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  decideConnect,
  decideOffer,
  decideRequest,
  formatMessage,
  isHandoverAddress,
  judgeHandoverDir,
  MAX_LINE,
  MAX_LISTENERS,
  parseMessage,
  type HandoverMessage,
} from './decide-handover.ts';

const address = fc.oneof(
  fc.tuple(fc.ipV4(), fc.integer({ min: 1, max: 65535 })).map(([h, p]) => `${h}:${p}`),
  fc.tuple(fc.ipV6(), fc.integer({ min: 1, max: 65535 })).map(([h, p]) => `[${h}]:${p}`),
);
const addresses = fc.uniqueArray(address, { maxLength: MAX_LISTENERS });
const message: fc.Arbitrary<HandoverMessage> = fc.oneof(
  fc.constant({ kind: 'hello' as const }),
  addresses.map((a) => ({ kind: 'offer' as const, addresses: a })),
  addresses.map((a) => ({ kind: 'accepting' as const, addresses: a })),
);

test('a message survives format and parse unchanged, and its line fits the limit', () => {
  fc.assert(
    fc.property(message, (m) => {
      const line = formatMessage(m);
      assert.ok(line.endsWith('\n') && line.indexOf('\n') === line.length - 1, 'one line');
      assert.ok(line.length <= MAX_LINE, `${line.length} bytes`);
      assert.deepEqual(parseMessage(line.slice(0, -1)), m);
    }),
    { numRuns: 500 },
  );
});

test('parseMessage never throws and accepts nothing but the three messages', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string({ maxLength: 300 }),
        fc.string().map((s) => `kubeward-handover 1 ${s}`),
      ),
      (line) => {
        const m = parseMessage(line);
        if ('invalid' in m) return;
        assert.ok(['hello', 'offer', 'accepting'].includes(m.kind));
        if (m.kind !== 'hello') for (const a of m.addresses) assert.ok(isHandoverAddress(a), a);
      },
    ),
    { numRuns: 1000 },
  );
  for (const bad of [
    'kubeward-handover 2 hello',
    'kubeward-handover 1 hello extra',
    'kubeward-handover 1 offer 127.0.0.1:0',
    'kubeward-handover 1 offer 127.0.0.1:65536',
    'kubeward-handover 1 offer 127.0.0.1:080',
    'kubeward-handover 1 offer 127.0.0.1:6443 127.0.0.1:6443',
    'kubeward-handover 1 offer  127.0.0.1:6443',
    'kubeward-handover 1 offer ../../etc:1',
    'kubeward-handover 1 shutdown',
    `kubeward-handover 1 offer ${Array.from({ length: MAX_LISTENERS + 1 }, (_, i) => `127.0.0.1:${i + 1}`).join(' ')}`,
    'x'.repeat(MAX_LINE + 1),
  ]) {
    assert.ok('invalid' in parseMessage(bad), bad);
  }
});

test('decideOffer: a valid offer maps each address to its descriptor; any fault refuses all and closes every descriptor', () => {
  const ok = decideOffer({ text: 'kubeward-handover 1 offer 127.0.0.1:6443 [::1]:6443', fds: [7, 8], truncated: false });
  assert.deepEqual(
    ok.adopt,
    new Map([
      ['127.0.0.1:6443', 7],
      ['[::1]:6443', 8],
    ]),
  );
  assert.deepEqual(ok.close, []);
  const cases: [string, Parameters<typeof decideOffer>[0]][] = [
    ['no descriptors', { text: 'kubeward-handover 1 offer 127.0.0.1:6443', fds: [], truncated: false }],
    ['one too many', { text: 'kubeward-handover 1 offer 127.0.0.1:6443', fds: [5, 6], truncated: false }],
    ['garbage', { text: 'HTTP/1.1 400 Bad Request', fds: [5], truncated: false }],
    ['a hello back', { text: 'kubeward-handover 1 hello', fds: [5], truncated: false }],
    ['descriptors dropped by the kernel', { text: 'kubeward-handover 1 offer 127.0.0.1:6443', fds: [5], truncated: true }],
  ];
  for (const [what, reply] of cases) {
    const v = decideOffer(reply);
    assert.equal(v.adopt, undefined, what);
    assert.deepEqual(v.close, 'fds' in reply ? reply.fds : [], `${what}: every descriptor that came is closed`);
  }
  assert.deepEqual(decideOffer({ failed: 'no answer within 3000 ms' }), { adopt: undefined, why: 'no answer within 3000 ms', close: [] });
  // Whatever arrives: either every descriptor is adopted exactly once, or every one is closed.
  fc.assert(
    fc.property(fc.string({ maxLength: 200 }), fc.uniqueArray(fc.integer({ min: 3, max: 1000 }), { maxLength: 5 }), fc.boolean(), (text, fds, truncated) => {
      const v = decideOffer({ text, fds, truncated });
      const handled = v.adopt ? [...v.adopt.values()] : v.close;
      assert.deepEqual([...handled].sort(), [...fds].sort());
    }),
    { numRuns: 500 },
  );
});

test('decideConnect: no socket or nobody on it is a first start; another uid or another error binds with a warning', () => {
  assert.deepEqual(decideConnect({ connected: true, peerUid: 65532, ownUid: 65532 }), { ask: true });
  assert.equal(decideConnect({ connected: false, code: 'ENOENT' }).ask, false);
  assert.deepEqual(
    [decideConnect({ connected: false, code: 'ENOENT' }), decideConnect({ connected: false, code: 'ECONNREFUSED' })].map((v) => !v.ask && v.warn),
    [false, false],
  );
  const other = decideConnect({ connected: true, peerUid: 0, ownUid: 65532 });
  assert.ok(!other.ask && other.warn && /uid 0/.test(other.why));
  const eacces = decideConnect({ connected: false, code: 'EACCES' });
  assert.ok(!eacces.ask && eacces.warn);
});

test('decideRequest: hello, then accepting, in that order only', () => {
  assert.deepEqual(decideRequest('greeting', 'kubeward-handover 1 hello'), { action: 'offer' });
  assert.deepEqual(decideRequest('offered', 'kubeward-handover 1 accepting 127.0.0.1:6443'), { action: 'handed-over', addresses: ['127.0.0.1:6443'] });
  assert.equal(decideRequest('greeting', 'kubeward-handover 1 accepting 127.0.0.1:6443').action, 'drop', 'accepting before any offer');
  assert.equal(decideRequest('offered', 'kubeward-handover 1 hello').action, 'drop', 'a second hello');
  assert.equal(decideRequest('greeting', 'kubeward-handover 1 offer 127.0.0.1:6443').action, 'drop', 'an offer to the offering side');
  assert.equal(decideRequest('greeting', 'GET / HTTP/1.1').action, 'drop');
});

test('judgeHandoverDir: a real directory of this uid, closed to group and others', () => {
  const dir = { isDirectory: true, isSymbolicLink: false, uid: 65532, mode: 0o40700 };
  assert.equal(judgeHandoverDir(dir, 65532), undefined);
  assert.match(judgeHandoverDir({ ...dir, mode: 0o40750 }, 65532)!, /0750: group or others/);
  assert.match(judgeHandoverDir({ ...dir, mode: 0o40701 }, 65532)!, /group or others/);
  assert.match(judgeHandoverDir({ ...dir, uid: 0 }, 65532)!, /belongs to uid 0/);
  assert.match(judgeHandoverDir({ ...dir, isSymbolicLink: true }, 65532)!, /symbolic link/);
  assert.match(judgeHandoverDir({ ...dir, isDirectory: false }, 65532)!, /not a directory/);
});
