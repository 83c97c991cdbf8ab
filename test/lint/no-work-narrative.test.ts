// The code, its comments, docs and scripts speak of kubeward, its behaviour and its reasons, never of
// how the work on it was organised: no work sessions, no "the lead", no numbers of this project's
// own issues, no run letters, no clock times of benchmark runs. A figure names the commit and the
// machine it was measured on instead. Upstream references (kubernetes/kubernetes#124502,
// OCPBUGS-1234, k0s #6202) are the one exception, and UPSTREAM below is where they are allowed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
const SCANNED = ['src', 'test', 'testkit', 'bench', 'scripts', 'docs', 'deploy', 'bin', 'native', 'README.md', 'CONTRIBUTING.md', 'package.json'];
/** Upstream text kept verbatim (kubespray's sample inventory, rendered golden configs) and measured data. */
const SKIPPED = new Set(['test/fixtures', 'test/golden', 'bench/results', 'test/lint/no-work-narrative.test.ts']);

/** What narrates the work. Each rule has a name for the failure message. */
export const RULES: readonly { name: string; re: RegExp }[] = [
  { name: 'a work session', re: /\bsessions? ?\d+\b|\b(?:this|last|next|that|earlier|later|other|another) sessions?\b(?! (?:ticket|cache|resum))/i },
  { name: 'the lead', re: /\bthe lead\b(?! to\b)|\blead's\b|\(lead\)/i },
  { name: "this project's issue number", re: /\bissues? #?\d+|(?:^|[\s([])#\d+\b/i },
  { name: 'a clock time of a run', re: /\b\d{1,2}:\d{2}(?::\d{2})?(?:\s*[-–]\s*\d{1,2}:\d{2}(?::\d{2})?)?\s*UTC\b/ },
  { name: 'a run letter', re: /\bruns? [A-D]\b(?!['\w])|\brun [b-d]\b(?!['\w-])|\brun a(?= ?[|:),])/ },
  {
    name: 'how the work was organised',
    re: /\bthis (?:branch|session)\b|\bround of work\b|\bbefore this (?:change|session|branch|work)\b|\bround (?:one|two|three)\b|\bpreviously\b/i,
  },
];

/**
 * Upstream references, removed from a line before the rules run. Only references to other projects'
 * trackers belong here: owner/repo#N, a named project's #N, and Red Hat's OCPBUGS keys.
 */
export const UPSTREAM: readonly RegExp[] = [
  /\b[\w.-]+\/[\w.-]+ ?#\d+\b/g,
  /\b(?:kubernetes|kubespray|k0s|k3s|rke2|talos|okd|openshift|libuv|node|nodejs|etcd|containerd|haproxy|nginx|undici|wrk|cilium|calico|kube-vip|keepalived)(?: issue| PR)? ?#\d+\b/gi,
  /\bOCPBUGS-\d+\b/g,
];

/** The narrative found in a text, as `line: rule: excerpt`. */
export function narrativeIn(text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = UPSTREAM.reduce((l, re) => l.replace(re, ''), raw);
    for (const rule of RULES) {
      const m = rule.re.exec(line);
      if (m) found.push(`${i + 1}: ${rule.name}: "${line.slice(Math.max(0, m.index - 30), m.index + m[0].length + 30).trim()}"`);
    }
  });
  return found;
}

function files(path: string): string[] {
  const rel = relative(ROOT, path);
  if (SKIPPED.has(rel) || /(^|\/)(node_modules|dist|build|coverage)$/.test(rel)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path).flatMap((name) => files(join(path, name)));
}

test('no code, comment, doc or script narrates how the work was organised', () => {
  const found: string[] = [];
  for (const file of SCANNED.flatMap((p) => files(join(ROOT, p)))) {
    const text = readFileSync(file, 'utf8');
    if (text.includes('\0')) continue;
    for (const hit of narrativeIn(text)) found.push(`${relative(ROOT, file)}:${hit}`);
  }
  assert.deepEqual(found, []);
});

test('each rule catches its narrative, and upstream references pass', () => {
  const caught = [
    'measured in session 6 on main',
    'the branch of this session',
    'as the lead decided',
    "the lead's quiet bench",
    'what issue 17 asks for',
    'fixed in #42',
    'run at 16:22 UTC',
    'between 13:20-13:23 UTC',
    '| figure | run a | run b |',
    'run b was over the target',
    'a figure of this branch',
    'before this change it leaked',
  ];
  for (const text of caught) assert.ok(narrativeIn(text).length > 0, text);
  const passed = [
    'kubernetes/kubernetes#124502 keeps the watch open',
    'OCPBUGS-1234 and k0s #6202 and okd #932',
    'libuv #3696 accepts one connection per wake-up',
    'a later cycle resumes the TLS session',
    'one Keystone session per cluster',
    'links that lead to headings',
    'a table led by the leader',
    'run a mode from the sources',
    'the next round reads again',
    '`${name}#2` is a second server of the same name',
  ];
  for (const text of passed) assert.deepEqual(narrativeIn(text), [], text);
});
