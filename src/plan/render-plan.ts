// Everything `kubeward plan render` writes, as relative paths and contents: cluster-wide files under
// cluster/, and per node under nodes/<name>/ the files at the paths they take on that node.
import type { Inventory } from './inventory.ts';
import { computeSans, factSanNotes, renderKubeadmCertSans, renderOpensslSans, renderSanList } from './apiserver-sans.ts';
import { formatEndpoints } from './format-endpoints.ts';
import { planEndpoints, type ClusterPlan, type NodePlan } from './plan-endpoints.ts';
import { renderEtcHosts, renderMetallbService, renderNodeEndpoints } from './render-cluster-files.ts';
import { renderExternalHaproxyConfig, renderLocalHaproxyConfig } from './render-haproxy.ts';
import { renderKubewardProxyConfig } from './render-kubeward-proxy.ts';
import { renderNginxConfig } from './render-nginx.ts';
import { lbFiles, renderStaticPod } from './render-static-pod.ts';

export interface RenderedFile {
  /** Relative, with "/" separators. */
  path: string;
  content: string;
  /** What kind of file it is, so tests and --check can pick e.g. every HAProxy config. */
  kind: 'nginx' | 'haproxy' | 'kubeward-proxy' | 'static-pod' | 'text' | 'yaml';
}

/** "a/b/c.yaml": no leading "/", no empty, "." or ".." segment, only [A-Za-z0-9._-] in names. */
export function isSafeRelativePath(p: string): boolean {
  return p.split('/').every((seg) => /^[A-Za-z0-9_][A-Za-z0-9._-]*$/.test(seg) && seg !== '..');
}

/** Every file the plan renders; throws if a path would leave the output directory (a bug: inputs are validated). */
export function renderPlan(inv: Inventory): RenderedFile[] {
  const files = renderFiles(inv);
  for (const f of files)
    if (!isSafeRelativePath(f.path)) throw new Error(`internal error: rendered path ${JSON.stringify(f.path)} is not a plain relative path`);
  return files;
}

function renderFiles(inv: Inventory): RenderedFile[] {
  const plan = planEndpoints(inv);
  const sans = computeSans(inv);
  const files: RenderedFile[] = [
    { path: 'cluster/endpoints.txt', content: formatEndpoints(plan, 'table'), kind: 'text' },
    { path: 'cluster/apiserver-sans.txt', content: renderSanList(sans, factSanNotes(inv)), kind: 'text' },
    { path: 'cluster/apiserver-sans.cnf', content: renderOpensslSans(sans, factSanNotes(inv)), kind: 'text' },
    { path: 'cluster/kubeadm-certsans.yaml', content: renderKubeadmCertSans(sans, factSanNotes(inv)), kind: 'yaml' },
  ];
  const hosts = renderEtcHosts(inv);
  if (hosts) files.push({ path: 'cluster/etc-hosts', content: hosts, kind: 'text' });
  files.push(...externalLbFiles(inv, plan));
  for (const node of plan.nodes) files.push(...nodeFiles(inv, node));
  return files;
}

/** External HAProxy for a load balancer kubeward does not run; MetalLB Service for a MetalLB VIP; nothing for kube-vip. */
function externalLbFiles(inv: Inventory, plan: ClusterPlan): RenderedFile[] {
  const files: RenderedFile[] = [];
  if (plan.externalLb)
    files.push({ path: 'cluster/external-lb/haproxy.cfg', content: renderExternalHaproxyConfig(inv, plan.externalLb.upstreams), kind: 'haproxy' });
  const svc = renderMetallbService(inv);
  if (svc) files.push({ path: 'cluster/metallb/apiserver-service.yaml', content: svc, kind: 'yaml' });
  return files;
}

function nodeFiles(inv: Inventory, node: NodePlan): RenderedFile[] {
  const dir = `nodes/${node.name}`;
  const files: RenderedFile[] = [{ path: `${dir}/endpoints.yaml`, content: renderNodeEndpoints(node), kind: 'yaml' }];
  if (!node.localLb) return files;
  const fronts = node.localLb.frontends;
  const config =
    inv.lbType === 'nginx'
      ? renderNginxConfig(inv, node, fronts)
      : inv.lbType === 'haproxy'
        ? renderLocalHaproxyConfig(inv, node, fronts)
        : renderKubewardProxyConfig(inv, node, fronts);
  const kind = inv.lbType === 'kubeward' ? 'kubeward-proxy' : inv.lbType;
  const paths = lbFiles(inv);
  files.push({ path: `${dir}/${paths.configPath}`, content: config, kind });
  files.push({ path: `${dir}/${paths.manifest}`, content: renderStaticPod(inv, node.name, fronts, config), kind: 'static-pod' });
  return files;
}
