// One contract, two targets: every call kubeward's OpenStack client shares with the real Keystone,
// Neutron and Nova must behave the same on the emulator (status codes, fault types, ordering, limits).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { OpenStackError } from '../../src/clients/openstack/openstack-error.ts';
import { createOpenStackClient } from '../../src/clients/openstack/create-openstack-client.ts';
import { createSilentLogger } from '../../src/base/logger.ts';
import type { ExtraRoute } from '../../src/clients/openstack/openstack-types.ts';
import { waitFor } from '../../testkit/wait-for.ts';
import { contractTargets, type TargetSession } from './contract-targets.ts';
import { ContractFixture, openRoutedNetwork, portPool, type RoutedNetwork, type TestNet } from './contract-fixture.ts';
import type { AddressRange } from '../../testkit/openstack/ip-math.ts';

async function rejectsWith(p: Promise<unknown>, status: number, faultType: string | undefined, message?: RegExp): Promise<OpenStackError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof OpenStackError, `expected an OpenStackError, got ${String(err)}`);
    assert.equal(err.status, status, err.message);
    if (faultType !== undefined) assert.equal(err.faultType, faultType, err.message);
    if (message) assert.match(err.details.faultMessage ?? '', message);
    assert.match(err.requestId ?? '', /^req-[0-9a-f-]{36}$/, 'every error carries the request ID');
    return err;
  }
  assert.fail(`expected HTTP ${status} ${faultType ?? ''}`);
}

const routes = (n: number, nexthop: string, third = 100): ExtraRoute[] =>
  Array.from({ length: n }, (_, i) => ({ destination: `172.${third}.${i}.0/24`, nexthop }));
const hostIn = (net: TestNet, last: number) => net.cidr.replace(/\.0\/24$/, `.${last}`);

