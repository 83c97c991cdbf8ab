// No module-level mutable state in src/ (CONTRIBUTING.md, "House rules"): a top-level `let` or
// `var`, or a top-level Map, Set, WeakMap, WeakSet or array that the file writes to, fails here.
// Constants (an `as const` table, a Set of codes nothing writes) pass. The check reads each file's
// syntax tree, so a write through another name (an alias, a function handed the collection) is
// not seen: it catches the plain cases a review would otherwise have to.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const repo = join(import.meta.dirname, '..', '..');

const COLLECTIONS = new Set(['Map', 'Set', 'WeakMap', 'WeakSet', 'Array']);
const WRITES = new Set(['set', 'add', 'delete', 'clear', 'push', 'pop', 'shift', 'unshift', 'splice', 'sort', 'reverse', 'fill', 'copyWithin']);

/** The module-level state of one file's source, as "name: why" lines. */
export function moduleState(code: string, file = 'x.ts'): string[] {
  const sf = ts.createSourceFile(file, code, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const collections = new Set<string>();
  for (const st of sf.statements) {
    if (!ts.isVariableStatement(st)) continue;
    const list = st.declarationList;
    const isConst = (list.flags & ts.NodeFlags.Const) !== 0;
    for (const d of list.declarations) {
      if (!ts.isIdentifier(d.name)) continue;
      if (!isConst) found.push(`${d.name.text}: a module-level ${list.flags & ts.NodeFlags.Let ? 'let' : 'var'}`);
      else if (d.initializer && isCollection(d.initializer)) collections.add(d.name.text);
    }
  }
  const written = new Set<string>();
  const visit = (n: ts.Node): void => {
    // name.set(...), name.push(...), ...
    if (ts.isCallExpression(n) && ts.isPropertyAccessExpression(n.expression) && ts.isIdentifier(n.expression.expression)) {
      if (collections.has(n.expression.expression.text) && WRITES.has(n.expression.name.text)) written.add(n.expression.expression.text);
    }
    // name[i] = ..., name.length = ...
    if (ts.isBinaryExpression(n) && n.operatorToken.kind >= ts.SyntaxKind.FirstAssignment && n.operatorToken.kind <= ts.SyntaxKind.LastAssignment) {
      const target = n.left;
      if ((ts.isElementAccessExpression(target) || ts.isPropertyAccessExpression(target)) && ts.isIdentifier(target.expression)) {
        if (collections.has(target.expression.text)) written.add(target.expression.text);
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  for (const name of written) found.push(`${name}: a module-level collection the file writes to`);
  return found;
}

function isCollection(e: ts.Expression): boolean {
  while (ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isParenthesizedExpression(e)) {
    if (ts.isAsExpression(e) && ts.isTypeReferenceNode(e.type) && e.type.typeName.getText() === 'const') return false;
    e = e.expression;
  }
  if (ts.isArrayLiteralExpression(e)) return true;
  return ts.isNewExpression(e) && ts.isIdentifier(e.expression) && COLLECTIONS.has(e.expression.text);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts'))
    .map((e) => join(e.parentPath, e.name));
}

test('the check names a module-level let, var and written collection, and passes constants', () => {
  assert.deepEqual(moduleState('let n = 0;\nexport function f() { n++; }\n'), ['n: a module-level let']);
  assert.deepEqual(moduleState('export var v = 1;\n'), ['v: a module-level var']);
  assert.deepEqual(moduleState('const seen = new Set<string>();\nexport const f = (s: string) => seen.add(s);\n'), [
    'seen: a module-level collection the file writes to',
  ]);
  assert.deepEqual(moduleState('const byKey = new Map();\nexport function f(k: string) { byKey.set(k, 1); }\n'), [
    'byKey: a module-level collection the file writes to',
  ]);
  assert.deepEqual(moduleState('const list: number[] = [];\nexport function f() { list[0] = 1; }\n'), ['list: a module-level collection the file writes to']);
  assert.deepEqual(moduleState('const kept = [] as string[];\nexport const f = () => kept.push("x");\n'), [
    'kept: a module-level collection the file writes to',
  ]);
  // Constants and state inside functions and classes are fine.
  assert.deepEqual(moduleState("const CODES = new Set(['EMFILE']);\nexport const f = (c: string) => CODES.has(c);\n"), []);
  assert.deepEqual(moduleState("export const MODES = ['a', 'b'] as const;\n"), []);
  assert.deepEqual(moduleState('export function f() { let n = 0; const s = new Set(); s.add(n++); return s; }\n'), []);
  assert.deepEqual(moduleState('export class C { #m = new Map(); put(k: string) { this.#m.set(k, 1); } }\n'), []);
});

test('src/ keeps no module-level mutable state', () => {
  const found: string[] = [];
  for (const file of sourceFiles(join(repo, 'src'))) {
    const rel = relative(repo, file);
    for (const line of moduleState(readFileSync(file, 'utf8'), file)) found.push(`${rel} ${line}`);
  }
  assert.deepEqual(found, [], 'move it into an object its owner makes and hands down (CONTRIBUTING.md, "House rules")');
});
