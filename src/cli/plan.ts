// kubeward plan: the composition root of the inventory tools (endpoints, render, sans). One-shot
// subcommands: flags and --config → typed options → read the inventory → pure plan → stdout/files.
import { readFile } from 'node:fs/promises';
import { Command, Option } from 'commander';
// zod/mini, as the daemons: the build leaves classic zod out (src/config/fields.ts says why).
import * as z from 'zod/mini';
import { UsageError, describeError, isKubewardError } from '../base/errors.ts';
import { boolean } from '../config/fields.ts';
import { loadModeConfig, type ModeConfig, type ModeSpec } from './mode-command.ts';
import type { RawConfig } from '../config/load-config.ts';
import { parseInventory, type InventoryText } from '../plan/parse-inventory.ts';
import { formatProblem } from '../plan/raw-inventory.ts';
import type { Inventory } from '../plan/inventory.ts';
import { planEndpoints } from '../plan/plan-endpoints.ts';
import { formatEndpoints, OUTPUT_FORMATS } from '../plan/format-endpoints.ts';
import { renderPlan } from '../plan/render-plan.ts';
import { otherLbManifests } from '../plan/render-static-pod.ts';
import { compareTree, writeTree } from '../plan/plan-files.ts';
import { computeSans, factSanNotes, renderKubeadmCertSans, renderOpensslSans, renderSanList } from '../plan/apiserver-sans.ts';
import { CURRENT_KUBESPRAY, parseKubesprayVersion } from '../plan/kubespray-defaults.ts';

export const inventoryFields = {
  inventory: z.optional(z.string({ error: 'expected the path of an inventory file' }).check(z.minLength(1))),
  vars: z.optional(z.array(z.string().check(z.minLength(1)))),
  kubesprayVersion: z.optional(z.string().check(z.refine((v: string) => parseKubesprayVersion(v) !== undefined, { error: 'expected a kubespray release like v2.31, v2.30.0 or 2.28' }))),
};

/** Output is for stdout; warnings and problems go to stderr. Injected so tests can capture them. */
export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
}
const processIo: Io = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) };

/**
 * A one-shot command built from zod fields: --config and the common flags are accepted as in every
 * mode (there is no admin listener), bad usage prints one line per problem and exits 2.
 */
export function oneShotCommand<F extends z.core.$ZodShape>(
  path: string,
  spec: {
    summary: string;
    helpAfter?: string;
    fields: F;
    check?: (c: ModeConfig<F>) => string | undefined;
    /** Config key that the one positional argument fills (it overrides the file like a flag). */
    positional?: string;
  },
  options: Option[],
  run: (config: ModeConfig<F>, io: Io) => Promise<number>,
  io: Io = processIo,
): Command {
  const name = path.split(' ').pop()!;
  const cmd = new Command(name).description(spec.summary).allowExcessArguments(false);
  cmd.option('--config <file>', 'YAML file with any of the keys below (camelCase); flags override it');
  cmd.option('--log-format <json|text>', 'accepted as in every mode; this command prints results, not logs');
  cmd.option('--log-level <level>', 'accepted as in every mode');
  cmd.option('--admin-address <off>', 'one-shot command: there is no admin listener (default: off)');
  for (const o of options) cmd.addOption(o);
  if (spec.helpAfter) cmd.addHelpText('after', '\n' + spec.helpAfter.trimEnd());
  cmd.action(async (...params: unknown[]) => {
    const c = params[params.length - 1] as Command;
    const opts = c.opts() as RawConfig;
    if (spec.positional !== undefined && c.args[0] !== undefined) opts[spec.positional] = c.args[0];
    const modeSpec: ModeSpec<F> = { name, summary: spec.summary, flags: [], fields: spec.fields, adminPort: null, check: spec.check, run: async () => 0 };
    try {
      const config = await loadModeConfig(modeSpec, opts, 'off');
      if (config.adminAddress !== 'off') throw new UsageError('--admin-address: this is a one-shot command without an admin listener; leave it off');
      process.exitCode = await run(config, io);
    } catch (err) {
      if (isKubewardError(err, 'E_USAGE')) {
        for (const line of err.message.split('\n')) io.err(`kubeward ${path}: ${line}\n`);
        process.exitCode = 2;
        return;
      }
      io.err(`kubeward ${path}: ${describeError(err)}\n`);
      process.exitCode = 1;
    }
  });
  return cmd;
}

