// kubeward plan: the composition root of the inventory tools (endpoints, render, sans). One-shot
// subcommands: flags and --config (declared in src/plan/plan-config.ts) → typed options → read the
// inventory → pure plan → stdout/files.
import { Command } from 'commander';
import { UsageError } from '../base/errors.ts';
import { parseInventorySources } from '../plan/parse-inventory.ts';
import { readInventoryFiles } from '../plan/read-inventory-files.ts';
import { formatProblem } from '../plan/raw-inventory.ts';
import type { Inventory } from '../plan/inventory.ts';
import { planEndpoints } from '../plan/plan-endpoints.ts';
import { formatEndpoints } from '../plan/format-endpoints.ts';
import { renderPlan } from '../plan/render-plan.ts';
import { otherLbManifests } from '../plan/render-static-pod.ts';
import { compareTree, writeTree } from '../plan/plan-files.ts';
import { computeSans, factSanNotes, renderKubeadmCertSans, renderOpensslSans, renderSanList } from '../plan/apiserver-sans.ts';
import { CURRENT_KUBESPRAY, parseKubesprayVersion } from '../plan/kubespray-defaults.ts';
import { endpointsDeclaration, PLAN_HELP, PLAN_SUMMARY, renderDeclaration, sansDeclaration } from '../plan/plan-config.ts';
import { oneShotCommand, processIo, type Io } from './one-shot-command.ts';

/**
 * Reads the inventory as Ansible does (a file or a directory, with group_vars/ and host_vars/ beside
 * it and in the playbook directory) and validates it; every problem becomes one line of the usage
 * error, and what was skipped joins the inventory's warnings.
 */
export async function loadInventory(inventoryPath: string, varsPaths: string[] = [], kubesprayVersion?: string, playbookDir?: string): Promise<Inventory> {
  const { sources, notes } = await readInventoryFiles({ inventory: inventoryPath, vars: varsPaths, playbookDir });
  const kubespray = kubesprayVersion === undefined ? CURRENT_KUBESPRAY : parseKubesprayVersion(kubesprayVersion)!;
  const r = parseInventorySources(sources, { kubespray });
  if (!r.ok) throw new UsageError(r.problems.map((p) => `${inventoryPath}: ${formatProblem(p)}`).join('\n'));
  r.inventory.warnings.unshift(...notes);
  return r.inventory;
}

function endpointsCommand(io?: Io): Command {
  return oneShotCommand(
    endpointsDeclaration,
    async (config, out) => {
      const plan = planEndpoints(await loadInventory(config.inventory!, config.vars, config.kubesprayVersion, config.playbookDir));
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
  return oneShotCommand(
    renderDeclaration,
    async (config, out) => {
      const inv = await loadInventory(config.inventory!, config.vars, config.kubesprayVersion, config.playbookDir);
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
      out.out(
        `wrote ${written.length} of ${files.length} files to ${dir}${written.length ? ':\n' + written.map((p) => `  ${p}\n`).join('') : ' (all up to date)\n'}`,
      );
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
  if (other !== undefined)
    return `warning: ${rel} is in ${dir} but is the static pod of another load balancer type; remove it from the node, or both bind the apiserver port\n`;
  return `note: ${rel} is in ${dir} but not in the plan (left alone)\n`;
}

function sansCommand(io?: Io): Command {
  return oneShotCommand(
    sansDeclaration,
    async (config, out) => {
      const inv = await loadInventory(config.inventory!, config.vars, config.kubesprayVersion, config.playbookDir);
      const sans = computeSans(inv);
      const notes = factSanNotes(inv);
      const text = {
        list: renderSanList,
        openssl: renderOpensslSans,
        kubeadm: renderKubeadmCertSans,
        json: (s: typeof sans) => JSON.stringify(s, null, 2) + '\n',
      }[config.format];
      out.out(text(sans, notes));
      if (config.format === 'json') for (const n of notes) out.err(`note: ${n}\n`);
      for (const w of inv.warnings) out.err(`warning: ${w}\n`);
      return 0;
    },
    io,
  );
}

export function planCommand(io?: Io): Command {
  const cmd = new Command('plan').description(PLAN_SUMMARY);
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
