// The operator's --namespace list: what it accepts, what it refuses, and where it makes the
// operator look.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isKubewardError } from '../../base/errors.ts';
import { namespaceScope, parseNamespaces } from './operator-config.ts';

const RUNS = Number(process.env.KUBEWARD_PROPERTY_RUNS ?? 300);
const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,20}[a-z0-9])?$/);

test('a comma-separated list of namespace names parses to the names, in order, once each, whatever the spaces', () => {
  fc.assert(
    fc.property(fc.array(label, { minLength: 1, maxLength: 6 }), fc.constantFrom(',', ', ', ' ,'), (names, sep) => {
      assert.deepEqual(parseNamespaces(names.join(sep)), [...new Set(names)]);
    }),
    { numRuns: RUNS },
  );
});

test('a word that is not a namespace name is refused with a line naming --namespace and the word', () => {
  fc.assert(
    fc.property(label, fc.stringMatching(/^[A-Z_./ ]{1,3}$/), (good, bad) => {
      const word = `${good}${bad}`.trim();
      fc.pre(word.length > 0 && word !== good && !word.includes(','));
      try {
        parseNamespaces(`${good},${word}`);
        assert.fail(`accepted ${word}`);
      } catch (err) {
        assert.ok(isKubewardError(err, 'E_USAGE'), String(err));
        assert.match((err as Error).message, /^--namespace: /);
      }
    }),
    { numRuns: RUNS },
  );
  for (const text of ['', ',', ' , ']) assert.throws(() => parseNamespaces(text), /--namespace: name at least one namespace/);
  assert.throws(() => parseNamespaces('a'.repeat(64)), /is not a namespace name/);
});

test('one namespace: the informer lists there; several: it lists every namespace and keeps the others out; none: every namespace', () => {
  assert.deepEqual(namespaceScope(undefined), { informerNamespace: undefined, inScope: undefined });
  assert.deepEqual(namespaceScope(['tenant-a']), { informerNamespace: 'tenant-a', inScope: undefined });
  const several = namespaceScope(['tenant-a', 'tenant-b']);
  assert.equal(several.informerNamespace, undefined);
  assert.deepEqual(
    ['tenant-a', 'tenant-b', 'kube-system', undefined].map((ns) => several.inScope!(ns)),
    [true, true, false, false],
  );
});
