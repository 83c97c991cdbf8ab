// The precedence merge against Ansible's documented order: for random group trees and a variable
// set in random places, the value a host sees is the one the documented list makes win
// (docs.ansible.com, "Understanding variable precedence": inventory file group vars < inventory
// group_vars/all < playbook group_vars/all < inventory group_vars/* < playbook group_vars/* <
// inventory file host vars < inventory host_vars/* < playbook host_vars/*; within a level all <
// parent < child, then ansible_group_priority, then name), with kubeward's --vars between the
// group and host levels. The reference below ranks each place; it does not build layers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { hostLayers, type VarDirs, type VarsDir, type VarsFile } from './ansible-precedence.ts';
import { VarScope } from './var-scope.ts';
import { emptyRawInventory, type RawInventory } from './raw-inventory.ts';

const RUNS = Number(process.env.KUBEWARD_PROPERTY_RUNS ?? 300);
const GROUPS = ['g0', 'g1', 'g2', 'g3', 'g4'] as const;
type Place =
  | { kind: 'inventoryGroup' | 'inventoryGroupVars' | 'playbookGroupVars'; group: string }
  | { kind: 'extra' | 'inventoryHost' | 'inventoryHostVars' | 'playbookHostVars' };

/** The documented levels, lowest first (kubeward's --vars as "extra" between groups and hosts). */
const LEVEL = {
  inventoryGroup: 0,
  inventoryAll: 1,
  playbookAll: 2,
  inventoryGroupVars: 3,
  playbookGroupVars: 4,
  extra: 5,
  inventoryHost: 6,
  inventoryHostVars: 7,
  playbookHostVars: 8,
};

const world = fc.record({
  // parent[i]: the index of g_i's parent among the groups before it, or -1 for a child of all.
  parents: fc.tuple(...GROUPS.map((_, i) => (i === 0 ? fc.constant(-1) : fc.integer({ min: -1, max: i - 1 })))),
  priorities: fc.tuple(...GROUPS.map(() => fc.constantFrom(undefined, 1, 2, 5))),
  hostIn: fc.uniqueArray(fc.constantFrom(...GROUPS), { minLength: 1, maxLength: 3 }),
  places: fc.uniqueArray(
    fc.oneof(
      // Mostly group places: a host-level place outranks them all and would hide their order.
      {
        weight: 5,
        arbitrary: fc.record({ kind: fc.constantFrom('inventoryGroup', 'inventoryGroupVars', 'playbookGroupVars'), group: fc.constantFrom('all', ...GROUPS) }),
      },
      { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('extra', 'inventoryHost', 'inventoryHostVars', 'playbookHostVars') }) },
    ) as fc.Arbitrary<Place>,
    { minLength: 1, maxLength: 5, selector: (p) => JSON.stringify(p) },
  ),
  // The group names in a random order, so that name order and depth order differ.
  names: fc.shuffledSubarray([...GROUPS], { minLength: GROUPS.length, maxLength: GROUPS.length }),
});

test("the value a host sees is the one Ansible's documented precedence makes win", () => {
  fc.assert(
    fc.property(world, ({ parents, priorities, hostIn, places, names }) => {
      const nameOf = (i: number): string => names[i]!;
      const indexOf = (g: string): number => names.indexOf(g as (typeof GROUPS)[number]);
      const raw: RawInventory = emptyRawInventory();
      raw.hosts.push({ name: 'h', vars: {}, where: 'test' });
      raw.groups.push({ name: 'all', hosts: [], children: [], vars: {}, where: 'test' });
      for (const i of GROUPS.keys()) {
        const g = nameOf(i);
        const prio = priorities[i];
        raw.groups.push({
          name: g,
          hosts: hostIn.includes(g as (typeof GROUPS)[number]) ? ['h'] : [],
          children: [],
          vars: prio === undefined ? {} : { ansible_group_priority: prio },
          where: 'test',
        });
      }
      for (const [i, p] of parents.entries()) if (p >= 0) raw.groups.find((g) => g.name === nameOf(p))!.children.push(nameOf(i));
      // The groups the host is in: its own and every ancestor of them.
      const memberOf = new Set<string>();
      const up = (i: number): void => {
        memberOf.add(nameOf(i));
        if (parents[i]! >= 0) up(parents[i]!);
      };
      for (const g of hostIn) up(indexOf(g));

      const inv = { dir: 'inv', groups: new Map<string, VarsFile[]>(), hosts: new Map<string, VarsFile[]>() } satisfies VarsDir;
      const pb = { dir: 'pb', groups: new Map<string, VarsFile[]>(), hosts: new Map<string, VarsFile[]>() } satisfies VarsDir;
      const dirs: VarDirs = { inventory: inv, playbook: pb, extra: [] };
      for (const p of places) {
        const value = JSON.stringify(p);
        const file = { source: value, vars: { x: value } };
        if (p.kind === 'inventoryGroup') {
          raw.groups.find((g) => g.name === p.group)!.vars.x = value;
        } else if (p.kind === 'inventoryGroupVars') inv.groups.set(p.group, [file]);
        else if (p.kind === 'playbookGroupVars') pb.groups.set(p.group, [file]);
        else if (p.kind === 'extra') (dirs.extra as unknown[]).push({ x: value });
        else if (p.kind === 'inventoryHost') raw.hosts[0]!.vars.x = value;
        else if (p.kind === 'inventoryHostVars') inv.hosts.set('h', [file]);
        else pb.hosts.set('h', [file]);
      }
      const seen = new VarScope(hostLayers(raw, 'h', memberOf, new Set(), dirs).map((l) => l.vars)).raw('x');

      // The reference: depth as the longest path from all, the documented level, then depth, priority, name.
      const depth = (g: string): number => {
        if (g === 'all') return 0;
        const parent = parents[indexOf(g)]!;
        return 1 + (parent >= 0 ? depth(nameOf(parent)) : 0);
      };
      const prio = (g: string): number => (g === 'all' ? 0 : (priorities[indexOf(g)] ?? 1));
      const applies = (p: Place) => !('group' in p) || p.group === 'all' || memberOf.has(p.group);
      const rank = (p: Place): [number, number, number, string] => {
        if (!('group' in p)) return [LEVEL[p.kind], 0, 0, ''];
        const level =
          p.group === 'all' && p.kind !== 'inventoryGroup' ? (p.kind === 'inventoryGroupVars' ? LEVEL.inventoryAll : LEVEL.playbookAll) : LEVEL[p.kind];
        return [level, depth(p.group), prio(p.group), p.group];
      };
      const cmp = (a: [number, number, number, string], b: [number, number, number, string]) =>
        a[0] - b[0] || a[1] - b[1] || a[2] - b[2] || (a[3] < b[3] ? -1 : a[3] > b[3] ? 1 : 0);
      const winner = places
        .filter(applies)
        .sort((a, b) => cmp(rank(a), rank(b)))
        .pop();
      assert.equal(seen, winner === undefined ? undefined : JSON.stringify(winner));
    }),
    { numRuns: RUNS },
  );
});
