// kubespray variable names kubeward plan understands, and readers that turn their raw values (YAML
// types, or strings from INI files) into typed values or a problem naming the variable.
import { JinjaError } from './jinja.ts';
import type { InventoryProblem } from './raw-inventory.ts';
import type { VarScope } from './var-scope.ts';
import {
  isPlainIp,
  isConfigDuration,
  isDnsName,
  isImageRepository,
  isImageTagOrDigest,
  isObjectName,
  isQuantity,
  isSafeAbsolutePath,
  shown,
} from './value-grammar.ts';

export { isDnsName };

/** Variables that describe the whole cluster (group vars of all / k8s_cluster). */
export const CLUSTER_VARS = [
  'loadbalancer_apiserver',
  'apiserver_loadbalancer_domain_name',
  'loadbalancer_apiserver_localhost',
  'loadbalancer_apiserver_type',
  'loadbalancer_apiserver_port',
  'nginx_kube_apiserver_port',
  'loadbalancer_apiserver_healthcheck_port',
  'kube_apiserver_port',
  'kube_apiserver_insecure_port',
  'etcd_multiaccess',
  'supplementary_addresses_in_ssl_keys',
  'cluster_name',
  'dns_domain',
  'kube_service_addresses',
  'kube_service_addresses_ipv6',
  'ipv4_stack',
  'ipv6_stack',
  'enable_dual_stack_networks',
  'kube_vip_address',
  'kube_cert_dir',
  'etcd_cert_dir',
  'populate_inventory_to_hosts_file',
  'kubeward_healthcheck_ca_file',
  'nginx_image_repo',
  'nginx_image_tag',
  'haproxy_image_repo',
  'haproxy_image_tag',
  'kubeward_image_repo',
  'kubeward_image_tag',
  'docker_image_repo',
  'loadbalancer_apiserver_pod_name',
  'loadbalancer_apiserver_cpu_requests',
  'loadbalancer_apiserver_memory_requests',
  'nginx_config_dir',
  'haproxy_config_dir',
  'k8s_image_pull_policy',
  'loadbalancer_apiserver_keepalive_timeout',
  'kube_config_dir',
  'kube_manifest_dir',
  'etcd_config_dir',
  'kube_vip_enabled',
  'kube_proxy_mode',
  'kube_proxy_strict_arp',
  'kubeward_vip_provider',
  'kubeward_metallb_load_balancer_class',
  'kubeward_metallb_address_pool',
] as const;

/** Variables that may differ per host. kube_apiserver_bind_address may also be cluster-wide. */
export const HOST_VARS = [
  'ip',
  'access_ip',
  'ip6',
  'access_ip6',
  'ansible_host',
  'kube_apiserver_bind_address',
  'kube_override_hostname',
  'etcd_member_name',
] as const;

/** Reads variables of one scope (Jinja evaluated), collecting problems instead of throwing. */
export class VarReader {
  readonly problems: InventoryProblem[] = [];
  readonly #scope: VarScope;
  readonly #host: string | undefined;
  readonly #failed = new Set<string>();

  constructor(scope: VarScope, host?: string) {
    this.#scope = scope;
    this.#host = host;
  }

  /** The evaluated value; a Jinja expression kubeward cannot evaluate is one problem naming the variable. */
  get(name: string): unknown {
    try {
      return this.#scope.value(name);
    } catch (err) {
      if (!(err instanceof JinjaError)) throw err;
      if (!this.#failed.has(name)) {
        this.#failed.add(name);
        const raw = this.#scope.raw(name);
        const via = err.subject !== name && !String(raw).includes(err.subject) ? ` (through ${err.subject})` : '';
        this.problem(name, `${shown(raw)}${via}: ${err.message}; write the value itself`);
      }
      return undefined;
    }
  }

  /** True when the variable has a value (role defaults included). */
  has(name: string): boolean {
    const v = this.get(name);
    return v !== undefined && v !== null;
  }

  /** True when the inventory or a --vars file sets it (not only kubespray's defaults). */
  setByInventory(name: string): boolean {
    return this.#scope.setByInventory(name);
  }

  raw(name: string): unknown {
    return this.get(name);
  }