for (const target of contractTargets(process.env)) {
  describe(`OpenStack contract: ${target.name}`, { skip: target.skip }, () => {
    let env: RoutedNetwork | undefined;
    let s: TargetSession;
    let fx: ContractFixture;
    let net: TestNet;
    let router: string;

    before(async () => {
      env = await openRoutedNetwork(target, '10.77.0.0/24');
      ({ s, fx, net, routerId: router } = env);
    });
    after(() => env?.close());

    describe('Keystone', () => {
      test('a password token is project-scoped, carries roles and a catalog with the network service', async () => {
        const info = await s.admin.keystone.tokenInfo();
        assert.equal(info.projectName, 'admin');
        assert.ok(info.roles.includes('admin') && info.roles.includes('member') && info.roles.includes('reader'), `roles: ${info.roles}`);
        assert.ok(
          info.catalog.some((e) => e.type === 'network' && e.endpoints.some((ep) => ep.interface === 'public' && (ep.region_id ?? ep.region) === 'RegionOne')),
        );
        assert.ok(info.expiresAtMs > Date.now());
      });

      test("a wrong password is a 401 Unauthorized with Keystone's error body", async () => {
        const c = createOpenStackClient({
          config: { ...s.adminConfig, auth: { ...s.adminConfig.auth, password: 'wrong' } as typeof s.adminConfig.auth },
          log: createSilentLogger(),
        });
        const err = await rejectsWith(c.keystone.tokenInfo(), 401, 'Unauthorized', /requires authentication/);
        assert.doesNotMatch(err.message, /wrong/, 'the password is not in the error');
      });

      test("Neutron rejects a bad token with 401 in Keystone's shape, not NeutronError", async () => {
        const base = await s.admin.session.endpoint('network');
        const res = await fetch(`${base}/routers`, { headers: { 'x-auth-token': 'not-a-token' } });
        assert.equal(res.status, 401);
        const body = (await res.json()) as { error?: { code: number; title: string } };
        assert.deepEqual([body.error?.code, body.error?.title], [401, 'Unauthorized']);
        assert.match(res.headers.get('www-authenticate') ?? '', /^Keystone uri=/);
      });

      test('an application credential authenticates by ID, and by name with its user; a wrong secret is 401', async () => {
        const info = await s.admin.keystone.tokenInfo();
        const name = `${fx.prefix}-appcred`;
        const created = await fx.call<{ application_credential: { id: string; secret: string } }>('identity', {
          method: 'POST',
          path: `/users/${info.userId}/application_credentials`,
          body: { application_credential: { name } },
        });
        const cred = created.application_credential;
        try {
          const viaId = createOpenStackClient({
            config: { ...s.adminConfig, auth: { type: 'applicationCredential', id: cred.id, secret: cred.secret } },
            log: createSilentLogger(),
          });
          const tok = await viaId.keystone.tokenInfo();
          assert.deepEqual([tok.projectId, tok.userId], [info.projectId, info.userId]);
          assert.ok(tok.catalog.some((e) => e.type === 'network'));
          assert.ok((await viaId.neutron.listExtensions()).length > 0);
          const byName = { type: 'applicationCredential' as const, name, secret: cred.secret, username: 'admin', userDomainName: 'Default' };
          assert.equal(
            (await createOpenStackClient({ config: { ...s.adminConfig, auth: byName }, log: createSilentLogger() }).keystone.tokenInfo()).projectId,
            info.projectId,
          );
          const wrong = createOpenStackClient({
            config: { ...s.adminConfig, auth: { type: 'applicationCredential', id: cred.id, secret: 'not-the-secret' } },
            log: createSilentLogger(),
          });
          await rejectsWith(wrong.keystone.tokenInfo(), 401, 'Unauthorized');
        } finally {
          await s.admin.http.request('identity', { method: 'DELETE', path: `/users/${info.userId}/application_credentials/${cred.id}` });
        }
      });

      test('role names, the Default domain and the admin user can be looked up', async () => {
        const roles = (await s.admin.keystone.listRoles()).map((r) => r.name);
        assert.ok(
          ['admin', 'member', 'reader'].every((r) => roles.includes(r)),
          roles.join(),
        );
        const domain = await s.admin.keystone.findDomain('Default');
        assert.equal(domain?.id, 'default');
        const user = await s.admin.keystone.findUser('admin', 'default');
        const info = await s.admin.keystone.tokenInfo();
        assert.equal(user?.id, info.userId);
        const assigned = (await s.admin.keystone.listProjectUserRoles(info.projectId, info.userId)).map((r) => r.name);
        assert.ok(assigned.includes('admin'));
        assert.equal(await s.admin.keystone.findUser('no-such-user-kw', 'default'), undefined);
      });
    });

    describe('Neutron routers and extra routes', () => {
      test('the extensions the route code relies on are present', async () => {
        const aliases = (await s.admin.neutron.listExtensions()).map((e) => e.alias);
        for (const a of ['router', 'extraroute', 'extraroute-atomic', 'revision-if-match', 'allowed-address-pairs', 'security-group', 'port-security']) {
          assert.ok(aliases.includes(a), `missing ${a}`);
        }
      });

      test('a new router starts at revision 1 and attaching an interface bumps it', async () => {
        const other = await fx.network('10.78.0.0/24');
        const created = await fx.call<{ router: { id: string; revision_number: number; routes: unknown[] } }>('network', {
          method: 'POST',
          path: '/routers',
          body: { router: { name: `${fx.prefix}-r2` } },
        });
        assert.deepEqual([created.router.revision_number, created.router.routes], [1, []]);
        await fx.call('network', { method: 'PUT', path: `/routers/${created.router.id}/add_router_interface`, body: { subnet_id: other.subnetId } });
        assert.equal((await s.admin.neutron.getRouter(created.router.id))!.revision_number, 2);
        await fx.call('network', { method: 'PUT', path: `/routers/${created.router.id}/remove_router_interface`, body: { subnet_id: other.subnetId } });
        await fx.call('network', { method: 'DELETE', path: `/routers/${created.router.id}` });
      });

      test('a full-list update replaces the routes, returns them sorted by destination and bumps revision_number by one', async () => {
        const before = (await s.admin.neutron.getRouter(router))!;
        const given = [
          { destination: '172.100.10.0/24', nexthop: hostIn(net, 5) },
          { destination: '172.100.1.0/24', nexthop: hostIn(net, 5) },
          { destination: '172.100.0.0/24', nexthop: hostIn(net, 6) },
        ];
        const after1 = await s.admin.neutron.updateRoutes(router, given);
        assert.deepEqual(
          after1.routes.map((r) => r.destination),
          ['172.100.0.0/24', '172.100.1.0/24', '172.100.10.0/24'],
        );
        assert.equal(after1.revision_number, before.revision_number + 1);
        const read = (await s.admin.neutron.getRouter(router))!;
        assert.deepEqual(read.routes, after1.routes);
        const cleared = await s.admin.neutron.updateRoutes(router, []);
        assert.deepEqual(cleared.routes, []);
      });

      test('exactly max_routes routes fit; one more is 400 RoutesExhausted and changes nothing', async () => {
        const full = await s.admin.neutron.updateRoutes(router, routes(s.maxRoutes, hostIn(net, 5)));
        assert.equal(full.routes.length, s.maxRoutes);
        await rejectsWith(
          s.admin.neutron.updateRoutes(router, routes(s.maxRoutes + 1, hostIn(net, 5))),
          400,
          'RoutesExhausted',
          new RegExp(`exceeds the maximum ${s.maxRoutes}\\.`),
        );
        await rejectsWith(s.admin.neutron.addExtraRoutes(router, [{ destination: '10.200.0.0/16', nexthop: hostIn(net, 5) }]), 400, 'RoutesExhausted');
        assert.equal((await s.admin.neutron.getRouter(router))!.routes.length, s.maxRoutes);
        await s.admin.neutron.updateRoutes(router, []);
      });

      test("next hops must be on an attached subnet and not the router's own address (400 InvalidRoutes)", async () => {
        await rejectsWith(
          s.admin.neutron.updateRoutes(router, [{ destination: '192.168.10.0/24', nexthop: '10.9.9.9' }]),
          400,
          'InvalidRoutes',
          /the nexthop is not connected with router/,
        );
        await rejectsWith(
          s.admin.neutron.updateRoutes(router, [{ destination: '192.168.10.0/24', nexthop: net.gateway }]),
          400,
          'InvalidRoutes',
          /the nexthop is used by router/,
        );
        await rejectsWith(s.admin.neutron.addExtraRoutes(router, [{ destination: '192.168.10.0/24', nexthop: '10.9.9.9' }]), 400, 'InvalidRoutes');
      });

      test('malformed destinations and duplicate routes are 400 HTTPBadRequest; ECMP routes are accepted', async () => {
        const nh = hostIn(net, 5);
        await rejectsWith(
          s.admin.neutron.updateRoutes(router, [{ destination: '192.168.10.0/33', nexthop: nh }]),
          400,
          'HTTPBadRequest',
          /is not a valid CIDR/,
        );
        await rejectsWith(
          s.admin.neutron.updateRoutes(router, [{ destination: '192.168.10.7/24', nexthop: nh }]),
          400,
          'HTTPBadRequest',
          /'192\.168\.10\.0\/24' is recommended/,
        );
        await rejectsWith(
          s.admin.neutron.updateRoutes(router, [
            { destination: '192.168.10.0/24', nexthop: nh },
            { destination: '192.168.10.0/24', nexthop: nh },
          ]),
          400,
          'HTTPBadRequest',
          /Duplicate hostroute/,
        );
        const ecmp = await s.admin.neutron.updateRoutes(router, [
          { destination: '192.168.10.0/24', nexthop: nh },
          { destination: '192.168.10.0/24', nexthop: hostIn(net, 6) },
        ]);
        assert.equal(ecmp.routes.length, 2);
        const raw = s.admin.http.request('network', {
          method: 'PUT',
          path: `/routers/${router}`,
          body: { router: { routes: [{ destination: '192.168.11.0/24', nexthop: nh, extra: 1 }] } },
        });
        await rejectsWith(raw, 400, 'HTTPBadRequest', /Validation of dictionary's keys failed/);
        await s.admin.neutron.updateRoutes(router, []);
      });

      test('add_extraroutes and remove_extraroutes are atomic, idempotent and return the whole list', async () => {
        const nh = hostIn(net, 5);
        const start = await s.admin.neutron.updateRoutes(router, [{ destination: '172.101.0.0/24', nexthop: nh }]);
        const added = await s.admin.neutron.addExtraRoutes(router, [{ destination: '172.101.1.0/24', nexthop: nh }]);
        assert.deepEqual(
          added.routes.map((r) => r.destination),
          ['172.101.0.0/24', '172.101.1.0/24'],
        );
        assert.equal(added.revision_number, start.revision_number + 1);
        const again = await s.admin.neutron.addExtraRoutes(router, [{ destination: '172.101.1.0/24', nexthop: nh }]);
        assert.equal(again.revision_number, added.revision_number, 'adding a present route is a no-op');
        const noop = await s.admin.neutron.removeExtraRoutes(router, [{ destination: '172.199.0.0/24', nexthop: nh }]);
        assert.equal(noop.routes.length, 2);
        const removed = await s.admin.neutron.removeExtraRoutes(router, [{ destination: '172.101.0.0/24', nexthop: nh }]);
        assert.deepEqual(removed.routes, [{ destination: '172.101.1.0/24', nexthop: nh }]);
        await s.admin.neutron.updateRoutes(router, []);
      });

      test('a body without the router wrapper, or a removal without nexthop, is a 500, as upstream does', async () => {
        const raw = s.admin.http.request('network', { method: 'PUT', path: `/routers/${router}/add_extraroutes`, body: { routes: [] } });
        await rejectsWith(raw, 500, 'HTTPInternalServerError');
        const noNexthop = s.admin.http.request('network', {
          method: 'PUT',
          path: `/routers/${router}/remove_extraroutes`,
          body: { router: { routes: [{ destination: '172.104.0.0/24' }] } },
        });
        await rejectsWith(noNexthop, 500, 'HTTPInternalServerError');
      });

      test('If-Match with a stale revision is 412 RevisionNumberConstraintFailed (E_CONFLICT) when the update changes something', async () => {
        const r = (await s.admin.neutron.getRouter(router))!;
        const change = [{ destination: '172.102.0.0/24', nexthop: hostIn(net, 5) }];
        const err = await rejectsWith(
          s.admin.neutron.updateRoutes(router, change, { ifRevision: r.revision_number - 1 }),
          412,
          'RevisionNumberConstraintFailed',
          new RegExp(`Constrained to ${r.revision_number - 1}, but current revision is ${r.revision_number}`),
        );
        assert.equal(err.code, 'E_CONFLICT');
        const unchanged = await s.admin.neutron.updateRoutes(router, r.routes, { ifRevision: r.revision_number - 1 });
        assert.equal(unchanged.revision_number, r.revision_number, 'a stale If-Match on an update that changes nothing is not checked');
        const ok = await s.admin.neutron.updateRoutes(router, change, { ifRevision: r.revision_number });
        assert.equal(ok.revision_number, r.revision_number + 1);
        await s.admin.neutron.updateRoutes(router, []);
      });

      test('an unknown router is absent on GET and 404 RouterNotFound on update', async () => {
        const missing = '00000000-0000-4000-8000-00000000beef';
        assert.equal(await s.admin.neutron.getRouter(missing), undefined);
        await rejectsWith(s.admin.neutron.updateRoutes(missing, []), 404, 'RouterNotFound');
        await rejectsWith(s.admin.neutron.addExtraRoutes(missing, []), 404, 'RouterNotFound');
      });

      test("another project's router is 404 for a member (not 403)", async () => {
        assert.equal(await s.demo.neutron.getRouter(router), undefined);
        await rejectsWith(s.demo.neutron.updateRoutes(router, []), 404, 'RouterNotFound');
      });

      test('an interface whose subnet a route uses cannot be removed (409 RouterInterfaceInUseByRoute)', async () => {
        await s.admin.neutron.updateRoutes(router, [{ destination: '172.103.0.0/24', nexthop: hostIn(net, 5) }]);
        const raw = s.admin.http.request('network', { method: 'PUT', path: `/routers/${router}/remove_router_interface`, body: { subnet_id: net.subnetId } });
        await rejectsWith(raw, 409, 'RouterInterfaceInUseByRoute');
        await s.admin.neutron.updateRoutes(router, []);
      });
    });

    describe('Neutron ports', () => {
      test("allowed_address_pairs take CIDRs, get the port's MAC filled in, and are found by fixed IP", async () => {
        const port = await fx.port(net.networkId, {
          allowed_address_pairs: [{ ip_address: '10.77.0.100' }, { ip_address: '10.1.0.0/24', mac_address: 'fa:16:3e:00:00:01' }],
        });
        const got = (await s.admin.neutron.getPort(port.id))!;
        const pairs = [...got.allowed_address_pairs].sort((a, b) => a.ip_address.localeCompare(b.ip_address));
        assert.deepEqual(pairs, [
          { ip_address: '10.1.0.0/24', mac_address: 'fa:16:3e:00:00:01' },
          { ip_address: '10.77.0.100', mac_address: port.mac_address },
        ]);
        const ip = got.fixed_ips[0]!.ip_address;
        const found = await s.admin.neutron.listPorts({ fixedIp: ip, networkId: net.networkId });
        assert.deepEqual(
          found.map((p) => p.id),
          [port.id],
        );
        const updated = await s.admin.neutron.updatePort(port.id, { allowed_address_pairs: [{ ip_address: '10.2.0.0/24' }] });
        assert.deepEqual(
          updated.allowed_address_pairs.map((p) => p.ip_address),
          ['10.2.0.0/24'],
          'an update replaces the whole list',
        );
        assert.equal(updated.revision_number, got.revision_number + 1);
      });

      test("too many, duplicate or malformed pairs are refused with Neutron's fault types", async () => {
        const port = await fx.port(net.networkId);
        const eleven = Array.from({ length: 11 }, (_, i) => ({ ip_address: `10.3.0.${i + 1}` }));
        await rejectsWith(s.admin.neutron.updatePort(port.id, { allowed_address_pairs: eleven }), 400, 'AllowedAddressPairExhausted', /exceeds the maximum 10/);
        await rejectsWith(
          s.admin.neutron.updatePort(port.id, { allowed_address_pairs: [{ ip_address: '10.3.0.1' }, { ip_address: '10.3.0.1' }] }),
          400,
          'DuplicateAddressPairInRequest',
        );
        await rejectsWith(
          s.admin.neutron.updatePort(port.id, { allowed_address_pairs: [{ ip_address: '10.0.0.300' }] }),
          400,
          'HTTPBadRequest',
          /is not a valid IP address/,
        );
      });

      test('port security cannot be disabled while pairs exist (409); it can together with empty pairs and groups', async () => {
        const port = await fx.port(net.networkId, { allowed_address_pairs: [{ ip_address: '10.77.0.101' }] });
        await rejectsWith(s.admin.neutron.updatePort(port.id, { port_security_enabled: false }), 409, 'AddressPairAndPortSecurityRequired');
        const off = await s.admin.neutron.updatePort(port.id, { port_security_enabled: false, allowed_address_pairs: [], security_groups: [] });
        assert.equal(off.port_security_enabled, false);
        await rejectsWith(
          s.admin.neutron.updatePort(port.id, { allowed_address_pairs: [{ ip_address: '10.77.0.102' }] }),
          409,
          'AddressPairAndPortSecurityRequired',
        );
      });

      test("ports get addresses from the subnet's allocation pool, never the gateway's; malformed, reversed, outlying, overlapping and gateway pools are refused", async () => {
        const sub = await fx.call<{ subnet: { allocation_pools: AddressRange[] } }>('network', {
          method: 'GET',
          path: `/subnets/${net.subnetId}`,
        });
        assert.deepEqual(sub.subnet.allocation_pools, [portPool(net.cidr)]);
        const ports = await Promise.all([1, 2, 3, 4].map(() => fx.port(net.networkId)));
        for (const p of ports) {
          const ip = Number(String((p.fixed_ips as { ip_address: string }[])[0]!.ip_address).split('.')[3]);
          assert.ok(ip >= 100 && ip <= 199, `address .${ip} is outside the pool`);
        }
        const other = await fx.call<{ network: { id: string } }>('network', {
          method: 'POST',
          path: '/networks',
          body: { network: { name: `${fx.prefix}-pools` } },
        });
        try {
          const subnet = (...pools: AddressRange[]) =>
            fx.call('network', {
              method: 'POST',
              path: '/subnets',
              body: { subnet: { network_id: other.network.id, cidr: '10.79.0.0/24', ip_version: 4, allocation_pools: pools } },
            });
          await rejectsWith(subnet({ start: '10.79.0.300', end: '10.79.0.9' }), 400, 'HTTPBadRequest', /'10\.79\.0\.300' is not a valid IP address/);
          await rejectsWith(subnet({ start: '10.79.0.200', end: '10.79.0.100' }), 400, 'InvalidAllocationPool');
          await rejectsWith(subnet({ start: '10.79.0.100', end: '10.79.1.5' }), 400, 'OutOfBoundsAllocationPool', /spans beyond the subnet cidr/);
          await rejectsWith(subnet({ start: '10.79.0.10', end: '10.79.0.20' }, { start: '10.79.0.20', end: '10.79.0.30' }), 409, 'OverlappingAllocationPools');
          await rejectsWith(subnet({ start: '10.79.0.1', end: '10.79.0.9' }), 409, 'GatewayConflictWithAllocationPools');
        } finally {
          await fx.call('network', { method: 'DELETE', path: `/networks/${other.network.id}` });
        }
      });

      test('Neutron pages with limit and marker through ports_links, and the client follows them', async () => {
        await fx.port(net.networkId);
        await fx.port(net.networkId);
        const all = await s.admin.neutron.listPorts({ networkId: net.networkId });
        const paged = await s.admin.http.listAll<{ id: string }>('network', '/ports', 'ports', { network_id: net.networkId }, { pageSize: 1 });
        assert.ok(all.length >= 3);
        assert.deepEqual(paged.map((p) => p.id).sort(), all.map((p) => p.id).sort());
      });
    });

    describe('Neutron security groups', () => {
      test('a new group has two egress rules and is stateful; it is found by name', async () => {
        const g = await fx.securityGroup('base');
        const rules = g.security_group_rules as { direction: string; ethertype: string }[];
        assert.deepEqual(rules.map((r) => `${r.direction}/${r.ethertype}`).sort(), ['egress/IPv4', 'egress/IPv6']);
        assert.equal(g.stateful, true);
        const found = await s.admin.neutron.listSecurityGroups({ name: g.name });
        assert.deepEqual(
          found.map((x) => x.id),
          [g.id],
        );
      });

      test('rules are created once (409 SecurityGroupRuleExists), validated, normalized, and deleted once', async () => {
        const g = await fx.securityGroup('rules');
        const rule = await s.admin.neutron.createSecurityGroupRule({
          security_group_id: g.id,
          direction: 'ingress',
          ethertype: 'IPv4',
          protocol: 'tcp',
          remote_ip_prefix: '10.1.2.3/8',
        });
        assert.deepEqual(
          [rule.direction, rule.ethertype, rule.protocol, rule.remote_ip_prefix, rule.port_range_min],
          ['ingress', 'IPv4', 'tcp', '10.1.2.3/8', null],
        );
        assert.equal((rule as unknown as { normalized_cidr: string }).normalized_cidr, '10.0.0.0/8');
        await rejectsWith(
          s.admin.neutron.createSecurityGroupRule({
            security_group_id: g.id,
            direction: 'ingress',
            ethertype: 'IPv4',
            protocol: 'tcp',
            remote_ip_prefix: '10.1.2.3/8',
          }),
          409,
          'SecurityGroupRuleExists',
          new RegExp(rule.id),
        );
        await rejectsWith(
          s.admin.neutron.createSecurityGroupRule({ security_group_id: g.id, direction: 'ingress', protocol: 'tcp', port_range_min: 90, port_range_max: 80 }),
          400,
          'SecurityGroupInvalidPortRange',
        );
        await rejectsWith(
          s.admin.neutron.createSecurityGroupRule({ security_group_id: g.id, direction: 'ingress', ethertype: 'IPv6', remote_ip_prefix: '10.0.0.0/8' }),
          400,
          'SecurityGroupRuleParameterConflict',
        );
        const withRule = (await s.admin.neutron.getSecurityGroup(g.id))!;
        assert.ok(withRule.security_group_rules.some((r) => r.id === rule.id));
        assert.equal(await s.admin.neutron.deleteSecurityGroupRule(rule.id), 'deleted');
        assert.equal(await s.admin.neutron.deleteSecurityGroupRule(rule.id), 'absent');
      });

      test('a group used by a port cannot be deleted (409 SecurityGroupInUse)', async () => {
        const g = await fx.securityGroup('used');
        await fx.port(net.networkId, { security_groups: [g.id] });
        const raw = s.admin.http.request('network', { method: 'DELETE', path: `/security-groups/${g.id}` });
        await rejectsWith(raw, 409, 'SecurityGroupInUse');
      });
    });

    describe('Nova', () => {
      let serverA: string;
      let serverB: string;

      before(async () => {
        if (!s.hasNova) return;
        [serverA, serverB] = await Promise.all([fx.server('a', net.networkId), fx.server('b', net.networkId)]);
      });

      test('servers/detail shows states, addresses on the network, security group names and created', async (t) => {
        if (!s.hasNova) return t.skip('Nova is not in the catalog (start setup.sh with OS_IT_NOVA=1)');
        const [srv] = await s.admin.nova.listServers({ name: `^${fx.prefix}-a$` });
        assert.equal(srv?.id, serverA);
        assert.equal(srv!.status, 'ACTIVE');
        assert.equal(srv!['OS-EXT-STS:vm_state'], 'active');
        assert.equal(srv!['OS-EXT-STS:task_state'], null);
        assert.equal(srv!['OS-EXT-STS:power_state'], 1);
        const addrs = Object.values(srv!.addresses).flat();
        assert.equal(addrs.length, 1);
        assert.match(addrs[0]!.addr, /^10\.77\.0\.\d+$/);
        assert.equal(addrs[0]!['OS-EXT-IPS:type'], 'fixed');
        assert.deepEqual(srv!.security_groups, [{ name: 'default' }]);
        assert.ok(Math.abs(Date.parse(srv!.created) - Date.now()) < 10 * 60_000);
        assert.deepEqual(srv!.tags, []);
      });

      test('the client pages through servers with limit and markers', async (t) => {
        if (!s.hasNova) return t.skip('Nova is not in the catalog');
        const paged = createOpenStackClient({ config: s.adminConfig, log: createSilentLogger(), pageSize: 1 });
        const ids = (await paged.nova.listServers({ name: `^${fx.prefix}-` })).map((x) => x.id).sort();
        assert.deepEqual(ids, [serverA, serverB].sort());
      });

      test('tags are added, listed, shown in detail and deleted', async (t) => {
        if (!s.hasNova) return t.skip('Nova is not in the catalog');
        await s.admin.nova.addTag(serverA, 'kubeward');
        await s.admin.nova.addTag(serverA, 'kubeward:cluster=c1');
        await s.admin.nova.addTag(serverA, 'kubeward');
        assert.deepEqual((await s.admin.nova.listTags(serverA)).sort(), ['kubeward', 'kubeward:cluster=c1']);
        assert.deepEqual((await s.admin.nova.getServer(serverA))!.tags!.sort(), ['kubeward', 'kubeward:cluster=c1']);
        const tagged = await s.admin.nova.listServers({ tags: ['kubeward:cluster=c1'] });
        assert.deepEqual(
          tagged.map((x) => x.id),
          [serverA],
        );
        await s.admin.nova.deleteTag(serverA, 'kubeward');
        assert.deepEqual(await s.admin.nova.listTags(serverA), ['kubeward:cluster=c1']);
        await rejectsWith(s.admin.nova.deleteTag(serverA, 'kubeward'), 404, 'itemNotFound');
      });

      test('metadata merges keep other keys', async (t) => {
        if (!s.hasNova) return t.skip('Nova is not in the catalog');
        await s.admin.nova.mergeMetadata(serverA, { provisioner: 'kubeward', a: '1' });
        const md = await s.admin.nova.mergeMetadata(serverA, { a: '2' });
        assert.deepEqual(md, { provisioner: 'kubeward', a: '2' });
        assert.deepEqual((await s.admin.nova.getServer(serverA))!.metadata, md);
      });

      test("addSecurityGroup adds a group by name to the server's ports", async (t) => {
        if (!s.hasNova) return t.skip('Nova is not in the catalog');
        const g = await fx.securityGroup('nova');
        await s.admin.nova.addSecurityGroup(serverB, g.name);
        const names = (await s.admin.nova.getServer(serverB))!.security_groups!.map((x) => x.name).sort();
        assert.deepEqual(names, ['default', g.name].sort());
        await rejectsWith(s.admin.nova.addSecurityGroup(serverB, g.name), 400, 'badRequest', /Duplicate items in the list/);
        await rejectsWith(s.admin.nova.addSecurityGroup(serverB, `${fx.prefix}-no-such-group`), 404, 'itemNotFound', /is not found for project/);
        const other = await fx.securityGroup('other');
        const remove = s.admin.http.request('compute', {
          method: 'POST',
          path: `/servers/${serverB}/action`,
          body: { removeSecurityGroup: { name: other.name } },
        });
        await rejectsWith(remove, 404, 'itemNotFound', /not associated with the instance/);
      });

      test('a soft reboot shows REBOOT, refuses a second soft one with 409, and ends ACTIVE', async (t) => {
        if (!s.hasNova) return t.skip('Nova is not in the catalog');
        await s.admin.nova.reboot(serverB, 'SOFT');
        const during = (await s.admin.nova.getServer(serverB))!;
        if (during.status === 'REBOOT') {
          assert.equal(during['OS-EXT-STS:task_state'], 'rebooting');
          await rejectsWith(s.admin.nova.reboot(serverB, 'SOFT'), 409, 'conflictingRequest', /while it is in task_state rebooting/);
        }
        await waitFor(async () => (await s.admin.nova.getServer(serverB))?.status === 'ACTIVE', {
          timeoutMs: 60_000,
          intervalMs: 200,
          what: 'ACTIVE after reboot',
        });
        await s.admin.nova.reboot(serverB, 'HARD');
        const hard = (await s.admin.nova.getServer(serverB))!;
        if (hard.status === 'HARD_REBOOT') await rejectsWith(s.admin.nova.reboot(serverB, 'SOFT'), 409, 'conflictingRequest', /task_state rebooting_hard/);
        await waitFor(async () => (await s.admin.nova.getServer(serverB))?.status === 'ACTIVE', {
          timeoutMs: 60_000,
          intervalMs: 200,
          what: 'ACTIVE after hard reboot',
        });
        const bogus = s.admin.http.request('compute', { method: 'POST', path: `/servers/${serverB}/action`, body: { reboot: { type: 'BOGUS' } } });
        await rejectsWith(bogus, 400, 'badRequest', /'BOGUS' is not one of/);
      });

      test('unknown servers are absent; a microversion above the maximum is 406', async (t) => {
        if (!s.hasNova) return t.skip('Nova is not in the catalog');
        assert.equal(await s.admin.nova.getServer('00000000-0000-4000-8000-00000000beef'), undefined);
        await rejectsWith(s.admin.nova.reboot('00000000-0000-4000-8000-00000000beef', 'HARD'), 404, 'itemNotFound', /could not be found/);
        const raw = s.admin.http.request('compute', {
          method: 'GET',
          path: '/servers',
          headers: { 'openstack-api-version': 'compute 2.999', 'x-openstack-nova-api-version': '2.999' },
        });
        await rejectsWith(raw, 406, 'computeFault', /not supported by the API/);
        const marker = s.admin.http.request('compute', { method: 'GET', path: '/servers/detail', query: { marker: 'no-such-marker' } });
        await rejectsWith(marker, 400, 'badRequest', /marker \[no-such-marker\] not found/);
      });

      test('a deleted server is gone after a while; deleting it again finds it absent', async (t) => {
        if (!s.hasNova) return t.skip('Nova is not in the catalog');
        const id = await fx.server('c', net.networkId);
        assert.equal(await s.admin.nova.deleteServer(id), 'deleted');
        const deleting = await s.admin.nova.getServer(id);
        if (deleting) {
          assert.deepEqual([deleting.status, deleting['OS-EXT-STS:task_state']], ['ACTIVE', 'deleting']);
          await rejectsWith(s.admin.nova.reboot(id, 'HARD'), 409, 'conflictingRequest', /task_state deleting/);
        }
        await waitFor(async () => (await s.admin.nova.getServer(id)) === undefined, { timeoutMs: 60_000, intervalMs: 200, what: 'server gone' });
        assert.equal(await s.admin.nova.deleteServer(id), 'absent');
      });
    });
  });
}
