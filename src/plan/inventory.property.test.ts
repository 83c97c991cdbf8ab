// Property tests (fast-check) of the inventory readers, the value grammars and the renderers: no
// input throws anything but a problem list, no accepted value renders a line break or a path
// outside its directory, and every file rendered from an accepted random inventory still parses.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { access, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve, sep } from 'node:path';
import fc from 'fast-check';
import { containerSecurity } from '../manifests/pod-parts.ts';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { parseInventory } from './parse-inventory.ts';
import { formatProblem } from './raw-inventory.ts';
import { isSafeRelativePath, renderPlan, type RenderedFile } from './render-plan.ts';
import {
  isConfigDuration,
  isDnsName,
  isHostName,
  isImageReference,
  isImageRepository,
  isImageTagOrDigest,
  isObjectName,
  isQuantity,
  isSafeAbsolutePath,
} from './value-grammar.ts';
import type { Inventory } from './inventory.ts';
import { parseKubesprayVersion } from './kubespray-defaults.ts';
import { execCommand } from '../sys/exec.ts';

const NGINX_STREAM_MODULE = '/usr/lib/nginx/modules/ngx_stream_module.so';

const RUNS = Number(process.env.KUBEWARD_PROPERTY_RUNS ?? 300);

/** Strings that try to break out: line breaks, config and YAML syntax, traversal, Jinja. */
const hostile = fc.constantFrom(
  '\n',
  '\r\n',
  '\0',
  '\u2028',
  '}',
  '{',
  ';',
  '#',
  '"',
  "'",
  ':',
  ': ',
  '- ',
  '../',
  '/',
  ' ',
  '\t',
  '{{',
  '}}',
  '$',
  '`',
  '\\',
  '*',
  '&a',
  '!!js/function',
  'http { root /; autoindex on; }',
);
const hostileString = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  fc.tuple(fc.string({ maxLength: 6 }), hostile, fc.string({ maxLength: 6 })).map(([a, b, c]) => a + b + c),
);
const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?$/);
const hostName = fc.oneof(
  { weight: 4, arbitrary: fc.array(label, { minLength: 1, maxLength: 3 }).map((l) => l.join('.')) },
  { weight: 1, arbitrary: hostileString },
);
const ip4 = fc.ipV4();
const ip6 = fc.ipV6();
const path = fc.oneof(
  { weight: 3, arbitrary: fc.array(label, { minLength: 1, maxLength: 4 }).map((l) => `/${l.join('/')}`) },
  { weight: 1, arbitrary: hostileString },
  { weight: 1, arbitrary: fc.constantFrom('/', '//', '/etc/', '/etc//x') },
);

