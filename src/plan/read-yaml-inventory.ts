// Reads a YAML inventory in either of two shapes: kubeward's own (`hosts:`, `groups:`, `vars:`) or
// Ansible's YAML inventory as kubespray writes it (`all: {hosts, children, vars}`). Duplicate keys,
// which YAML loaders usually resolve silently, are reported with their line.
import { LineCounter, isMap, isScalar, parseDocument, type Node as YamlNode } from 'yaml';
import { addRawHost, emptyRawInventory, groupNamed, type RawInventory, type Vars } from './raw-inventory.ts';

interface Duplicate {
  path: string[];
  key: string;
  line: number;
}

/** Parses YAML text; YAML syntax errors become one problem, never a throw. */
export function readYamlInventory(text: string, source: string): RawInventory {
  const raw = emptyRawInventory();
  const lines = new LineCounter();
  const doc = parseDocument(text, { uniqueKeys: false, lineCounter: lines, prettyErrors: false });
  if (doc.errors.length > 0) {
    const err = doc.errors[0]!;
    const line = lines.linePos(err.pos[0]).line;
    raw.problems.push({ field: 'yaml', message: `${source} is not valid YAML: ${err.message.split('\n')[0]}`, where: `line ${line}` });
    return raw;
  }
  const dups: Duplicate[] = [];
  findDuplicates(doc.contents, [], lines, dups);
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    // An unresolved alias or an alias bomb: the yaml library reports these only when converting.
    raw.problems.push({ field: 'yaml', message: `${source} is not valid YAML: ${(err as Error).message.split('\n')[0]}` });
    return raw;
  }
  if (data === null || data === undefined) {
    raw.problems.push({ field: 'hosts', message: `${source} is empty; list the cluster's hosts` });
    return raw;
  }
  if (!isRecord(data)) {
    raw.problems.push({ field: 'yaml', message: `${source}: the top level must be a mapping (hosts/groups/vars, or all:)` });
    return raw;
  }
  for (const d of dups) raw.problems.push(describeDuplicate(d));
  if ('hosts' in data || 'groups' in data || 'vars' in data) readKubewardShape(data, raw);
  else readAnsibleGroups(data, raw, []);
  return raw;
}

function findDuplicates(node: unknown, path: string[], lines: LineCounter, out: Duplicate[]): void {
  if (!isMap(node)) return;
  const seen = new Set<string>();
  for (const pair of node.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    if (seen.has(key)) {
      const offset = (pair.key as YamlNode | null)?.range?.[0] ?? 0;
      out.push({ path, key, line: lines.linePos(offset).line });
    }
    seen.add(key);
    findDuplicates(pair.value, [...path, key], lines, out);
  }
}

function describeDuplicate(d: Duplicate): RawInventory['problems'][number] {
  if (d.path[d.path.length - 1] === 'hosts') {
    return { host: d.key, field: [...d.path, d.key].join('.'), message: 'duplicate host: defined twice in the same list; keep one', where: `line ${d.line}` };
  }
  return { field: [...d.path, d.key].join('.'), message: 'duplicate key; YAML keeps only the last one, so remove the other', where: `line ${d.line}` };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function asVars(v: unknown): Vars {
  return isRecord(v) ? { ...v } : {};
}

function readKubewardShape(data: Record<string, unknown>, raw: RawInventory): void {
  for (const key of Object.keys(data)) {
    if (!['hosts', 'groups', 'vars'].includes(key)) {
      raw.problems.push({ field: key, message: 'unknown top-level key; a kubeward inventory has hosts, groups and vars' });
    }
  }
  if (data.hosts !== undefined && !isRecord(data.hosts)) {
    raw.problems.push({ field: 'hosts', message: 'must map each host name to its variables (ip, access_ip)' });
  }
  for (const [name, vars] of Object.entries(asVars(data.hosts))) {
    if (vars !== null && !isRecord(vars)) {
      raw.problems.push({ host: name, field: `hosts.${name}`, message: 'must be a mapping of variables, like {ip: 10.0.0.11}' });
      continue;
    }
    addRawHost(raw, { name, vars: asVars(vars), where: `hosts.${name}` });
  }
  if (data.groups !== undefined && !isRecord(data.groups)) {
    raw.problems.push({ field: 'groups', message: 'must map each group to a list of host names' });
  }
  for (const [name, members] of Object.entries(asVars(data.groups))) {
    const g = groupNamed(raw, name, `groups.${name}`);
    if (!Array.isArray(members) || members.some((m) => typeof m !== 'string')) {
      raw.problems.push({ group: name, field: `groups.${name}`, message: 'must be a list of host names, like [cp1, cp2, cp3]' });
      continue;
    }
    g.hosts.push(...(members as string[]));
  }
  if (data.vars !== undefined && !isRecord(data.vars)) raw.problems.push({ field: 'vars', message: 'must be a mapping of variable names to values' });
  Object.assign(raw.vars, asVars(data.vars));
}

/** Ansible YAML: every top-level key is a group (normally just `all`), recursively through children. */
function readAnsibleGroups(groups: Record<string, unknown>, raw: RawInventory, path: string[]): void {
  for (const [name, body] of Object.entries(groups)) {
    const where = [...path, name].join('.');
    const g = groupNamed(raw, name, where);
    if (body === null || body === undefined) continue;
    if (!isRecord(body)) {
      raw.problems.push({ group: name, field: where, message: 'must be a mapping with hosts, children or vars' });
      continue;
    }
    for (const key of Object.keys(body)) {
      if (!['hosts', 'children', 'vars'].includes(key))
        raw.problems.push({ group: name, field: `${where}.${key}`, message: 'unknown key; a group has hosts, children and vars' });
    }
    for (const [host, vars] of Object.entries(asVars(body.hosts))) {
      if (!g.hosts.includes(host)) g.hosts.push(host);
      addRawHost(raw, { name: host, vars: asVars(vars), where: `${where}.hosts.${host}` });
    }
    for (const child of Object.keys(asVars(body.children))) if (!g.children.includes(child)) g.children.push(child);
    Object.assign(g.vars, asVars(body.vars));
    readAnsibleGroups(asVars(body.children), raw, [...path, name, 'children']);
  }
}
