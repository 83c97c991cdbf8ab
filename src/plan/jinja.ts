// The small part of Jinja that kubespray's own defaults and sample group_vars use for the values
// kubeward plan reads: variable references (with .attr and ['key']), string and number literals,
// "~" and "+" concatenation, `x if c else y`, comparisons, and/or/not, `is (not) defined`, and the
// filters default/d, ipwrap (ansible.utils.ipwrap), string, lower, upper, trim, int and bool.
// Anything else, and every variable only a run on the host knows (facts, hostvars, groups,
// lookups), is an error naming the variable, so the caller can say what to write instead.

export type Lookup = (name: string) => { found: true; value: unknown } | { found: false };

export class JinjaError extends Error {
  /** The variable or construct that could not be evaluated. */
  readonly subject: string;
  constructor(subject: string, message: string) {
    super(message);
    this.subject = subject;
  }
}

const UNDEFINED: unique symbol = Symbol('undefined');
interface Undefined {
  [UNDEFINED]: string;
}
type Value = unknown;

function undef(name: string): Undefined {
  return { [UNDEFINED]: name };
}
function isUndef(v: Value): v is Undefined {
  return typeof v === 'object' && v !== null && UNDEFINED in v;
}

/** Names that only exist while Ansible runs on a host; kubeward has no facts. */
function needsAnsible(name: string): string | undefined {
  if (name.startsWith('ansible_') && !['ansible_host', 'ansible_port', 'ansible_user'].includes(name))
    return `the Ansible fact ${name}, which only a run on the host knows`;
  if (['hostvars', 'groups', 'group_names', 'play_hosts', 'inventory_dir', 'playbook_dir', 'role_path', 'lookup', 'query', 'omit'].includes(name))
    return `${name}, which only exists while Ansible runs`;
  return undefined;
}

/** True when the text holds a template that needs evaluating. */
export function isTemplate(v: unknown): v is string {
  return typeof v === 'string' && (v.includes('{{') || v.includes('{%'));
}

/**
 * Renders a string template. A template that is exactly one "{{ expr }}" keeps the expression's
 * type (booleans, numbers, mappings), as Ansible's native conversion does for these values.
 */
export function renderTemplate(text: string, lookup: Lookup): Value {
  if (text.includes('{%'))
    throw new JinjaError(text.slice(text.indexOf('{%'), text.indexOf('{%') + 12), 'Jinja statements ({% if %}, {% for %}) are not evaluated by kubeward');
  const parts: Value[] = [];
  let i = 0;
  while (i < text.length) {
    const open = text.indexOf('{{', i);
    if (open < 0) {
      parts.push(text.slice(i));
      break;
    }
    if (open > i) parts.push(text.slice(i, open));
    const close = text.indexOf('}}', open + 2);
    if (close < 0) throw new JinjaError('{{', 'unterminated "{{"');
    parts.push(evaluate(text.slice(open + 2, close), lookup));
    i = close + 2;
  }
  for (const p of parts) if (isUndef(p)) throw new JinjaError(p[UNDEFINED], `${p[UNDEFINED]} is not defined`);
  const meaningful = parts.filter((p) => !(typeof p === 'string' && p.trim() === '' && parts.length > 1));
  if (meaningful.length === 1 && text.trim().startsWith('{{') && text.trim().endsWith('}}')) return meaningful[0];
  return parts.map(toText).join('');
}

function toText(v: Value): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return String(v);
  return JSON.stringify(v);
}

type Token = { t: 'name' | 'str' | 'num' | 'op'; v: string };

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  const re = /\s*(?:([A-Za-z_][A-Za-z0-9_]*)|'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|(\d+(?:\.\d+)?)|(==|!=|<=|>=|[|().,~+[\]<>-]))/gy;
  let m: RegExpExecArray | null;
  let pos = 0;
  while (pos < src.length) {
    if (/^\s*$/.test(src.slice(pos))) break;
    re.lastIndex = pos;
    m = re.exec(src);
    if (!m) throw new JinjaError(src.trim(), `cannot read ${JSON.stringify(src.slice(pos).trim().slice(0, 20))}`);
    pos = re.lastIndex;
    if (m[1] !== undefined) out.push({ t: 'name', v: m[1] });
    else if (m[2] !== undefined) out.push({ t: 'str', v: m[2].replace(/\\(.)/g, '$1') });
    else if (m[3] !== undefined) out.push({ t: 'str', v: m[3].replace(/\\(.)/g, '$1') });
    else if (m[4] !== undefined) out.push({ t: 'num', v: m[4] });
    else out.push({ t: 'op', v: m[5]! });
  }
  return out;
}

