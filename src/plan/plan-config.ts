// kubeward plan's settings: the fields, flags, help text and checks of its subcommands (endpoints,
// render, sans) and the inventory flags they share with check-cert. The commands (src/cli/plan.ts,
// src/cli/check-cert.ts), --help and docs/plan.md all come from here.
// zod/mini, as the daemons: the build leaves classic zod out (src/config/fields.ts says why).
import * as z from 'zod/mini';
import { boolean } from '../config/fields.ts';
import type { ModeFlag, OneShotDeclaration } from '../config/mode-declaration.ts';
import { OUTPUT_FORMATS } from './format-endpoints.ts';
import { parseKubesprayVersion } from './kubespray-defaults.ts';

/** The defaults, once: the fields fill them in and --help shows them. */
export const DEFAULTS = { output: 'table', format: 'list' } as const;

export const inventoryFields = {
  inventory: z.optional(z.string({ error: 'expected the path of an inventory file' }).check(z.minLength(1))),
  vars: z.optional(z.array(z.string().check(z.minLength(1)))),
  playbookDir: z.optional(z.string({ error: 'expected a directory' }).check(z.minLength(1))),
  kubesprayVersion: z.optional(
    z.string().check(z.refine((v: string) => parseKubesprayVersion(v) !== undefined, { error: 'expected a kubespray release like v2.31, v2.30.0 or 2.28' })),
  ),
};

export const inventoryFlags: ModeFlag[] = [
  {
    key: 'inventory',
    value: '<file|dir>',
    help: 'kubeward YAML inventory, a kubespray hosts.yaml / inventory.ini, or a directory of inventory files; group_vars/ and host_vars/ beside it are read as Ansible reads them',
  },
  { key: 'playbookDir', value: '<dir>', help: "also read group_vars/ and host_vars/ of the playbook's directory (above the inventory's, as in Ansible)" },
  {
    key: 'kubesprayVersion',
    value: '<release>',
    help: 'follow this kubespray release',
    defaultText: 'v2.31, also right for v2.30; v2.29 keeps lb-apiserver.kubernetes.local, v2.28 and older also /etc/hosts',
  },
  {
    key: 'vars',
    value: '<file>',
    help: "a variables file applied above every group's variables and below the host's own (later wins)",
    repeatable: true,
  },
];

export const requireInventory = (c: { inventory?: string }) =>
  c.inventory ? undefined : '--inventory: required; give the inventory file (kubeward YAML, kubespray hosts.yaml or inventory.ini)';

export const PLAN_SUMMARY = 'HA endpoints, rendered load balancer configs and certificate SANs from an inventory';

export const PLAN_HELP = `
From a kubespray-style inventory, decides how every node reaches the apiserver and etcd (local load
balancer, external load balancer or the first control-plane node) and renders what that needs.

Examples:
  kubeward plan endpoints --inventory inventory/mycluster/hosts.yaml      # reads inventory/mycluster/group_vars/ and host_vars/ too
  kubeward plan endpoints --inventory inventory/mycluster/ --playbook-dir .
  kubeward plan render --inventory inventory.ini --out rendered/
  kubeward plan render --inventory inventory.ini --out rendered/ --check     # exit 1 and a diff when stale
  kubeward plan sans --inventory inventory.ini --format kubeadm`;

const endpointsFields = {
  ...inventoryFields,
  node: z.optional(z.string().check(z.minLength(1))),
  output: z._default(z.enum(OUTPUT_FORMATS as [string, ...string[]], { error: 'expected table, json or yaml' }), DEFAULTS.output),
};

export const endpointsDeclaration: OneShotDeclaration<typeof endpointsFields> = {
  path: 'plan endpoints',
  summary: "each node's role and the apiserver/etcd endpoint each client uses, with the reason (kubespray's HA table)",
  fields: endpointsFields,
  flags: [
    ...inventoryFlags,
    { key: 'node', value: '<name>', help: 'only this node' },
    { key: 'output', short: '-o', value: '<table|json|yaml>', help: 'output format', defaultText: DEFAULTS.output },
  ],
  check: requireInventory,
};

const renderFields = { ...inventoryFields, out: z.optional(z.string({ error: 'expected a directory' }).check(z.minLength(1))), check: z.optional(boolean) };

export const renderDeclaration: OneShotDeclaration<typeof renderFields> = {
  path: 'plan render',
  summary: 'write the node-local LB configs and static pods, external HAProxy, MetalLB Service, /etc/hosts lines, endpoints and SANs',
  helpAfter:
    'Layout: DIR/cluster/ (SANs, endpoints table, etc-hosts, external-lb/) and DIR/nodes/<name>/ (endpoints.yaml and\nthe files at the paths they take on that node). --check writes nothing, prints a unified diff, exits 1 when DIR differs.',
  fields: renderFields,
  flags: [
    ...inventoryFlags,
    { key: 'out', value: '<dir>', help: 'directory to write into' },
    { key: 'check', help: 'compare with DIR instead of writing; exit 1 and print a diff when they differ' },
  ],
  check: (c) => requireInventory(c) ?? (c.out ? undefined : '--out: required; give the directory to write into'),
};

export const SAN_FORMATS = ['list', 'openssl', 'kubeadm', 'json'] as const;
const sansFields = { ...inventoryFields, format: z._default(z.enum(SAN_FORMATS, { error: 'expected list, openssl, kubeadm or json' }), DEFAULTS.format) };

export const sansDeclaration: OneShotDeclaration<typeof sansFields> = {
  path: 'plan sans',
  summary: 'the apiserver certificate SANs: every name and address clients dial',
  fields: sansFields,
  flags: [
    ...inventoryFlags,
    {
      key: 'format',
      value: '<list|openssl|kubeadm|json>',
      help: 'list (with reasons), an openssl [alt_names] section, a kubeadm certSANs fragment, or JSON',
      defaultText: DEFAULTS.format,
    },
  ],
  check: requireInventory,
};