/** Known variables with mostly valid and sometimes hostile values. */
const clusterVar = fc.oneof(
  fc.record({ k: fc.constant('dns_domain'), v: fc.oneof(hostName, hostileString) }),
  fc.record({ k: fc.constant('cluster_name'), v: hostName }),
  fc.record({ k: fc.constant('apiserver_loadbalancer_domain_name'), v: fc.oneof(hostName, ip4) }),
  fc.record({ k: fc.constant('kube_cert_dir'), v: path }),
  fc.record({ k: fc.constant('etcd_cert_dir'), v: path }),
  fc.record({ k: fc.constant('kubeward_healthcheck_ca_file'), v: fc.oneof(path, fc.constant('')) }),
  fc.record({ k: fc.constant('nginx_image_tag'), v: fc.oneof(fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,10}$/), hostileString) }),
  fc.record({
    k: fc.constant('haproxy_image_repo'),
    v: fc.oneof(
      fc.array(label, { minLength: 1, maxLength: 3 }).map((l) => l.join('/')),
      hostileString,
    ),
  }),
  fc.record({ k: fc.constant('loadbalancer_apiserver_type'), v: fc.constantFrom('nginx', 'haproxy', 'kubeward', 'envoy') }),
  fc.record({ k: fc.constant('loadbalancer_apiserver_port'), v: fc.oneof(fc.integer({ min: -1, max: 70000 }), hostileString) }),
  fc.record({ k: fc.constant('loadbalancer_apiserver_healthcheck_port'), v: fc.integer({ min: 1, max: 65535 }) }),
  fc.record({ k: fc.constant('loadbalancer_apiserver'), v: fc.oneof(fc.record({ address: ip4, port: fc.integer({ min: 1, max: 65535 }) }), hostileString) }),
  fc.record({ k: fc.constant('supplementary_addresses_in_ssl_keys'), v: fc.array(fc.oneof(hostName, ip4, ip6), { maxLength: 3 }) }),
  fc.record({ k: fc.constant('kube_service_addresses'), v: fc.oneof(fc.constant('10.233.0.0/18'), hostileString) }),
  fc.record({ k: fc.constant('ipv6_stack'), v: fc.boolean() }),
  fc.record({ k: fc.constant('docker_image_repo'), v: fc.oneof(fc.constantFrom('registry.local:5000', 'docker.io'), hostileString) }),
  fc.record({ k: fc.constant('loadbalancer_apiserver_pod_name'), v: fc.oneof(label, hostileString) }),
  fc.record({ k: fc.constant('loadbalancer_apiserver_cpu_requests'), v: fc.oneof(fc.constantFrom('25m', '0.5', '1'), hostileString) }),
  fc.record({ k: fc.constant('loadbalancer_apiserver_memory_requests'), v: fc.oneof(fc.constantFrom('32M', '64Mi'), hostileString) }),
  fc.record({ k: fc.constant('loadbalancer_apiserver_keepalive_timeout'), v: fc.oneof(fc.constantFrom('5m', '30s', '300'), hostileString) }),
  fc.record({ k: fc.constant('nginx_config_dir'), v: path }),
  fc.record({ k: fc.constant('haproxy_config_dir'), v: path }),
  fc.record({ k: fc.constant('kube_config_dir'), v: path }),
  fc.record({ k: fc.constant('k8s_image_pull_policy'), v: fc.oneof(fc.constantFrom('Always', 'IfNotPresent', 'Never'), hostileString) }),
  fc.record({ k: fc.constant('kubeward_vip_provider'), v: fc.constantFrom('external', 'metallb', 'kube-vip', 'f5') }),
  fc.record({ k: fc.constant('kubeward_metallb_load_balancer_class'), v: fc.oneof(fc.constant('metallb.io/metallb'), hostileString) }),
  fc.record({ k: fc.constant('loadbalancer_apiserver_localhost'), v: fc.boolean() }),
  fc.record({
    k: fc.constant('kube_cert_dir'),
    v: fc.constantFrom('{{ kube_config_dir }}/ssl', "{{ kube_config_dir | default('/x') }}/ssl", '{{ ansible_env.HOME }}', '{{ nope }}', '{% if x %}'),
  }),
  fc.record({ k: fc.constant('etcd_multiaccess'), v: fc.boolean() }),
);

const inventoryArb = fc
  .record({
    cps: fc.uniqueArray(hostName, { minLength: 1, maxLength: 3 }),
    workers: fc.uniqueArray(hostName, { maxLength: 3 }),
    ips: fc.array(fc.oneof({ weight: 20, arbitrary: ip4 }, { weight: 1, arbitrary: ip6 }, { weight: 1, arbitrary: hostileString }), {
      minLength: 6,
      maxLength: 6,
    }),
    override: fc.option(hostName, { nil: undefined }),
    // One in three without variables, so that enough inventories are accepted to test the renderers.
    vars: fc.oneof({ weight: 1, arbitrary: fc.array(clusterVar, { maxLength: 0 }) }, { weight: 2, arbitrary: fc.array(clusterVar, { maxLength: 6 }) }),
  })
  .map(({ cps, workers, ips, override, vars }) => {
    const names = [...new Set([...cps, ...workers])];
    const hosts: Record<string, Record<string, unknown>> = {};
    names.forEach((n, i) => (hosts[n] = { ip: ips[i % ips.length] }));
    if (override !== undefined) hosts[cps[0]!]!.kube_override_hostname = override;
    return {
      hosts,
      groups: { kube_control_plane: cps, etcd: cps, kube_node: workers.filter((w) => !cps.includes(w)) },
      vars: Object.fromEntries(vars.map(({ k, v }) => [k, v])),
    };
  });

