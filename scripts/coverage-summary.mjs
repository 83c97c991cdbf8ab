// A node:test reporter that prints only the coverage, one line per folder and the total, for
// `npm run test:coverage` (the spec reporter beside it prints the per-file table; lcov has the lines).
// Reporter contract: https://nodejs.org/api/test.html#custom-reporters (an async generator over events).
import { dirname, relative } from 'node:path';

const pct = (covered, total) => (total === 0 ? '100.0' : ((100 * covered) / total).toFixed(1));

function row(name, c) {
  const cells = [pct(c.lines[0], c.lines[1]), pct(c.branches[0], c.branches[1]), pct(c.functions[0], c.functions[1])];
  return `${name.padEnd(36)} ${cells.map((x) => x.padStart(7)).join(' ')}   ${String(c.lines[1]).padStart(6)}\n`;
}

export default async function* coverageSummary(source) {
  for await (const event of source) {
    if (event.type !== 'test:coverage') continue;
    const { files, totals, workingDirectory } = event.data.summary;
    const folders = new Map();
    for (const f of files) {
      const folder = relative(workingDirectory, dirname(f.path)) || '.';
      const c = folders.get(folder) ?? { lines: [0, 0], branches: [0, 0], functions: [0, 0] };
      c.lines[0] += f.coveredLineCount;
      c.lines[1] += f.totalLineCount;
      c.branches[0] += f.coveredBranchCount;
      c.branches[1] += f.totalBranchCount;
      c.functions[0] += f.coveredFunctionCount;
      c.functions[1] += f.totalFunctionCount;
      folders.set(folder, c);
    }
    yield `coverage by folder (${files.length} files)\n${'folder'.padEnd(36)} ${['lines %', 'branch %', 'funcs %'].map((x) => x.padStart(7)).join(' ')}   lines\n`;
    for (const [folder, c] of [...folders].sort(([a], [b]) => a.localeCompare(b))) yield row(folder, c);
    yield row('all', {
      lines: [totals.coveredLineCount, totals.totalLineCount],
      branches: [totals.coveredBranchCount, totals.totalBranchCount],
      functions: [totals.coveredFunctionCount, totals.totalFunctionCount],
    });
  }
}
