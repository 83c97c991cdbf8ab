import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { KubeConfig } from '@kubernetes/client-node';
import { freePort } from '../../testkit/wait-for.ts';
import { KubewardError, describeError } from './errors.ts';

test('a network error keeps its cause: fetch failed says what failed and where', async () => {
  const port = await freePort();
  const err = await fetch(`http://127.0.0.1:${port}/`).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.match(describeError(err), new RegExp(`^fetch failed \\(.*ECONNREFUSED 127\\.0\\.0\\.1:${port}\\)$`));
  const wrapped = new KubewardError('E_HTTP', 'keystone: cannot authenticate', { cause: err });
  assert.match(describeError(wrapped), new RegExp(`keystone: cannot authenticate \\(fetch failed \\(.*ECONNREFUSED 127\\.0\\.0\\.1:${port}\\)\\)`));
});

test('a cause already in the message is not repeated', () => {
  const cause = new Error('ENOENT: no such file');
  assert.equal(describeError(new Error(`cannot read x (${cause.message})`, { cause })), 'cannot read x (ENOENT: no such file)');
});

test('YAML syntax errors give line, column and reason, never the offending line (a password or token)', () => {
  const clouds = 'clouds:\n  prod:\n    auth:\n      password: hunter2: oops\n';
  const yamlErr = (() => {
    try {
      parse(clouds);
    } catch (e) {
      return e;
    }
  })();
  assert.match(describeError(yamlErr), /^YAML syntax error at line 4, column \d+: /);
  assert.ok(!describeError(yamlErr).includes('hunter2'));
  const kubeconfig = 'users:\n- name: a\n  user:\n    token: eyJsecret: def\n   x: y\n';
  const kcErr = (() => {
    try {
      new KubeConfig().loadFromString(kubeconfig);
    } catch (e) {
      return e;
    }
  })();
  assert.match(describeError(kcErr), /^YAML syntax error at line 4, column \d+: /);
  assert.ok(!describeError(kcErr).includes('eyJsecret'));
});