function parse(doc: unknown) {
  return parseInventory({ source: 'random.yaml', text: JSON.stringify(doc) });
}

/** The values that came from the inventory: none may span lines in any rendered file. */
function inventoryValues(inv: Inventory): string[] {
  return [
    ...inv.hosts.flatMap((h) => [h.name, h.ip, h.accessIp, h.overrideHostname ?? '']),
    inv.lbDomainName ?? '',
    inv.dnsDomain,
    inv.certDir,
    inv.etcdCertDir,
    inv.healthcheckCaFile,
    inv.images.nginx,
    inv.images.haproxy,
    inv.lbPod.name,
    inv.lbPod.cpuRequests,
    inv.lbPod.memoryRequests,
    inv.lbPod.keepaliveTimeout,
    inv.configDirs.nginx,
    inv.configDirs.haproxy,
    inv.manifestDir,
    ...inv.supplementaryAddresses,
  ].filter((v) => v !== '');
}

function checkRendered(inv: Inventory, files: RenderedFile[]): void {
  const root = resolve('/out');
  for (const f of files) {
    assert.ok(isSafeRelativePath(f.path), `path ${JSON.stringify(f.path)}`);
    assert.ok(resolve(root, f.path).startsWith(root + sep));
    assert.doesNotMatch(f.content, /[\r\0\u2028\u2029]/, `${f.path} has a stray line break or NUL`);
    if (f.kind === 'yaml' || f.kind === 'static-pod' || f.kind === 'kubeward-proxy') {
      const docs = parseAllDocuments(f.content);
      for (const d of Array.isArray(docs) ? docs : [docs]) assert.equal(d.errors.length, 0, `${f.path} is not valid YAML: ${d.errors[0]?.message}`);
    }
    if (f.kind === 'static-pod') {
      const pod = parseYaml(f.content) as {
        spec: { containers: Record<string, unknown>[]; volumes: { name: string; hostPath?: { path: string }; emptyDir?: { medium?: string } }[] };
      };
      // Only kubeward's own LB pod hands over on restart (preStop await-successor), so only it sets a
      // grace period; it is also the one with a fixed security context (src/manifests/pod-parts.ts).
      const kubeward = inv.lbType === 'kubeward';
      const own = kubeward ? ['securityContext', 'terminationGracePeriodSeconds'] : [];
      assert.deepEqual(Object.keys(pod.spec).sort(), ['containers', 'dnsPolicy', 'hostNetwork', 'nodeSelector', 'priorityClassName', ...own, 'volumes']);
      for (const c of pod.spec.containers)
        assert.deepEqual(c.securityContext, kubeward ? containerSecurity('image') : undefined, 'no securityContext can be injected');
      for (const v of pod.spec.volumes) {
        // Kubeward's pod keeps its admin token in a memory emptyDir of its own; every other volume is a host path.
        if (v.hostPath === undefined) assert.deepEqual(v, { name: 'admin-token', emptyDir: { medium: 'Memory' } }, `volume ${v.name}`);
        else assert.ok(isSafeAbsolutePath(v.hostPath.path) && v.hostPath.path !== '/', `hostPath ${v.hostPath.path}`);
      }
    }
  }
  for (const v of inventoryValues(inv)) assert.doesNotMatch(v, /\p{Cc}|\s/u, `accepted value ${JSON.stringify(v)}`);
}