async function readText(flag: string, path: string): Promise<InventoryText> {
  try {
    return { source: path, text: await readFile(path, 'utf8') };
  } catch (err) {
    throw new UsageError(`${flag} ${path}: cannot read the file (${describeError(err)})`, { cause: err });
  }
}

/** Reads and validates the inventory; every problem becomes one line of the usage error. */
export async function loadInventory(inventoryPath: string, varsPaths: string[] = [], kubesprayVersion?: string): Promise<Inventory> {
  const input = await readText('--inventory', inventoryPath);
  const vars = await Promise.all(varsPaths.map((p) => readText('--vars', p)));
  const kubespray = kubesprayVersion === undefined ? CURRENT_KUBESPRAY : parseKubesprayVersion(kubesprayVersion)!;
  const r = parseInventory(input, vars, { kubespray });
  if (!r.ok) throw new UsageError(r.problems.map((p) => `${inventoryPath}: ${formatProblem(p)}`).join('\n'));
  return r.inventory;
}

export const inventoryOptions = (): Option[] => [
  new Option('--inventory <file>', 'kubeward YAML inventory, or a kubespray hosts.yaml / inventory.ini'),
  new Option('--kubespray-version <release>', 'follow this kubespray release (default: v2.31, also right for v2.30; v2.29 keeps lb-apiserver.kubernetes.local, v2.28 and older also /etc/hosts)'),
  new Option('--vars <file>', 'kubespray group_vars file (all.yml, k8s-cluster.yml...) applied on top; repeatable').argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), v]),
];

export const requireInventory = (c: { inventory?: string }) => (c.inventory ? undefined : '--inventory: required; give the inventory file (kubeward YAML, kubespray hosts.yaml or inventory.ini)');

function endpointsCommand(io?: Io): Command {
  const fields = { ...inventoryFields, node: z.optional(z.string().check(z.minLength(1))), output: z._default(z.enum(OUTPUT_FORMATS as [string, ...string[]], { error: 'expected table, json or yaml' }), 'table') };
  return oneShotCommand(
    'plan endpoints',
    { summary: 'each node\'s role and the apiserver/etcd endpoint each client uses, with the reason (kubespray\'s HA table)', fields, check: requireInventory },
    [...inventoryOptions(), new Option('--node <name>', 'only this node'), new Option('-o, --output <table|json|yaml>', 'output format (default: table)')],
    async (config, out) => {
      const plan = planEndpoints(await loadInventory(config.inventory!, config.vars, config.kubesprayVersion));
      if (config.node !== undefined) {
        const names = plan.nodes.map((n) => n.name);
        if (!names.includes(config.node)) throw new UsageError(`--node ${config.node}: not a cluster node in the inventory; nodes: ${names.join(', ')}`);
        plan.nodes = plan.nodes.filter((n) => n.name === config.node);
      }
      out.out(formatEndpoints(plan, config.output as 'table' | 'json' | 'yaml'));
      return 0;
    },
    io,
  );
}

