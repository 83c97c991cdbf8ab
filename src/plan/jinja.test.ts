// The Jinja subset kubespray's defaults and samples use, and what is refused by name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { JinjaError, renderTemplate, type Lookup } from './jinja.ts';
import { VarScope } from './var-scope.ts';

const vars: Record<string, unknown> = {
  kube_config_dir: '/etc/kubernetes',
  cluster_name: 'Cluster.Local',
  lb: { address: 'fd00::1', port: 6443 },
  on: true,
  off: false,
  empty: null,
};
const lookup: Lookup = (n) => (Object.hasOwn(vars, n) ? { found: true, value: vars[n] } : { found: false });
const r = (t: string) => renderTemplate(t, lookup);

test('variable references, attributes, concatenation and literals', () => {
  assert.equal(r('{{ kube_config_dir }}/ssl'), '/etc/kubernetes/ssl');
  assert.equal(r('{{ lb.address }}'), 'fd00::1');
  assert.equal(r("{{ lb['port'] }}"), 6443, 'a lone expression keeps its type');
  assert.equal(r("{{ 'a' ~ lb.port ~ 'b' }}"), 'a6443b');
  assert.equal(r("{{ kube_config_dir + '/manifests' }}"), '/etc/kubernetes/manifests');
  assert.equal(r('x{{ on }}y'), 'xTruey', 'booleans render as Python does inside text');
});

test('filters: default/d (also on falsy with true), ipwrap, lower, string, int, bool', () => {
  assert.equal(r("{{ nope | default('x') }}"), 'x');
  assert.equal(r('{{ nope | d(lb.port) }}'), 6443);
  assert.equal(r("{{ empty | default('x') }}"), null, 'None is defined');
  assert.equal(r("{{ off | default('x', true) }}"), 'x');
  assert.equal(r('{{ lb.address | ansible.utils.ipwrap }}'), '[fd00::1]');
  assert.equal(r("{{ '10.0.0.1' | ipwrap }}"), '10.0.0.1');
  assert.equal(r('{{ cluster_name | lower }}'), 'cluster.local');
  assert.equal(r("{{ '42' | int }}"), 42);
  assert.equal(r("{{ 'yes' | bool }}"), true);
});

test('conditionals and tests as kubespray defaults use them', () => {
  assert.equal(r("{{ 'localhost' if on else lb.address }}"), 'localhost');
  assert.equal(r("{{ 'localhost' if off else (lb.address | d('none')) }}"), 'fd00::1');
  assert.equal(r('{{ lb is defined }}'), true);
  assert.equal(r('{{ nope is not defined }}'), true);
  assert.equal(r("{{ 'a' if cluster_name == 'Cluster.Local' else 'b' }}"), 'a');
  assert.equal(r('{{ not off and on }}'), true);
});

test('facts, hostvars, lookups, statements, unknown filters and undefined variables are refused by name', () => {
  const refused = (t: string, subject: RegExp) =>
    assert.throws(
      () => r(t),
      (e: unknown) => e instanceof JinjaError && subject.test(e.subject) && e.message.length > 0,
    );
  refused('{{ ansible_default_ipv4.address }}', /^ansible_default_ipv4$/);
  refused("{{ hostvars['cp1'].ip }}", /^hostvars$/);
  refused("{{ groups['kube_control_plane'] | first }}", /^groups$/);
  refused("{{ lookup('env', 'HOME') }}", /^lookup$/);
  refused('{% if on %}x{% endif %}', /^\{%/);
  refused("{{ kube_config_dir | regex_replace('a', 'b') }}", /regex_replace/);
  refused('{{ nope }}/ssl', /^nope$/);
  refused('{{ kube_config_dir', /\{\{/);
});

test('a scope evaluates templates in layers, highest first, and reports self-reference', () => {
  const scope = new VarScope([
    { kube_config_dir: '/etc/kubernetes', kube_cert_dir: '{{ kube_config_dir }}/ssl' },
    { kube_config_dir: '/opt/k8s' },
    { a: '{{ b }}', b: '{{ a }}' },
  ]);
  assert.equal(scope.value('kube_cert_dir'), '/opt/k8s/ssl');
  assert.throws(() => scope.value('a'), /refers to itself/);
  assert.equal(scope.setByInventory('kube_cert_dir'), false);
  assert.equal(scope.setByInventory('kube_config_dir'), true);
});

test('property: any text either renders or throws a JinjaError, nothing else', () => {
  const piece = fc.oneof(
    fc.string({ maxLength: 8 }),
    fc.constantFrom(
      '{{',
      '}}',
      '{%',
      '|',
      "'",
      '"',
      '(',
      ')',
      '[',
      ']',
      '.',
      '~',
      '+',
      ' if ',
      ' else ',
      'default(',
      'ipwrap',
      'lb',
      'nope',
      'on',
      ' is defined',
    ),
  );
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 12 }), (parts) => {
      try {
        r(parts.join(''));
      } catch (e) {
        assert.ok(e instanceof JinjaError, `threw ${String(e)}`);
      }
    }),
    { numRuns: 2000 },
  );
});