describe('inventory parsing never throws, and what it accepts renders safely', () => {
  test('arbitrary text as YAML or INI: a result, never a throw; every problem is one line', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), fc.constantFrom('inv.yaml', 'inv.ini', 'inv'), (text, source) => {
        const r = parseInventory({ source, text });
        if (!r.ok) for (const p of r.problems) assert.doesNotMatch(formatProblem(p), /[\n\r]/);
      }),
      { numRuns: RUNS },
    );
  });

  test('arbitrary group_vars files (--vars): a result, never a throw', () => {
    const inv = JSON.stringify({ hosts: { cp1: { ip: '10.0.0.11' } }, groups: { kube_control_plane: ['cp1'] } });
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 200 }),
          fc
            .dictionary(fc.constantFrom('dns_domain', 'kube_cert_dir', 'nginx_image_tag', 'loadbalancer_apiserver', 'x'), hostileString)
            .map((d) => JSON.stringify(d)),
        ),
        (text) => {
          const r = parseInventory({ source: 'inv.yaml', text: inv }, [{ source: 'all.yml', text }]);
          if (r.ok) checkRendered(r.inventory, renderPlan(r.inventory));
          else for (const p of r.problems) assert.doesNotMatch(formatProblem(p), /[\n\r]/);
        },
      ),
      { numRuns: RUNS },
    );
  });

  test('INI-shaped noise: section headers, key=value pairs and hostile words', () => {
    const line = fc.oneof(
      fc.constantFrom('[kube_control_plane]', '[kube_node]', '[etcd:children]', '[all:vars]', '[k8s_cluster:children]', 'kube_control_plane'),
      fc.tuple(hostName, fc.constantFrom('ip', 'access_ip', 'kube_override_hostname', 'dns_domain'), hostileString).map(([h, k, v]) => `${h} ${k}=${v}`),
      fc.tuple(fc.constantFrom('dns_domain', 'kube_cert_dir', 'nginx_image_tag'), hostileString).map(([k, v]) => `${k}=${v}`),
    );
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), (lines) => {
        const r = parseInventory({ source: 'inv.ini', text: lines.join('\n') });
        if (r.ok) checkRendered(r.inventory, renderPlan(r.inventory));
        else for (const p of r.problems) assert.doesNotMatch(formatProblem(p), /[\n\r]/);
      }),
      { numRuns: RUNS },
    );
  });

  test('a config directory the plan cannot write under its output (non-ASCII, a leading dot) is refused as bad input, not rendered', () => {
    const doc = (dir: string) => ({
      hosts: { '0': { ip: '0.0.0.0' }, a: { ip: '0.0.0.1' } },
      groups: { kube_control_plane: ['0'], etcd: ['0'], kube_node: ['a'] },
      vars: { nginx_config_dir: dir },
    });
    for (const dir of ['/\u1681', '/etc/.nginx', '/etc/-x']) {
      const r = parse(doc(dir));
      assert.equal(r.ok, false, dir);
      if (!r.ok) assert.match(formatProblem(r.problems[0]!), /nginx_config_dir/);
    }
    const r = parse(doc('/etc/nginx-1.27_x'));
    assert.ok(r.ok);
    checkRendered(r.inventory, renderPlan(r.inventory));
  });

  test('random structured inventories: accepted ones render only plain relative paths, one-line values and parseable YAML', () => {
    let accepted = 0;
    fc.assert(
      fc.property(inventoryArb, (doc) => {
        const r = parse(doc);
        if (!r.ok) {
          for (const p of r.problems) assert.doesNotMatch(formatProblem(p), /[\n\r]/);
          return;
        }
        accepted++;
        checkRendered(r.inventory, renderPlan(r.inventory));
      }),
      { numRuns: RUNS },
    );
    assert.ok(accepted > RUNS / 10, `only ${accepted} of ${RUNS} random inventories were accepted; the generator tests too little`);
  });

  test('a sample of accepted random inventories: every nginx config passes nginx -t, every HAProxy config haproxy -c', async (t) => {
    const tools = await Promise.all(
      ['nginx', 'haproxy'].map((c) =>
        execCommand(['sh', '-c', `command -v ${c}`]).then(
          () => true,
          () => false,
        ),
      ),
    );
    const streamModule = await access(NGINX_STREAM_MODULE).then(
      () => true,
      () => false,
    );
    if (!tools[0] || !tools[1] || !streamModule) return t.skip('nginx (with libnginx-mod-stream) or haproxy is missing');
    const dir = await mkdtemp(join(tmpdir(), 'kw-plan-prop-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const files: RenderedFile[] = [];
    // Deterministic sample: the first accepted inventories of a fixed seed, LB type forced so both tools get work.
    for (const doc of fc.sample(inventoryArb, { numRuns: 400, seed: 42 })) {
      for (const type of ['nginx', 'haproxy'] as const) {
        const r = parse({ ...doc, vars: { ...doc.vars, loadbalancer_apiserver_type: type, kubeward_healthcheck_ca_file: '' } });
        if (r.ok) files.push(...renderPlan(r.inventory).filter((f) => f.kind === 'nginx' || f.kind === 'haproxy'));
      }
      if (files.length >= 24) break;
    }
    assert.ok(files.some((f) => f.kind === 'nginx') && files.some((f) => f.kind === 'haproxy'), 'the sample has both kinds');
    let n = 0;
    for (const f of files) {
      const conf = join(dir, `c${n++}.conf`);
      if (f.kind === 'nginx') {
        await writeFile(conf, `load_module ${NGINX_STREAM_MODULE};\npid ${dir}/nginx.pid;\n${f.content}`);
        const r = await execCommand(['nginx', '-t', '-q', '-p', dir, '-e', 'stderr', '-c', conf], { okCodes: [0, 1] });
        assert.equal(r.code, 0, `nginx -t: ${r.stderr}\n${f.content}`);
      } else {
        await writeFile(conf, f.content);
        const r = await execCommand(['haproxy', '-c', '-f', conf], { okCodes: [0, 1, 2] });
        assert.equal(r.code, 0, `haproxy -c: ${r.stdout}${r.stderr}\n${f.content}`);
      }
    }
  });
});

