// npm run manifests: writes every node manifest under deploy/ and the docs' copies of them from
// src/manifests/ (the one source). Run it after changing a manifest there; the test
// test/deploy/manifest-source.test.ts fails while a file or a snippet differs.
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fillSnippets } from '../src/manifests/doc-snippets.ts';
import { renderShipped, renderSnippet, shippedManifests } from '../src/manifests/shipped-manifests.ts';

const root = join(import.meta.dirname, '..');
const manifests = shippedManifests();
for (const m of manifests) await writeFile(join(root, m.path), renderShipped(m));
const byPath = new Map(manifests.map((m) => [m.path, m]));
const docs = (await readdir(join(root, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => join('docs', f));
// Units are their own source: their copies are the files.
const units = new Map<string, string>();
for (const d of await readdir(join(root, 'deploy'), { withFileTypes: true })) {
  if (!d.isDirectory()) continue;
  for (const f of await readdir(join(root, 'deploy', d.name))) {
    if (f.endsWith('.service')) units.set(`deploy/${d.name}/${f}`, await readFile(join(root, 'deploy', d.name, f), 'utf8'));
  }
}
for (const doc of [...docs, 'README.md']) {
  const text = await readFile(join(root, doc), 'utf8');
  const filled = fillSnippets(text, (p) => {
    const m = byPath.get(p);
    return m ? renderSnippet(m) : units.get(p);
  });
  if (filled !== text) await writeFile(join(root, doc), filled);
}
process.stdout.write(`write-manifests: ${manifests.length} manifests written\n`);
