// What the three inventory readers (kubeward YAML, Ansible YAML, Ansible INI) hand to the
// validator: hosts with their raw variables, group memberships, and problems found while reading.

export type Vars = Record<string, unknown>;

export interface RawHost {
  name: string;
  vars: Vars;
  /** Where it was defined, for messages ("line 4", "hosts.cp1"). */
  where: string;
}

export interface RawGroup {
  name: string;
  hosts: string[];
  /** Child groups (Ansible `[g:children]` / `children:`). */
  children: string[];
  vars: Vars;
  where: string;
}

export interface RawInventory {
  hosts: RawHost[];
  groups: RawGroup[];
  /** Cluster-wide variables: `all` vars, `k8s_cluster` vars, a kubeward inventory's `vars:`. */
  vars: Vars;
  problems: InventoryProblem[];
}

/** One thing wrong with an inventory, naming the host (when there is one) and the field. */
export interface InventoryProblem {
  host?: string;
  group?: string;
  field: string;
  message: string;
  where?: string;
}

/** One line, whatever the inventory held: host, group and field names are JSON-escaped when needed. */
export function formatProblem(p: InventoryProblem): string {
  const subject = p.host !== undefined ? `host ${JSON.stringify(p.host)}: ` : p.group !== undefined ? `group ${JSON.stringify(p.group)}: ` : '';
  const where = p.where !== undefined ? ` (${p.where})` : '';
  return oneLine(`${subject}${plainOrQuoted(p.field)}: ${p.message}${where}`);
}

function plainOrQuoted(s: string): string {
  return /^[\w.-]+$/.test(s) ? s : JSON.stringify(s);
}

/** Control characters (line breaks included) shown as escapes, so a message is always one line. */
export function oneLine(s: string): string {
  return s.replace(/\p{Cc}/gu, (c) => JSON.stringify(c).slice(1, -1));
}

export function emptyRawInventory(): RawInventory {
  return { hosts: [], groups: [], vars: {}, problems: [] };
}

/** Adds a host, or merges its vars into an earlier definition; conflicting values are a problem. */
export function addRawHost(raw: RawInventory, host: RawHost): void {
  const earlier = raw.hosts.find((h) => h.name === host.name);
  if (!earlier) {
    raw.hosts.push(host);
    return;
  }
  for (const [key, value] of Object.entries(host.vars)) {
    const before = earlier.vars[key];
    if (before !== undefined && String(before) !== String(value)) {
      raw.problems.push({
        host: host.name,
        field: key,
        // Values are shown only for the address variables: an unknown key may hold a password.
        message: ['ip', 'access_ip', 'ansible_host', 'ip6', 'access_ip6'].includes(key)
          ? `duplicate host: defined as ${JSON.stringify(String(before))} at ${earlier.where} and as ${JSON.stringify(String(value))} at ${host.where}; keep one definition`
          : `duplicate host: two different values at ${earlier.where} and ${host.where}; keep one definition`,
      });
    } else {
      earlier.vars[key] = value;
    }
  }
}

export function groupNamed(raw: RawInventory, name: string, where: string): RawGroup {
  let g = raw.groups.find((x) => x.name === name);
  if (!g) {
    g = { name, hosts: [], children: [], vars: {}, where };
    raw.groups.push(g);
  }
  return g;
}
