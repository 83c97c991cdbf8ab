// Bad inputs for `kubeward plan` and `kubeward check-cert` at the process level: each
// exits 2 with one line naming the flag, host or key, and never a stack trace or a written file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execCommand } from '../src/sys/exec.ts';
import { CHECK_CERT_CASES, PLAN_CASES, type Case } from './plan-bad-input-cases.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const MAIN = join(ROOT, 'src/cli/main.ts');

async function runCase(c: Case, dir: string): Promise<{ code: number; stderr: string; stdout: string }> {
  await mkdir(dir, { recursive: true });
  for (const [name, content] of Object.entries(c.files ?? {})) await writeFile(join(dir, name), content);
  const outside = join(dir, 'outside');
  await mkdir(join(dir, 'out'), { recursive: true });
  await mkdir(join(dir, 'trap'), { recursive: true });
  await mkdir(outside, { recursive: true });
  await symlink(outside, join(dir, 'trap', 'nodes'));
  await mkdir(join(dir, 'a', 'b', 'out'), { recursive: true });
  const special: Record<string, string> = { '@out': join(dir, 'out'), '@deepout': join(dir, 'a', 'b', 'out'), '@trap': join(dir, 'trap') };
  const args = c.args.map((a) => special[a] ?? (a.startsWith('@') ? join(dir, a.slice(1)) : a));
  const r = await execCommand([process.execPath, MAIN, ...args], { okCodes: [0, 1, 2], timeoutMs: 30_000 });
  assert.deepEqual(await readdir(outside), [], `${c.name}: nothing written outside --out`);
  assert.ok(!(await readdir(dir)).includes('escaped'), `${c.name}: nothing written outside --out`);
  return r;
}

/** Runs the cases two at a time (the machine is shared) and checks each outcome. */
async function table(label: string, cases: Case[], t: { diagnostic: (m: string) => void }): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), `kw-plan-bad-${label}-`));
  const outcomes: string[] = [];
  try {
    let next = 0;
    const worker = async () => {
      while (next < cases.length) {
        const i = next++;
        const c = cases[i]!;
        const r = await runCase(c, join(root, String(i)));
        const lines = r.stderr.trimEnd().split('\n');
        assert.equal(r.code, 2, `${c.name}: exit ${r.code}\n${r.stderr}${r.stdout}`);
        assert.doesNotMatch(r.stderr, /^\s+at /m, `${c.name}: stack trace\n${r.stderr}`);
        assert.equal(lines.length, c.lines ?? 1, `${c.name}: expected ${c.lines ?? 1} line(s)\n${r.stderr}`);
        assert.match(r.stderr, c.expect, `${c.name}\n${r.stderr}`);
        outcomes[i] = `exit 2, one line: ${c.name}`;
      }
    };
    await Promise.all([worker(), worker()]);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  t.diagnostic(
    `${label}: ${outcomes.filter(Boolean).length} bad inputs tried, all exit 2 with one line per problem naming the flag, host or key, no stack trace`,
  );
}

test('kubeward plan: every bad input exits 2 with one line naming the host and key', { timeout: 600_000 }, async (t) => {
  await table('plan', PLAN_CASES, t);
});

test('kubeward check-cert: every bad input exits 2 with one line naming the flag or key', { timeout: 300_000 }, async (t) => {
  await table('check-cert', CHECK_CERT_CASES, t);
});