describe('value grammars', () => {
  const anyString = fc.oneof(fc.string({ maxLength: 40 }), hostileString, fc.string({ unit: 'binary', maxLength: 20 }));

  test('no grammar throws, and nothing accepted has whitespace or control characters', () => {
    const grammars = {
      isHostName,
      isDnsName,
      isSafeAbsolutePath,
      isImageReference,
      isImageRepository,
      isImageTagOrDigest,
      isQuantity,
      isConfigDuration,
      isObjectName,
    };
    fc.assert(
      fc.property(anyString, (s) => {
        for (const [name, ok] of Object.entries(grammars)) if (ok(s)) assert.doesNotMatch(s, /[\s\p{Cc}"'{};#`\\]/u, `${name} accepted ${JSON.stringify(s)}`);
      }),
      { numRuns: RUNS * 3 },
    );
  });

  test('an accepted host name is one path segment; an accepted absolute path is already normal', () => {
    fc.assert(
      fc.property(anyString, (s) => {
        if (isHostName(s)) {
          assert.ok(!s.includes('/') && s !== '.' && s !== '..');
          assert.ok(isSafeRelativePath(`nodes/${s}/endpoints.yaml`));
        }
        if (isSafeAbsolutePath(s)) assert.equal(resolve(s), s.length > 1 ? s.replace(/\/$/, '') : s);
      }),
      { numRuns: RUNS * 3 },
    );
  });

  test('kubespray versions: any text parses to a v2 release or undefined, never throws', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          anyString,
          fc.tuple(fc.nat(120), fc.nat(120)).map(([a, b]) => `v${a}.${b}`),
        ),
        (s) => {
          const v = parseKubesprayVersion(s);
          if (v !== undefined) assert.ok(v.major === 2 && v.minor <= 99 && /^v2\.\d+(\.\d+)?$/.test(v.label));
        },
      ),
      { numRuns: RUNS },
    );
  });

  test('generated valid values are accepted (the grammars are not just "reject everything")', () => {
    fc.assert(
      fc.property(fc.array(label, { minLength: 1, maxLength: 4 }), fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,20}$/), (labels, tag) => {
        assert.ok(isHostName(labels.join('.')));
        assert.ok(isSafeAbsolutePath(`/${labels.join('/')}`));
        assert.ok(isImageReference(`registry.local:5000/${labels.join('/')}:${tag}`));
      }),
      { numRuns: RUNS },
    );
  });
});
