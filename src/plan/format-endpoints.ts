// The endpoint plan for people (an aligned table with warnings) and for machines (JSON, YAML).
import { stringify as stringifyYaml } from 'yaml';
import type { ClusterPlan } from './plan-endpoints.ts';

export type OutputFormat = 'table' | 'json' | 'yaml';
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['table', 'json', 'yaml'];

export function formatEndpoints(plan: ClusterPlan, format: OutputFormat): string {
  if (format === 'json') return JSON.stringify(plan, null, 2) + '\n';
  if (format === 'yaml') return stringifyYaml(plan, { lineWidth: 0 });
  return formatTable(plan);
}

function formatTable(plan: ClusterPlan): string {
  const rows: string[][] = [['NODE', 'ROLES', 'COMPONENT', 'ENDPOINT', 'REASON']];
  for (const n of plan.nodes) {
    n.endpoints.forEach((e, i) => {
      // etcd member lists are long; one URL per line keeps the table readable.
      const urls = e.url.split(',');
      rows.push([i === 0 ? n.name : '', i === 0 ? n.roles.join(',') : '', e.component, urls[0]!, e.reason]);
      for (const more of urls.slice(1)) rows.push(['', '', '', more, '']);
    });
    if (n.localLb) {
      const fronts = n.localLb.frontends.map((f) => `${f.name} on ${f.listen.map((l) => (l.includes(':') ? `[${l}]` : l)).join(',')}:${f.port}`).join('; ');
      rows.push(['', '', 'local load balancer', n.localLb.type, fronts]);
    }
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const text = rows.map((r) =>
    r
      .map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!)))
      .join('  ')
      .trimEnd(),
  );
  text.push('', `cluster-wide (kube_apiserver_global_endpoint, the apiserver Calico and Cilium use): ${plan.global.url} (${plan.global.reason})`);
  text.push(`external clients: ${plan.external.url} (${plan.external.reason})`);
  for (const w of plan.warnings) text.push(`warning: ${w}`);
  return text.join('\n') + '\n';
}