  problem(field: string, message: string): void {
    this.problems.push({ host: this.#host, field, message });
  }

  string(name: string): string | undefined {
    const v = this.get(name);
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string' || typeof v === 'number') return String(v).trim();
    this.problem(name, `expected a string, got ${shown(v)}`);
    return undefined;
  }

  bool(name: string): boolean | undefined {
    const v = this.get(name);
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'boolean') return v;
    // Ansible's boolean filter reads these words, and INI values always arrive as strings.
    const s = String(v).toLowerCase();
    if (['true', 'yes', 'on', '1'].includes(s)) return true;
    if (['false', 'no', 'off', '0'].includes(s)) return false;
    this.problem(name, `expected true or false, got ${shown(v)}`);
    return undefined;
  }

  /** A TCP port 1-65535 (or 0 when allowZero, meaning "off"). */
  port(name: string, opts: { allowZero?: boolean; value?: unknown; field?: string } = {}): number | undefined {
    const v = opts.value !== undefined ? opts.value : this.get(name);
    const field = opts.field ?? name;
    if (v === undefined || v === null) return undefined;
    const n = typeof v === 'number' ? v : /^\s*\d+\s*$/.test(String(v)) ? Number(v) : NaN;
    const min = opts.allowZero ? 0 : 1;
    if (!Number.isInteger(n)) {
      this.problem(field, `expected a port number, got ${shown(v)}`);
      return undefined;
    }
    if (n < min || n > 65535) {
      this.problem(field, `port ${n} is out of range; use ${min}-65535`);
      return undefined;
    }
    return n;
  }

  ip(name: string): string | undefined {
    const s = this.string(name);
    if (s === undefined) return undefined;
    if (!isPlainIp(s)) {
      this.problem(name, `${shown(s)} is not an IPv4 or IPv6 address${s.includes('%') ? ' (zone ids are not accepted)' : ''}`);
      return undefined;
    }
    return s;
  }

  /** A string that must match a grammar; otherwise a problem saying what it must look like. */
  matching(name: string, ok: (s: string) => boolean, what: string): string | undefined {
    const s = this.string(name);
    if (s === undefined) return undefined;
    if (!ok(s)) {
      this.problem(name, `${shown(s)} is not ${what}; kubeward refuses values it would have to escape`);
      return undefined;
    }
    return s;
  }

  dnsName(name: string): string | undefined {
    return this.matching(name, isDnsName, 'a DNS name (letters, digits, "-" and ".")');
  }

  /** A directory or file below "/" (never "/" itself: it would become a hostPath mount of the whole host). */
  path(name: string): string | undefined {
    return this.matching(
      name,
      (s) => isSafeAbsolutePath(s) && s.replace(/\/+$/, '') !== '',
      'an absolute path below / of letters, digits, ".", "_" and "-", each segment starting with a letter, digit or "_"',
    );
  }

  imageRepo(name: string): string | undefined {
    return this.matching(name, isImageRepository, 'an image repository in the OCI reference grammar (like docker.io/library/nginx)');
  }

  imageTag(name: string): string | undefined {
    return this.matching(name, isImageTagOrDigest, 'an image tag (like 1.30.1-alpine) or digest (sha256:<hex>)');
  }

  quantity(name: string): string | undefined {
    return this.matching(name, isQuantity, 'a Kubernetes quantity like 25m or 32M');
  }

  duration(name: string): string | undefined {
    return this.matching(name, isConfigDuration, 'a time like 5m, 30s or 300');
  }

  objectName(name: string): string | undefined {
    return this.matching(name, isObjectName, 'a Kubernetes object name (lower-case letters, digits, "-" and ".")');
  }

  oneOf<T extends string>(name: string, values: readonly T[]): T | undefined {
    return this.matching(name, (s) => (values as readonly string[]).includes(s), `one of ${values.join(', ')}`) as T | undefined;
  }

  stringList(name: string): string[] {
    const v = this.get(name);
    if (v === undefined || v === null) return [];
    if (Array.isArray(v) && v.every((x) => typeof x === 'string' || typeof x === 'number')) return v.map((x) => String(x).trim());
    if (typeof v === 'string')
      return v
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x !== '');
    this.problem(name, `expected a list of names and addresses, got ${shown(v)}`);
    return [];
  }
}

/** The known name a misspelt variable was probably meant to be (edit distance ≤ 2), if any. */
export function likelyMeant(name: string, known: readonly string[]): string | undefined {
  if (name.length < 6) return undefined;
  let best: { name: string; d: number } | undefined;
  for (const k of known) {
    const d = editDistance(name, k);
    if (d > 0 && d <= 2 && (!best || d < best.d)) best = { name: k, d };
  }
  return best?.name;
}

/** Levenshtein distance; anything past 2 is reported as 3 (only near misses matter here). */
export function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}
