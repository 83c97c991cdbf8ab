// Reads an Ansible INI inventory as kubespray's inventory/sample/inventory.ini writes it:
// `[group]` host lines with key=value variables, `[group:children]` and `[group:vars]` sections.
import { addRawHost, emptyRawInventory, groupNamed, type RawInventory, type Vars } from './raw-inventory.ts';

type Section = { group: string; kind: 'hosts' | 'children' | 'vars' };

export function readIniInventory(text: string): RawInventory {
  const raw = emptyRawInventory();
  let section: Section = { group: 'ungrouped', kind: 'hosts' };
  const seenInSection = new Map<string, number>();
  text.split(/\r?\n/).forEach((rawLine, i) => {
    const lineNo = i + 1;
    const line = stripComment(rawLine).trim();
    if (line === '') return;
    const header = /^\[([^\]:]+)(?::(children|vars))?\]$/.exec(line);
    if (header) {
      section = { group: header[1]!.trim(), kind: (header[2] as Section['kind'] | undefined) ?? 'hosts' };
      groupNamed(raw, section.group, `line ${lineNo}`);
      seenInSection.clear();
      return;
    }
    if (line.startsWith('[')) {
      raw.problems.push({
        field: 'section',
        message: `"${line}" is not a section header like [kube_node], [k8s_cluster:children] or [all:vars]`,
        where: `line ${lineNo}`,
      });
      return;
    }
    const group = groupNamed(raw, section.group, `line ${lineNo}`);
    if (section.kind === 'vars') {
      const eq = line.indexOf('=');
      if (eq <= 0) raw.problems.push({ group: section.group, field: line, message: 'expected key=value', where: `line ${lineNo}` });
      else group.vars[line.slice(0, eq).trim()] = parseValue(line.slice(eq + 1).trim());
      return;
    }
    const [name, ...rest] = splitWords(line);
    if (name === undefined) return;
    if (section.kind === 'children') {
      if (!group.children.includes(name)) group.children.push(name);
      return;
    }
    if (/\[[^\]]*:[^\]]*\]/.test(name)) {
      raw.problems.push({ host: name, field: 'name', message: 'host ranges like node[01:03] are not supported; list each host', where: `line ${lineNo}` });
      return;
    }
    const earlierLine = seenInSection.get(name);
    if (earlierLine !== undefined) {
      raw.problems.push({
        host: name,
        field: 'name',
        message: `duplicate host: listed twice in [${section.group}] (line ${earlierLine} and line ${lineNo}); keep one`,
        where: `line ${lineNo}`,
      });
      return;
    }
    seenInSection.set(name, lineNo);
    if (!group.hosts.includes(name)) group.hosts.push(name);
    addRawHost(raw, { name, vars: parseAssignments(rest.join(' '), raw, lineNo, name), where: `line ${lineNo}` });
  });
  return raw;
}

/** Ansible INI comments start with # or ; at the start of a line, or after a space later on. */
function stripComment(line: string): string {
  if (/^\s*[#;]/.test(line)) return '';
  let quote: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if ((c === '#' || c === ';') && (i === 0 || /\s/.test(line[i - 1]!))) return line.slice(0, i);
  }
  return line;
}

/** Splits on whitespace outside quotes; quotes are removed. */
function splitWords(text: string): string[] {
  const words: string[] = [];
  const re = /(?:[^\s"']+|"[^"]*"|'[^']*')+/g;
  for (const m of text.matchAll(re)) words.push(m[0]);
  return words;
}

function unquote(v: string): string {
  return v.replace(/"([^"]*)"|'([^']*)'/g, (_m, a: string | undefined, b: string | undefined) => a ?? b ?? '');
}

/** Ansible reads INI values as literals: lists and mappings in brackets, quoted strings, words. */
function parseValue(text: string): unknown {
  if (/^[[{]/.test(text)) {
    try {
      return JSON.parse(text.replace(/'/g, '"')) as unknown;
    } catch {
      return text;
    }
  }
  return unquote(text);
}

function parseAssignments(text: string, raw: RawInventory, lineNo: number, host: string | undefined): Vars {
  const vars: Vars = {};
  for (const word of splitWords(text)) {
    const eq = word.indexOf('=');
    if (eq <= 0) {
      raw.problems.push({ host, field: word, message: 'expected key=value', where: `line ${lineNo}` });
      continue;
    }
    vars[word.slice(0, eq).trim()] = parseValue(word.slice(eq + 1));
  }
  return vars;
}