function renderCommand(io?: Io): Command {
  const fields = { ...inventoryFields, out: z.optional(z.string({ error: 'expected a directory' }).check(z.minLength(1))), check: z.optional(boolean) };
  return oneShotCommand(
    'plan render',
    {
      summary: 'write the node-local LB configs and static pods, external HAProxy, MetalLB Service, /etc/hosts lines, endpoints and SANs',
      helpAfter: 'Layout: DIR/cluster/ (SANs, endpoints table, etc-hosts, external-lb/) and DIR/nodes/<name>/ (endpoints.yaml and\nthe files at the paths they take on that node). --check writes nothing, prints a unified diff, exits 1 when DIR differs.',
      fields,
      check: (c) => requireInventory(c) ?? (c.out ? undefined : '--out: required; give the directory to write into'),
    },
    [...inventoryOptions(), new Option('--out <dir>', 'directory to write into'), new Option('--check', 'compare with DIR instead of writing; exit 1 and print a diff when they differ')],
    async (config, out) => {
      const inv = await loadInventory(config.inventory!, config.vars, config.kubesprayVersion);
      const files = renderPlan(inv);
      for (const w of planEndpoints(inv).warnings) out.err(`warning: ${w}\n`);
      const dir = config.out!;
      if (config.check) {
        const cmp = await compareTree(dir, files);
        for (const d of cmp.diffs) out.out(d);
        for (const e of cmp.extra) out.err(extraFileNote(inv, dir, e));
        if (cmp.changed.length > 0) {
          out.err(`${cmp.changed.length} of ${files.length} files differ from the plan\n`);
          return 1;
        }
        out.err(`${files.length} files match the plan\n`);
        return 0;
      }
      const written = await writeTree(dir, files);
      out.out(`wrote ${written.length} of ${files.length} files to ${dir}${written.length ? ':\n' + written.map((p) => `  ${p}\n`).join('') : ' (all up to date)\n'}`);
      const cmp = await compareTree(dir, files);
      for (const e of cmp.extra) out.err(extraFileNote(inv, dir, e));
      return 0;
    },
    io,
  );
}

/**
 * A file in DIR the plan does not render; another LB type's static pod gets a warning, since
 * kubespray's tasks delete it when switching types and two LB pods fight for the same port.
 */
function extraFileNote(inv: Inventory, dir: string, rel: string): string {
  const other = otherLbManifests(inv).find((m) => rel.endsWith(m));
  if (other !== undefined) return `warning: ${rel} is in ${dir} but is the static pod of another load balancer type; remove it from the node, or both bind the apiserver port\n`;
  return `note: ${rel} is in ${dir} but not in the plan (left alone)\n`;
}

function sansCommand(io?: Io): Command {
  const formats = ['list', 'openssl', 'kubeadm', 'json'] as const;
  const fields = { ...inventoryFields, format: z._default(z.enum(formats, { error: 'expected list, openssl, kubeadm or json' }), 'list') };
  return oneShotCommand(
    'plan sans',
    { summary: 'the apiserver certificate SANs: every name and address clients dial', fields, check: requireInventory },
    [...inventoryOptions(), new Option('--format <list|openssl|kubeadm|json>', 'list (with reasons), an openssl [alt_names] section, a kubeadm certSANs fragment, or JSON (default: list)')],
    async (config, out) => {
      const inv = await loadInventory(config.inventory!, config.vars, config.kubesprayVersion);
      const sans = computeSans(inv);
      const notes = factSanNotes(inv);
      const text = { list: renderSanList, openssl: renderOpensslSans, kubeadm: renderKubeadmCertSans, json: (s: typeof sans) => JSON.stringify(s, null, 2) + '\n' }[config.format];
      out.out(text(sans, notes));
      if (config.format === 'json') for (const n of notes) out.err(`note: ${n}\n`);
      for (const w of inv.warnings) out.err(`warning: ${w}\n`);
      return 0;
    },
    io,
  );
}

const PLAN_HELP = `
From a kubespray-style inventory, decides how every node reaches the apiserver and etcd (local load
balancer, external load balancer or the first control-plane node) and renders what that needs.

Examples:
  kubeward plan endpoints --inventory inventory/mycluster/hosts.yaml --vars inventory/mycluster/group_vars/all/all.yml
  kubeward plan render --inventory inventory.ini --out rendered/
  kubeward plan render --inventory inventory.ini --out rendered/ --check     # exit 1 and a diff when stale
  kubeward plan sans --inventory inventory.ini --format kubeadm`;

export function planCommand(io?: Io): Command {
  const cmd = new Command('plan').description('HA endpoints, rendered load balancer configs and certificate SANs from an inventory');
  cmd.addHelpText('after', PLAN_HELP);
  cmd.addCommand(endpointsCommand(io));
  cmd.addCommand(renderCommand(io));
  cmd.addCommand(sansCommand(io));
  // Without a subcommand, show what there is and fail as bad usage.
  cmd.action(() => {
    (io ?? processIo).err('kubeward plan: give a subcommand: endpoints, render or sans; see "kubeward plan --help"\n');
    process.exitCode = 2;
  });
  return cmd;
}