function evaluate(src: string, lookup: Lookup): Value {
  const p = new Parser(tokenize(src), lookup, src.trim());
  const v = p.expr();
  p.end();
  return v;
}

const FILTERS = 'default (d), ipwrap (ansible.utils.ipwrap), string, lower, upper, trim, int, bool';

class Parser {
  #pos = 0;
  readonly #toks: Token[];
  readonly #lookup: Lookup;
  readonly #src: string;
  constructor(toks: Token[], lookup: Lookup, src: string) {
    this.#toks = toks;
    this.#lookup = lookup;
    this.#src = src;
  }

  #peek(): Token | undefined {
    return this.#toks[this.#pos];
  }
  #is(v: string): boolean {
    const t = this.#peek();
    return t !== undefined && (t.t === 'op' || t.t === 'name') && t.v === v;
  }
  #take(v: string): void {
    if (!this.#is(v)) throw new JinjaError(this.#src, `expected "${v}" in {{ ${this.#src} }}`);
    this.#pos++;
  }
  end(): void {
    if (this.#pos < this.#toks.length) throw new JinjaError(this.#src, `cannot evaluate {{ ${this.#src} }} (unexpected "${this.#toks[this.#pos]!.v}")`);
  }

  expr(): Value {
    const value = this.#or();
    if (this.#is('if')) {
      this.#pos++;
      const cond = this.#or();
      let otherwise: Value = '';
      if (this.#is('else')) {
        this.#pos++;
        otherwise = this.expr();
      }
      return truthy(this.#strict(cond)) ? value : otherwise;
    }
    return value;
  }

  #or(): Value {
    let v = this.#and();
    while (this.#is('or')) {
      this.#pos++;
      const r = this.#and();
      v = truthy(this.#strict(v)) ? v : r;
    }
    return v;
  }
  #and(): Value {
    let v = this.#not();
    while (this.#is('and')) {
      this.#pos++;
      const r = this.#not();
      v = truthy(this.#strict(v)) ? r : v;
    }
    return v;
  }
  #not(): Value {
    if (this.#is('not')) {
      this.#pos++;
      return !truthy(this.#strict(this.#not()));
    }
    return this.#compare();
  }
  #compare(): Value {
    const left = this.#concat();
    if (this.#is('is')) {
      this.#pos++;
      const negate = this.#is('not');
      if (negate) this.#pos++;
      const test = this.#peek();
      if (test?.t !== 'name' || !['defined', 'undefined', 'none'].includes(test.v))
        throw new JinjaError(this.#src, `the test "is ${test?.v ?? ''}" is not evaluated by kubeward; tests: defined, undefined, none`);
      this.#pos++;
      const r = test.v === 'defined' ? !isUndef(left) : test.v === 'undefined' ? isUndef(left) : left === null;
      return negate ? !r : r;
    }
    for (const op of ['==', '!=']) {
      if (this.#is(op)) {
        this.#pos++;
        const right = this.#strict(this.#concat());
        const eq = String(this.#strict(left)) === String(right);
        return op === '==' ? eq : !eq;
      }
    }
    return left;
  }
  #concat(): Value {
    let v = this.#add();
    while (this.#is('~')) {
      this.#pos++;
      v = toText(this.#strict(v)) + toText(this.#strict(this.#add()));
    }
    return v;
  }
  #add(): Value {
    let v = this.#filtered();
    while (this.#is('+')) {
      this.#pos++;
      const r = this.#strict(this.#filtered());
      const l = this.#strict(v);
      v = typeof l === 'number' && typeof r === 'number' ? l + r : toText(l) + toText(r);
    }
    return v;
  }
  #filtered(): Value {
    let v = this.#primary();
    while (this.#is('|')) {
      this.#pos++;
      let name = this.#name();
      while (this.#is('.')) {
        this.#pos++;
        name += `.${this.#name()}`;
      }
      const args: Value[] = [];
      if (this.#is('(')) {
        this.#pos++;
        while (!this.#is(')')) {
          args.push(this.expr());
          if (this.#is(',')) this.#pos++;
          else break;
        }
        this.#take(')');
      }
      v = this.#apply(name, v, args);
    }
    return v;
  }
  #apply(name: string, v: Value, args: Value[]): Value {
    switch (name) {
      case 'default':
      case 'd': {
        const alsoFalsy = args[1] !== undefined && truthy(this.#strict(args[1]));
        return isUndef(v) || (alsoFalsy && !truthy(v)) ? (args[0] ?? '') : v;
      }
      case 'ipwrap':
      case 'ansible.utils.ipwrap':
      case 'ansible.netcommon.ipwrap': {
        const s = toText(this.#strict(v));
        return s.includes(':') && !s.startsWith('[') ? `[${s}]` : s;
      }
      case 'string':
        return toText(this.#strict(v));
      case 'lower':
        return toText(this.#strict(v)).toLowerCase();
      case 'upper':
        return toText(this.#strict(v)).toUpperCase();
      case 'trim':
        return toText(this.#strict(v)).trim();
      case 'int': {
        const n = Number.parseInt(toText(this.#strict(v)), 10);
        return Number.isNaN(n) ? 0 : n;
      }
      case 'bool': {
        const s = this.#strict(v);
        return typeof s === 'boolean' ? s : ['true', 'yes', 'on', '1'].includes(toText(s).toLowerCase());
      }
      default:
        throw new JinjaError(`| ${name}`, `the filter "${name}" is not evaluated by kubeward; filters: ${FILTERS}`);
    }
  }
  #name(): string {
    const t = this.#peek();
    if (t?.t !== 'name') throw new JinjaError(this.#src, `expected a name in {{ ${this.#src} }}`);
    this.#pos++;
    return t.v;
  }
  #primary(): Value {
    const t = this.#peek();
    if (t === undefined) throw new JinjaError(this.#src, `{{ ${this.#src} }} ends too early`);
    if (t.t === 'str') {
      this.#pos++;
      return t.v;
    }
    if (t.t === 'num') {
      this.#pos++;
      return Number(t.v);
    }
    if (t.t === 'op' && t.v === '(') {
      this.#pos++;
      const v = this.expr();
      this.#take(')');
      return v;
    }
    if (t.t === 'op' && t.v === '-') {
      this.#pos++;
      return -Number(this.#strict(this.#primary()));
    }
    if (t.t !== 'name') throw new JinjaError(this.#src, `unexpected "${t.v}" in {{ ${this.#src} }}`);
    this.#pos++;
    if (['true', 'True'].includes(t.v)) return true;
    if (['false', 'False'].includes(t.v)) return false;
    if (['none', 'None'].includes(t.v)) return null;
    const why = needsAnsible(t.v);
    if (why !== undefined) throw new JinjaError(t.v, `needs ${why}`);
    if (this.#is('(')) throw new JinjaError(`${t.v}()`, `calls a function (${t.v}), which kubeward does not evaluate`);
    const found = this.#lookup(t.v);
    let v: Value = found.found ? found.value : undef(t.v);
    let path = t.v;
    for (;;) {
      let key: string | undefined;
      if (this.#is('.')) {
        this.#pos++;
        key = this.#name();
      } else if (this.#is('[')) {
        this.#pos++;
        const k = this.expr();
        this.#take(']');
        key = toText(this.#strict(k));
      } else break;
      path += `.${key}`;
      if (isUndef(v)) continue;
      v = typeof v === 'object' && v !== null && Object.hasOwn(v, key) ? (v as Record<string, unknown>)[key] : undef(path);
    }
    return v;
  }
  #strict(v: Value): Value {
    if (isUndef(v)) throw new JinjaError(v[UNDEFINED], `${v[UNDEFINED]} is not defined`);
    return v;
  }
}

function truthy(v: Value): boolean {
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object' && v !== null) return Object.keys(v).length > 0;
  return Boolean(v);
}
