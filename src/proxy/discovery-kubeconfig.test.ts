import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { pointKubeconfigAt } from './discovery-kubeconfig.ts';

const kubeconfig = (server: string) => `
apiVersion: v1
kind: Config
clusters:
- name: other
  cluster: {server: "https://10.9.9.9:6443"}
- name: c
  cluster: {server: "${server}", certificate-authority: pki/ca.crt}
users:
- name: u
  user: {client-certificate: pki/u.crt, client-key: /abs/u.key}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
`;

test('the current cluster is pointed at the frontend; a host name stays the TLS name and relative paths become absolute', () => {
  const doc = parse(pointKubeconfigAt(kubeconfig('https://api.example.com:6443'), { host: '127.0.0.1', port: 6443 }, '/etc/kubernetes'));
  assert.deepEqual(doc.clusters[1].cluster, {
    server: 'https://127.0.0.1:6443',
    'certificate-authority': '/etc/kubernetes/pki/ca.crt',
    'tls-server-name': 'api.example.com',
  });
  assert.deepEqual(doc.users[0].user, { 'client-certificate': '/etc/kubernetes/pki/u.crt', 'client-key': '/abs/u.key' });
  assert.equal(doc.clusters[0].cluster.server, 'https://10.9.9.9:6443', 'other clusters are untouched');
});

test('an IP server gets no TLS name (the certificate must cover the frontend address), IPv6 frontends are bracketed', () => {
  const doc = parse(pointKubeconfigAt(kubeconfig('https://10.0.0.1:6443'), { host: '::1', port: 6443 }, '/x'));
  assert.equal(doc.clusters[1].cluster.server, 'https://[::1]:6443');
  assert.equal(doc.clusters[1].cluster['tls-server-name'], undefined);
});

test('a kubeconfig without a current cluster is refused', () => {
  assert.throws(() => pointKubeconfigAt('apiVersion: v1\nkind: Config\n', { host: '127.0.0.1', port: 1 }, '/'), /names no cluster/);
});
