// Every file `kubeward plan render` writes for the example inventories, against golden files
// (UPDATE_GOLDEN=1 rewrites them), and every nginx and HAProxy config loaded by the real tool.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { access, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { execCommand } from '../src/sys/exec.ts';
import { parseInventory } from '../src/plan/parse-inventory.ts';
import { renderPlan, type RenderedFile } from '../src/plan/render-plan.ts';
import { formatProblem } from '../src/plan/raw-inventory.ts';
import { createTestCa } from '../testkit/certs.ts';

const ROOT = new URL('..', import.meta.url).pathname;
const EXAMPLES = join(ROOT, 'examples/inventory');
const GOLDEN = join(ROOT, 'test/golden/plan');
const UPDATE = process.env.UPDATE_GOLDEN === '1';
const NGINX_STREAM_MODULE = '/usr/lib/nginx/modules/ngx_stream_module.so';

async function renderExample(file: string): Promise<RenderedFile[]> {
  const path = join(EXAMPLES, file);
  const r = parseInventory({ source: path, text: await readFile(path, 'utf8') });
  if (!r.ok) throw new Error(r.problems.map(formatProblem).join('\n'));
  return renderPlan(r.inventory);
}

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (d: string) => {
    for (const e of await readdir(d, { withFileTypes: true }).catch(() => [])) {
      if (e.isDirectory()) await walk(join(d, e.name));
      else out.push(relative(dir, join(d, e.name)));
    }
  };
  await walk(dir);
  return out.sort();
}

async function hasCommand(cmd: string): Promise<boolean> {
  return execCommand(['sh', '-c', `command -v ${cmd}`]).then(
    () => true,
    () => false,
  );
}

const CASES = ['local-nginx.yaml', 'local-haproxy.yaml', 'local-kubeward.yaml', 'external-lb.ini', 'no-lb.yaml', 'metallb-vip.yaml', 'kube-vip.yaml'];

describe('rendered files match the golden files', () => {
  for (const file of CASES) {
    test(`${file}: every rendered file equals its golden copy, and no golden file is stale`, async () => {
      const caseDir = join(GOLDEN, file.replace(/\.\w+$/, ''));
      const files = await renderExample(file);
      if (UPDATE) {
        await rm(caseDir, { recursive: true, force: true });
        for (const f of files) {
          await mkdir(dirname(join(caseDir, f.path)), { recursive: true });
          await writeFile(join(caseDir, f.path), f.content);
        }
      }
      for (const f of files) {
        const golden = await readFile(join(caseDir, f.path), 'utf8').catch(() => undefined);
        assert.ok(golden !== undefined, `${f.path} has no golden file; run UPDATE_GOLDEN=1 node --test test/plan-render.test.ts and review the diff`);
        assert.equal(f.content, golden, `${file}: ${f.path} differs from its golden file`);
      }
      assert.deepEqual(await listFiles(caseDir), files.map((f) => f.path).sort(), 'golden files that the plan no longer renders');
    });
  }
});

describe('rendered configs load in the real nginx and HAProxy', () => {
  let dir: string;
  let caFile: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kw-plan-tools-'));
    caFile = (await createTestCa('plan-tools-ca', dir)).certFile;
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test('every rendered nginx config passes nginx -t (with the Debian stream module loaded)', async (t) => {
    const nginx = await hasCommand('nginx');
    const module = await access(NGINX_STREAM_MODULE).then(
      () => true,
      () => false,
    );
    if (!nginx || !module) return t.skip('nginx or its stream module is missing; install nginx-light and libnginx-mod-stream');
    let checked = 0;
    for (const file of CASES) {
      for (const f of (await renderExample(file)).filter((x) => x.kind === 'nginx')) {
        // The official nginx image has the stream module built in; Debian's nginx loads it.
        const conf = join(dir, `${file}-${f.path.replaceAll('/', '_')}`);
        await writeFile(conf, `load_module ${NGINX_STREAM_MODULE};\npid ${dir}/nginx.pid;\n${f.content}`);
        const r = await execCommand(['nginx', '-t', '-q', '-p', dir, '-e', 'stderr', '-c', conf], { okCodes: [0, 1] });
        assert.equal(r.code, 0, `${file} ${f.path}: nginx -t failed: ${r.stderr}`);
        checked++;
      }
    }
    assert.ok(checked >= 2, `expected several nginx configs, checked ${checked}`);
  });

  test('every rendered HAProxy config (node-local and external) passes haproxy -c', async (t) => {
    if (!(await hasCommand('haproxy'))) return t.skip('haproxy is missing; install the haproxy package');
    let checked = 0;
    for (const file of CASES) {
      for (const f of (await renderExample(file)).filter((x) => x.kind === 'haproxy')) {
        // haproxy -c opens the ca-file, so the node's CA path is pointed at a CA the test made.
        const text = f.content.replace(/ca-file \S+/g, `ca-file ${caFile}`);
        assert.ok(!f.content.includes('verify required') || text.includes(caFile), 'the CA path was substituted');
        const conf = join(dir, `${file}-${f.path.replaceAll('/', '_')}`);
        await writeFile(conf, text);
        const r = await execCommand(['haproxy', '-c', '-f', conf], { okCodes: [0, 1, 2] });
        assert.equal(r.code, 0, `${file} ${f.path}: haproxy -c failed: ${r.stdout}${r.stderr}`);
        assert.doesNotMatch(r.stdout + r.stderr, /\[WARNING\]/, `${file} ${f.path}: haproxy -c warned`);
        checked++;
      }
    }
    assert.ok(checked >= 2, `expected several HAProxy configs, checked ${checked}`);
  });
});
