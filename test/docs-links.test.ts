// Every relative link in README.md, CONTRIBUTING.md and docs/**/*.md points at a file that exists, and
// every #anchor at a heading of the page it names: the README was split into docs/ pages, and a
// moved section must not leave links behind that lead nowhere.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const pages = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchors(file: string): Set<string> {
  let fence = false;
  const out = new Set<string>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('```')) fence = !fence;
    const m = !fence && /^#{1,6} (.*)$/.exec(line);
    if (m) out.add(anchorOf(m[1]!));
  }
  return out;
}

function links(text: string): string[] {
  const withoutCode = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...withoutCode.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z]+:/.test(t));
}

test('relative links in the README and docs/ lead to files and headings that exist', () => {
  const broken: string[] = [];
  for (const page of pages) {
    const file = join(ROOT, page);
    for (const link of links(readFileSync(file, 'utf8'))) {
      const [path, anchor] = link.split('#') as [string, string | undefined];
      const target = path === '' ? file : join(dirname(file), path);
      if (!existsSync(target)) broken.push(`${page}: ${link} (no ${relative(ROOT, target)})`);
      else if (anchor !== undefined && target.endsWith('.md') && !anchors(target).has(anchor)) broken.push(`${page}: ${link} (no heading #${anchor})`);
    }
  }
  assert.deepEqual(broken, []);
});

test('the anchor rule matches GitHub for the headings the README links to', () => {
  assert.equal(anchorOf('Measured on a real kubelet'), 'measured-on-a-real-kubelet');
  assert.equal(anchorOf('The image'), 'the-image');
  assert.equal(anchorOf('Harms 1–10'), 'harms-110');
});
