// The systemd units in deploy/: each is valid for systemd (systemd-analyze verify) and as tight as
// its work allows, by systemd's own measure: `systemd-analyze security` gives the exposure each
// unit's header states (and docs/agent.md lists), at most 2.0 ("OK"). What each needs is shown in
// test/deploy/privilege.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
const UNITS = ['agent/kubeward-agent.service', 'proxy/kubeward-proxy.service', 'watch/kubeward-watch.service', 'routes/kubeward-routes.service'];
const analyze = await run('systemd-analyze', ['--version']).then(
  (r) => Number(/systemd (\d+)/.exec(r.stdout)?.[1] ?? 0),
  () => 0,
);
const skip = analyze >= 250 ? false : 'needs systemd-analyze 250+ (security --offline); Debian: systemd';

test("each unit's systemd-analyze security exposure is the one its header and docs/agent.md state, at most 2.0", { skip }, async () => {
  const doc = await readFile(join(ROOT, 'docs/agent.md'), 'utf8');
  for (const u of UNITS) {
    const path = join(ROOT, 'deploy', u);
    const out = (await run('systemd-analyze', ['security', '--offline=true', '--no-pager', path])).stdout;
    const measured = /Overall exposure level for \S+: (\d+\.\d)/.exec(out)?.[1];
    assert.ok(measured, `${u}: no exposure figure in ${out.slice(-200)}`);
    assert.ok(Number(measured) <= 2.0, `${u}: exposure ${measured}; tighten the unit`);
    const name = u.split('/')[1]!;
    const stated = new RegExp(`security ${name.replace('.', '\\.')}\`: (\\d+\\.\\d)`).exec(await readFile(path, 'utf8'))?.[1];
    assert.equal(stated, measured, `${u}: its header states ${stated}, systemd-analyze measures ${measured}`);
    assert.match(doc, new RegExp(`\\| \`${name.replace('.', '\\.')}\` \\| ${measured.replace('.', '\\.')} `), `docs/agent.md lists ${name} at ${measured}`);
  }
});

test('each unit is valid for systemd (systemd-analyze verify; only the kubeward binary may be missing here)', { skip }, async () => {
  for (const u of UNITS) {
    const r = await run('systemd-analyze', ['verify', '--man=no', join(ROOT, 'deploy', u)]).then(
      (x) => x.stderr,
      (e: { stderr: string }) => e.stderr,
    );
    const problems = r.split('\n').filter((l) => l.trim() && !/Command \/usr\/local\/bin\/kubeward is not executable/.test(l));
    assert.deepEqual(problems, [], u);
  }
});
