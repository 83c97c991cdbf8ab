// Harm 6 (docs/test-catalogue.md) at the client layer: a 200 whose body is not the list asked for (an HTML maintenance
// page, `{}`, a renamed key) and a paging marker that repeats are OpenStackBodyErrors for every
// service's lists, never an empty or "complete" list. Emulator with injected bodies; on the real
// Neutron/Nova (when KUBEWARD_OPENSTACK_REAL=1) the same checked layer still reads real lists.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createSilentLogger } from '../../src/base/logger.ts';
import { resolveCloudConfig } from '../../src/clients/openstack/cloud-config.ts';
import { createOpenStackClient } from '../../src/clients/openstack/create-openstack-client.ts';
import { OpenStackBodyError } from '../../src/clients/openstack/response-body.ts';
import { OpenStackEmulator } from '../../testkit/openstack/openstack-emulator.ts';
import { contractTargets } from './contract-targets.ts';

async function setup(t: { after(fn: () => Promise<void>): void }, opts: { pageSize?: number } = {}) {
  const emu = new OpenStackEmulator();
  await emu.start();
  t.after(() => emu.close());
  const config = resolveCloudConfig({
    env: { OS_AUTH_URL: emu.authUrl, OS_USERNAME: 'admin', OS_PASSWORD: 'admin', OS_PROJECT_NAME: 'admin', OS_USER_DOMAIN_NAME: 'Default' },
  });
  const client = createOpenStackClient({
    config,
    log: createSilentLogger(),
    retry: { baseDelayMs: 5, maxDelayMs: 20, attemptTimeoutMs: 2000 },
    pageSize: opts.pageSize,
  });
  return { emu, client };
}

const MAINTENANCE = '<!DOCTYPE html><html><head><title>Maintenance</title></head><body><h1>We are down for maintenance</h1></body></html>';

async function bodyError(p: Promise<unknown>): Promise<OpenStackBodyError> {
  try {
    const got = await p;
    assert.fail(`expected an OpenStackBodyError, got a result: ${JSON.stringify(got)}`);
  } catch (err) {
    assert.ok(err instanceof OpenStackBodyError, `expected an OpenStackBodyError, got ${String(err)}`);
    return err;
  }
}

test('a 200 with an HTML page, {} or a renamed key is an error for Cinder, Octavia, Neutron and Nova lists', async (t) => {
  const { emu, client } = await setup(t);
  const bodies: [string, string, string | undefined][] = [
    ['HTML maintenance page', MAINTENANCE, 'text/html'],
    ['empty object', '{}', undefined],
    ['renamed key', '{"items": [], "volumes_count": 0}', undefined],
  ];
  const calls: [string, { service: 'volume' | 'load-balancer' | 'network' | 'compute'; path: string }, () => Promise<unknown>][] = [
    ['cinder volumes', { service: 'volume', path: '^/[^/]+/volumes/detail' }, () => client.cinder.listVolumes()],
    ['octavia load balancers', { service: 'load-balancer', path: '^/lbaas/loadbalancers$' }, () => client.octavia.listLoadBalancers()],
    ['neutron floating IPs', { service: 'network', path: '^/floatingips$' }, () => client.neutron.listFloatingIps()],
    ['nova servers', { service: 'compute', path: '^/servers/detail' }, () => client.nova.listServers()],
  ];
  for (const [bodyName, body, contentType] of bodies) {
    for (const [callName, where, call] of calls) {
      const fault = emu.addFault({ ...where, method: 'GET', body, contentType });
      const err = await bodyError(call());
      assert.equal(err.problem, 'UnexpectedBody', `${bodyName}: ${callName}`);
      assert.equal(err.status, 200);
      emu.faults.remove(fault.id);
    }
  }
  assert.deepEqual(await client.cinder.listVolumes(), [], 'without the fault the real (empty) list reads as empty');
});

test('a 200 without the object is an error for single reads, not "absent"', async (t) => {
  const { emu, client } = await setup(t);
  emu.addFault({ service: 'network', method: 'GET', path: '^/routers/r1$', body: '{}' });
  emu.addFault({ service: 'volume', method: 'GET', path: '/volumes/v1$', body: MAINTENANCE, contentType: 'text/html' });
  await bodyError(client.neutron.getRouter('r1'));
  await bodyError(client.cinder.getVolume('v1'));
  assert.equal(await client.cinder.getVolume('v2'), undefined, 'a real 404 is still "absent"');
});

test('a next link whose marker repeats, or a service that ignores the marker, is a paging loop', async (t) => {
  const { emu, client } = await setup(t);
  const vol = (id: string) => ({ id, name: id, status: 'available', size: 1 });
  // Every page (whatever marker) answers the same volumes and links to marker=v2 again.
  const stuck = JSON.stringify({
    volumes: [vol('v1'), vol('v2')],
    volumes_links: [{ rel: 'next', href: 'http://cinder.internal/v3/p/volumes/detail?marker=v2&limit=2' }],
  });
  emu.addFault({ service: 'volume', method: 'GET', path: '/volumes/detail', body: stuck });
  const err = await bodyError(client.cinder.listVolumes());
  assert.equal(err.problem, 'PagingLoop');
  assert.ok(emu.requests.filter((r) => r.path.includes('/volumes/detail')).length <= 3, 'found after a few pages, not after 10 000');
  emu.faults.clear();

  // A service that ignores the marker: full pages without links, the same items again.
  const { emu: emu2, client: paged } = await setup(t, { pageSize: 2 });
  emu2.addFault({ service: 'compute', method: 'GET', path: '^/servers/detail', body: JSON.stringify({ servers: [{ id: 's1' }, { id: 's2' }] }) });
  const err2 = await bodyError(paged.nova.listServers());
  assert.equal(err2.problem, 'PagingLoop');
});

describe('the checked list layer on real services', () => {
  const real = contractTargets(process.env).find((x) => x.name === 'real')!;
  test('real Neutron and Nova lists (empty ones included) read through the checks', { skip: real.skip }, async () => {
    const s = await real.open();
    try {
      assert.ok(Array.isArray(await s.admin.neutron.listFloatingIps({ portId: '00000000-0000-4000-8000-00000000dead' })), 'an empty real list is a list');
      assert.ok(Array.isArray(await s.admin.neutron.listSecurityGroups()));
      assert.ok((await s.admin.neutron.listExtensions()).length > 0);
      if (s.hasNova) assert.ok(Array.isArray(await s.admin.nova.listServers()));
    } finally {
      await s.close();
    }
  });
});
