// The import boundaries of docs/architecture.md ("Rules") are enforced: a small tree with one
// breach of each rule, cruised with the project's own .dependency-cruiser.mjs and the reporter of npm run lint:imports, fails with every
// rule named at its file, and the allowed imports beside them pass. The eslint half (process.env,
// node:net in decision code) runs the project's own eslint.config.js blocks on snippets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { Linter } from 'eslint';
import tseslint from 'typescript-eslint';

const run = promisify(execFile);
const repo = join(import.meta.dirname, '..', '..');
// eslint.config.js is plain JavaScript without types: loaded by URL so tsc does not look into it.
const { default: eslintConfig } = (await import(new URL('../../eslint.config.js', import.meta.url).href)) as { default: Linter.Config[] };

/** Each file of the breach tree, and the rule it must trip ('' when it must pass). */
const TREE: Record<string, { code: string; breaks: string }> = {
  'src/base/errors.ts': { code: 'export class KubewardError extends Error {}\n', breaks: '' },
  'src/base/ip.ts': { code: 'export const isCidr = (s: string) => s.includes("/");\n', breaks: '' },
  'src/base/logger.ts': { code: "import pino from 'pino';\nexport const log = pino;\n", breaks: '' },
  'src/clients/kube/kube-types.ts': { code: 'export interface Node { name: string }\n', breaks: '' },
  'src/clients/openstack/create-openstack-client.ts': { code: 'export const createOpenStackClient = () => ({});\n', breaks: '' },
  // Allowed: types from anywhere, values from base/ (but its logger), another decision file.
  'src/watch/decide-fine.ts': {
    code: "import type { Node } from '../clients/kube/kube-types.ts';\nimport { KubewardError } from '../base/errors.ts';\nimport { isCidr } from '../base/ip.ts';\nimport { pick } from '../proxy/pick-upstream.ts';\nexport const f = (n: Node) => [n, KubewardError, isCidr, pick];\n",
    breaks: '',
  },
  'src/proxy/pick-upstream.ts': { code: "import { isIP } from 'node:net';\nexport const pick = isIP;\n", breaks: '' },
  'src/watch/decide-logs.ts': { code: "import { log } from '../base/logger.ts';\nexport const g = log;\n", breaks: 'decision-imports-pure-only' },
  'src/routes/desired-ruleset.ts': { code: "import { readFile } from 'node:fs/promises';\nexport const h = readFile;\n", breaks: 'decision-imports-pure-only' },
  'src/cli/demo.ts': { code: "import { s } from '../../testkit/standin.ts';\nexport const d = s;\n", breaks: 'src-not-to-testkit' },
  'testkit/standin.ts': { code: 'export const s = 1;\n', breaks: '' },
  'src/proxy/uses-cli.ts': { code: "import { d } from '../cli/demo.ts';\nexport const u = d;\n", breaks: 'cli-is-the-top' },
  'src/controllers/flight/flight-round.ts': {
    code: "import { createOpenStackClient } from '../../clients/openstack/create-openstack-client.ts';\nexport const r = createOpenStackClient;\n",
    breaks: 'only-cli-wires-clients',
  },
  'src/routes/uses-kube-lib.ts': {
    code: "import { KubeConfig } from '@kubernetes/client-node';\nexport const k = KubeConfig;\n",
    breaks: 'kube-library-in-clients-only',
  },
  'src/sys/a.ts': { code: "import type { B } from './b.ts';\nexport type A = { b?: B };\n", breaks: 'no-circular' },
  // The same cycle, reported once at the file the cruise reaches first.
  'src/sys/b.ts': { code: "import type { A } from './a.ts';\nexport type B = { a?: A };\n", breaks: '' },
};

test('the import rules name every breach at its file and pass the allowed imports', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kw-bounds-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  await copyFile(join(repo, '.dependency-cruiser.mjs'), join(dir, '.dependency-cruiser.mjs'));
  await mkdir(join(dir, 'scripts'));
  await copyFile(join(repo, 'scripts', 'import-boundaries.mjs'), join(dir, 'scripts', 'import-boundaries.mjs'));
  await copyFile(join(repo, 'tsconfig.json'), join(dir, 'tsconfig.json'));
  for (const [file, { code }] of Object.entries(TREE)) {
    await mkdir(dirname(join(dir, file)), { recursive: true });
    await writeFile(join(dir, file), code);
  }
  const bin = join(repo, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruiser.mjs');
  const r = await run(process.execPath, [bin, 'src', 'testkit', '--config', '.dependency-cruiser.mjs', '--output-type', 'err'], {
    cwd: dir,
    maxBuffer: 32 << 20,
  }).then(
    () => ({ failed: false, stdout: '' }),
    (err: { stdout: string }) => ({ failed: true, stdout: err.stdout }),
  );
  assert.ok(r.failed, 'depcruise exits non-zero on a breach');
  // The err reporter npm run lint:imports uses: "error <rule>: <from> → <to>".
  const found = [...r.stdout.matchAll(/error (\S+): (\S+) →/g)].map((m) => `${m[2]} ${m[1]}`);
  const expected = Object.entries(TREE)
    .filter(([, f]) => f.breaks !== '')
    .map(([file, f]) => `${file} ${f.breaks}`);
  assert.deepEqual([...new Set(found)].sort(), expected.sort());
});

test('eslint keeps process.env in src/cli/ and decision code to the address checks of node:net', () => {
  const linter = new Linter({ cwd: repo });
  const blocks = eslintConfig.filter((c) => c.name?.startsWith('kubeward/boundaries/'));
  assert.equal(blocks.length, 2);
  const config: Linter.Config[] = [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser as Linter.Parser } }, ...blocks];
  const rules = (code: string, file: string) => linter.verify(code, config, join(repo, file)).map((m) => m.ruleId);
  assert.deepEqual(rules('export const e = process.env.HOME;\n', 'src/watch/watcher.ts'), ['no-restricted-properties']);
  assert.deepEqual(rules('export const e = process.env.HOME;\n', 'src/cli/watch.ts'), []);
  assert.deepEqual(rules('export const e = process.env.HOME;\n', 'src/watch/watcher.test.ts'), []);
  assert.deepEqual(rules("import { createServer } from 'node:net';\nexport const s = createServer;\n", 'src/plan/plan-endpoints.ts'), [
    'no-restricted-imports',
  ]);
  assert.deepEqual(rules("import { isIP } from 'node:net';\nexport const s = isIP;\n", 'src/plan/plan-endpoints.ts'), []);
  assert.deepEqual(rules("import { createServer } from 'node:net';\nexport const s = createServer;\n", 'src/proxy/frontend.ts'), []);
});
