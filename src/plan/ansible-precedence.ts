// Ansible's variable precedence for one host, as layers lowest first: the order in which
// ansible-core's VariableManager combines inventory variables (lib/ansible/vars/manager.py,
// get_vars with the default VARIABLE_PRECEDENCE: all_inventory, groups_inventory,
// all_plugins_inventory, all_plugins_play, groups_plugins_inventory, groups_plugins_play; then the
// host's own vars, inventory host_vars/, playbook host_vars/). The documented list
// (docs.ansible.com, "Understanding variable precedence") reads the same: inventory file group vars
// < inventory group_vars/all < playbook group_vars/all < inventory group_vars/* < playbook
// group_vars/* < inventory file host vars < inventory host_vars/* < playbook host_vars/*. Within one
// level groups are combined by (depth, ansible_group_priority, name), so all < parent < child
// ("How variables are merged", the inventory guide). Pure.
import type { RawGroup, RawInventory, Vars } from './raw-inventory.ts';

/** One parsed group_vars/ or host_vars/ file. */
export interface VarsFile {
  source: string;
  vars: Vars;
}

/** The group_vars/ and host_vars/ of one directory: files by group or host name, each list in load order. */
export interface VarsDir {
  dir: string;
  groups: ReadonlyMap<string, readonly VarsFile[]>;
  hosts: ReadonlyMap<string, readonly VarsFile[]>;
}

/** Where variables come from besides the inventory files themselves. */
export interface VarDirs {
  /** Beside the inventory (the directory itself for a directory inventory). */
  inventory?: VarsDir;
  /** The playbook's directory (kubeward plan --playbook-dir). */
  playbook?: VarsDir;
  /** kubeward's --vars files: above every group's variables, below the host's own. */
  extra?: readonly Vars[];
}

export interface Layer {
  vars: Vars;
  /** For messages: the file, or "inventory group g" / "inventory host h". */
  source: string;
  /** Set for all, the cluster groups and --vars: what kubeward reads once for the whole cluster. */
  clusterWide: boolean;
}

/**
 * Each group's depth as Ansible counts it: all is 0, a group is one deeper than its deepest parent,
 * and a group no other group names as a child is a child of all. A cycle stops at the group seen twice.
 */
export function groupDepths(groups: readonly RawGroup[]): Map<string, number> {
  const parents = new Map<string, string[]>();
  for (const g of groups) for (const c of g.children) parents.set(c, [...(parents.get(c) ?? []), g.name]);
  const depths = new Map<string, number>([['all', 0]]);
  const depthOf = (name: string, seen: Set<string>): number => {
    const known = depths.get(name);
    if (known !== undefined) return known;
    if (seen.has(name)) return 1;
    seen.add(name);
    const ps = (parents.get(name) ?? []).filter((p) => p !== name);
    const d = 1 + Math.max(0, ...ps.map((p) => depthOf(p, seen)));
    depths.set(name, d);
    return d;
  };
  for (const g of groups) depthOf(g.name, new Set());
  return depths;
}

/** ansible_group_priority from the inventory file's group vars (Ansible reads it there); default 1. */
function priorityOf(raw: RawInventory, group: string): number {
  const v = raw.groups.find((g) => g.name === group)?.vars.ansible_group_priority;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : 1;
  return Number.isFinite(n) ? n : 1;
}

/** The groups in the order Ansible combines their variables: by depth, then priority, then name. */
export function sortGroups(raw: RawInventory, names: Iterable<string>): string[] {
  const depths = groupDepths(raw.groups);
  return [...new Set(names)]
    .filter((n) => n !== 'all')
    .sort((a, b) => (depths.get(a) ?? 1) - (depths.get(b) ?? 1) || priorityOf(raw, a) - priorityOf(raw, b) || (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The layers of one host (host undefined: the cluster-wide view, groups = the cluster groups),
 * lowest precedence first. groups: every group the host is in, directly or through children;
 * clusterGroups: the groups whose variables kubeward reads cluster-wide (k8s_cluster and its
 * ancestors, under any spelling).
 */
export function hostLayers(raw: RawInventory, host: string | undefined, groups: Iterable<string>, clusterGroups: ReadonlySet<string>, dirs: VarDirs): Layer[] {
  const sorted = sortGroups(raw, groups);
  const wide = (g: string) => g === 'all' || clusterGroups.has(g);
  const layers: Layer[] = [];
  const inventoryGroup = (g: string) => {
    for (const rg of raw.groups.filter((x) => x.name === g)) layers.push({ vars: rg.vars, source: `inventory group ${g}`, clusterWide: wide(g) });
  };
  const files = (dir: VarsDir | undefined, kind: 'groups' | 'hosts', name: string, clusterWide: boolean) => {
    for (const f of dir?.[kind].get(name) ?? []) layers.push({ vars: f.vars, source: f.source, clusterWide });
  };
  inventoryGroup('all');
  layers.push({ vars: raw.vars, source: 'inventory vars', clusterWide: true });
  for (const g of sorted) inventoryGroup(g);
  files(dirs.inventory, 'groups', 'all', true);
  files(dirs.playbook, 'groups', 'all', true);
  for (const g of sorted) files(dirs.inventory, 'groups', g, wide(g));
  for (const g of sorted) files(dirs.playbook, 'groups', g, wide(g));
  for (const [i, vars] of (dirs.extra ?? []).entries()) layers.push({ vars, source: `--vars file ${i + 1}`, clusterWide: true });
  if (host === undefined) return layers;
  for (const rh of raw.hosts.filter((h) => h.name === host)) layers.push({ vars: rh.vars, source: `inventory host ${host}`, clusterWide: false });
  files(dirs.inventory, 'hosts', host, false);
  files(dirs.playbook, 'hosts', host, false);
  return layers;
}
