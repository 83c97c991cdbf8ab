// Injections hidden in one inventory (shell and YAML through host values, path traversal): each value is
// refused with a problem naming the host and the key, and nothing is rendered from it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseInventory } from './parse-inventory.ts';
import { formatProblem } from './raw-inventory.ts';
import { pathUnder } from './plan-files.ts';
import { isSafeRelativePath } from './render-plan.ts';

function inventory(hosts: Record<string, Record<string, unknown>>, vars: Record<string, unknown> = {}, workers?: string[]): string {
  const names = Object.keys(hosts);
  return JSON.stringify({
    hosts,
    groups: { kube_control_plane: names.slice(0, 1), etcd: names.slice(0, 1), kube_node: workers ?? names.slice(1) },
    vars,
  });
}

function problems(text: string): string[] {
  const r = parseInventory({ source: 'inv.yaml', text });
  assert.equal(r.ok, false, 'the inventory must be refused');
  return r.ok ? [] : r.problems.map(formatProblem);
}

function assertRefused(text: string, host: string | undefined, key: string): void {
  const lines = problems(text);
  const hit = lines.find((l) => (host === undefined || l.includes(`host ${JSON.stringify(host)}`)) && l.includes(`${key}:`));
  assert.ok(hit, `expected a problem naming ${host ?? '(cluster)'} and ${key}, got:\n${lines.join('\n')}`);
  for (const l of lines) assert.doesNotMatch(l, /[\n\r]/, 'every problem is one line');
}

const CP = { ip: '10.0.0.11' };

describe('injections through host values are refused', () => {
  test('extra /etc/hosts lines through dns_domain', () => {
    assertRefused(inventory({ cp1: CP, w1: { ip: '10.0.0.21' } }, { dns_domain: 'cluster.local\n203.0.113.66 registry.example.com' }), undefined, 'dns_domain');
  });

  test('extra /etc/hosts lines through a worker name', () => {
    const bad = 'w1\n203.0.113.66 registry.example.com';
    assertRefused(inventory({ cp1: CP, [bad]: { ip: '10.0.0.21' } }), bad, 'name');
  });

  test('an nginx http { root /; autoindex on; } block through a worker name (the config header names the node)', () => {
    const bad = 'w1\nhttp { server { listen 127.0.0.1:8082; root /; autoindex on; } }';
    assertRefused(inventory({ cp1: CP, [bad]: { ip: '10.0.0.21' } }), bad, 'name');
  });

  test('a rogue HAProxy server through the health-check CA path', () => {
    assertRefused(
      inventory(
        { cp1: CP, w1: { ip: '10.0.0.21' } },
        { loadbalancer_apiserver_type: 'haproxy', kubeward_healthcheck_ca_file: '/etc/ca.crt\n    server rogue 203.0.113.66:6443 check' },
      ),
      undefined,
      'kubeward_healthcheck_ca_file',
    );
  });

  test('a rogue HAProxy server through apiserver_loadbalancer_domain_name (external HAProxy header)', () => {
    assertRefused(
      inventory(
        { cp1: CP, w1: { ip: '10.0.0.21' } },
        {
          loadbalancer_apiserver: { address: '10.0.0.100', port: 8383 },
          apiserver_loadbalancer_domain_name: 'api.example.com\nbackend x\n    server rogue 203.0.113.66:6443',
        },
      ),
      undefined,
      'apiserver_loadbalancer_domain_name',
    );
  });

  test('a privileged: true static pod through the image tag and the image repo', () => {
    const inject = '\n      securityContext:\n        privileged: true';
    assertRefused(inventory({ cp1: CP, w1: { ip: '10.0.0.21' } }, { nginx_image_tag: `1.30.1-alpine${inject}` }), undefined, 'nginx_image_tag');
    assertRefused(inventory({ cp1: CP, w1: { ip: '10.0.0.21' } }, { nginx_image_repo: `docker.io/library/nginx${inject}` }), undefined, 'nginx_image_repo');
  });

  test('a static pod mounting / through a certificate directory', () => {
    assertRefused(
      inventory(
        { cp1: CP, w1: { ip: '10.0.0.21' } },
        { loadbalancer_apiserver_type: 'kubeward', kube_cert_dir: '/etc/kubernetes/ssl\n    - name: root\n      hostPath: {path: /}' },
      ),
      undefined,
      'kube_cert_dir',
    );
    assertRefused(inventory({ cp1: CP, w1: { ip: '10.0.0.21' } }, { etcd_cert_dir: '/etc/ssl/../../' }), undefined, 'etcd_cert_dir');
  });

  test('extra openssl SAN lines through kube_override_hostname', () => {
    assertRefused(
      inventory({ cp1: { ip: '10.0.0.11', kube_override_hostname: 'cp1\nDNS.99 = evil.example.com' }, w1: { ip: '10.0.0.21' } }),
      'cp1',
      'kube_override_hostname',
    );
  });

  test('extra openssl SAN lines through cluster_name', () => {
    assertRefused(inventory({ cp1: CP, w1: { ip: '10.0.0.21' } }, { cluster_name: 'cluster.local\nIP.99 = 203.0.113.66' }), undefined, 'cluster_name');
  });
});

describe('path traversal through host values is refused', () => {
  test('a worker named ../../../../escaped is refused before anything is rendered', () => {
    assertRefused(inventory({ cp1: CP, '../../../../escaped': { ip: '10.0.0.21' } }), '../../../../escaped', 'name');
  });

  test('an INI worker named with slashes is refused too', () => {
    const r = parseInventory({ source: 'i.ini', text: '[kube_control_plane]\ncp1 ip=10.0.0.11\n[kube_node]\n../../escaped ip=10.0.0.21\n' });
    assert.equal(r.ok, false);
    assert.ok(!r.ok && r.problems.some((p) => p.host === '../../escaped' && p.field === 'name'));
  });

  test('rendered relative paths are checked, and a write through a planted symlink is refused', async (t) => {
    for (const bad of ['../x', 'nodes/../../x', '/etc/passwd', 'nodes//x', 'nodes/a b/x', 'nodes/a\nb']) assert.equal(isSafeRelativePath(bad), false, bad);
    assert.equal(isSafeRelativePath('nodes/w1/etc/kubernetes/manifests/nginx-proxy.yml'), true);
    const dir = await mkdtemp(join(tmpdir(), 'kw-plan-under-'));
    t.after(() => rm(dir, { recursive: true, force: true }));
    const outside = await mkdtemp(join(tmpdir(), 'kw-plan-outside-'));
    t.after(() => rm(outside, { recursive: true, force: true }));
    await symlink(outside, join(dir, 'nodes'));
    await assert.rejects(pathUnder(dir, 'nodes/w1/etc/nginx/nginx.conf'), /leads outside the directory/);
    await assert.rejects(pathUnder(dir, '../escaped'), /not inside the directory/);
    assert.equal(await pathUnder(dir, 'cluster/endpoints.txt'), join(dir, 'cluster/endpoints.txt'));
    await assert.rejects(stat(join(outside, 'w1')), 'nothing was created outside');
  });
});
