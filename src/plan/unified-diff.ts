// A unified diff (the `diff -u` format) of two texts, for `plan render --check`. Line-based LCS:
// rendered files are a few hundred lines at most, so the quadratic table stays small.

type Op = { kind: ' ' | '-' | '+'; line: string };

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function diffOps(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  // lcs[i][j] = length of the LCS of a[i..] and b[j..]
  const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      ops.push({ kind: ' ', line: a[i++]! });
      j++;
    } else if (i < n && (j === m || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
      // Deletions before insertions, as diff -u prints a replaced block.
      ops.push({ kind: '-', line: a[i++]! });
    } else {
      ops.push({ kind: '+', line: b[j++]! });
    }
  }
  return ops;
}

/** "" when the texts are equal; otherwise ---/+++ headers and @@ hunks with `context` lines around changes. */
export function unifiedDiff(oldText: string, newText: string, oldLabel: string, newLabel: string, context = 3): string {
  if (oldText === newText) return '';
  const ops = diffOps(splitLines(oldText), splitLines(newText));
  const changed = ops.map((o, idx) => (o.kind !== ' ' ? idx : -1)).filter((idx) => idx >= 0);
  const out = [`--- ${oldLabel}`, `+++ ${newLabel}`];
  if (changed.length === 0) {
    out.push('(the texts differ only in the newline at the end)');
    return out.join('\n') + '\n';
  }
  let k = 0;
  while (k < changed.length) {
    const start = Math.max(0, changed[k]! - context);
    let end = Math.min(ops.length, changed[k]! + context + 1);
    while (k + 1 < changed.length && changed[k + 1]! - context <= end) {
      k++;
      end = Math.min(ops.length, changed[k]! + context + 1);
    }
    k++;
    const before = ops.slice(0, start);
    const hunk = ops.slice(start, end);
    const oldStart = before.filter((o) => o.kind !== '+').length;
    const newStart = before.filter((o) => o.kind !== '-').length;
    const oldLen = hunk.filter((o) => o.kind !== '+').length;
    const newLen = hunk.filter((o) => o.kind !== '-').length;
    out.push(`@@ -${range(oldStart, oldLen)} +${range(newStart, newLen)} @@`);
    for (const o of hunk) out.push(o.kind + o.line);
  }
  return out.join('\n') + '\n';
}

/** diff -u numbering: 1-based start, and an empty range is written start,0 at the line before. */
function range(start: number, len: number): string {
  if (len === 0) return `${start},0`;
  return len === 1 ? `${start + 1}` : `${start + 1},${len}`;
}
