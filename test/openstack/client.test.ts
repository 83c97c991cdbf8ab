// The OpenStack client against the emulator: token renewal, paging, retries and their limits, request
// IDs in errors, secrets kept out of logs, application credentials, and clouds.yaml files on disk.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/base/clock.ts';
import { createLogger, createSilentLogger } from '../../src/base/logger.ts';
import { loadCloudConfig, resolveCloudConfig, type CloudConfig } from '../../src/clients/openstack/cloud-config.ts';
import { createOpenStackClient, type OpenStackClientOptions } from '../../src/clients/openstack/create-openstack-client.ts';
import { OpenStackError } from '../../src/clients/openstack/openstack-error.ts';
import { OpenStackEmulator, type EmulatorOptions } from '../../testkit/openstack/openstack-emulator.ts';
import { waitFor } from '../../testkit/wait-for.ts';

interface Setup {
  emu: OpenStackEmulator;
  config: CloudConfig;
  logs: string[];
  client: ReturnType<typeof createOpenStackClient>;
  count(pathPart: string, method?: string): number;
}

async function setup(
  t: { after(fn: () => Promise<void>): void },
  emuOpts: EmulatorOptions = {},
  clientOpts: Partial<OpenStackClientOptions> = {},
): Promise<Setup> {
  const emu = new OpenStackEmulator(emuOpts);
  await emu.start();
  t.after(() => emu.close());
  const config = resolveCloudConfig({
    env: { OS_AUTH_URL: emu.authUrl, OS_USERNAME: 'admin', OS_PASSWORD: 'admin', OS_PROJECT_NAME: 'admin', OS_USER_DOMAIN_NAME: 'Default' },
  });
  const logs: string[] = [];
  const log = createLogger({ format: 'json', level: 'trace', write: (l) => void logs.push(l) });
  const client = createOpenStackClient({ config, log, clock: emuOpts.clock, retry: { baseDelayMs: 5, maxDelayMs: 20, attemptTimeoutMs: 2000 }, ...clientOpts });
  const count = (part: string, method?: string) => emu.requests.filter((r) => r.path.includes(part) && (!method || r.method === method)).length;
  return { emu, config, logs, client, count };
}

test('a token is reused, then renewed before it expires (injected clock)', async (t) => {
  const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
  const s = await setup(t, { clock, timings: { tokenLifetimeMs: 20 * 60_000 } }, { renewBeforeMs: 5 * 60_000 });
  await s.client.neutron.listExtensions();
  await s.client.neutron.listExtensions();
  assert.equal(s.count('/auth/tokens', 'POST'), 1, 'one token for two calls');
  clock.advance(14 * 60_000);
  await s.client.neutron.listExtensions();
  assert.equal(s.count('/auth/tokens', 'POST'), 1, '6 min left: still the same token');
  clock.advance(2 * 60_000);
  await s.client.neutron.listExtensions();
  assert.equal(s.count('/auth/tokens', 'POST'), 2, '4 min left: renewed before the call');
  assert.equal(s.emu.requests.filter((r) => r.status === 401).length, 0, 'the service never saw an expired token');
});

test('a token the service rejects (401) is replaced once and the call succeeds', async (t) => {
  const s = await setup(t);
  await s.client.nova.listServers();
  s.emu.revokeTokens();
  await s.client.nova.listServers();
  assert.equal(s.count('/auth/tokens', 'POST'), 2);
  assert.equal(s.emu.requests.filter((r) => r.status === 401).length, 1);
});

test('concurrent calls share one authentication', async (t) => {
  const s = await setup(t);
  await Promise.all([s.client.nova.listServers(), s.client.neutron.listExtensions(), s.client.cinder.listVolumes(), s.client.octavia.listLoadBalancers()]);
  assert.equal(s.count('/auth/tokens', 'POST'), 1);
});

test('a 401 that persists after re-authentication is reported, not looped on', async (t) => {
  const s = await setup(t);
  s.emu.addFault({ service: 'network', path: '^/extensions', status: 401, type: 'Unauthorized' });
  const err = await s.client.neutron.listExtensions().catch((e: unknown) => e);
  assert.ok(err instanceof OpenStackError && err.status === 401);
  assert.equal(s.count('/network/v2.0/extensions'), 2, 'the first try and one after re-authentication');
});

test('wrong credentials fail at once with 401 and are not retried', async (t) => {
  const s = await setup(t);
  const bad = createOpenStackClient({
    config: { ...s.config, auth: { ...s.config.auth, password: 'nope' } as CloudConfig['auth'] },
    log: createSilentLogger(),
  });
  await assert.rejects(
    bad.nova.listServers(),
    (err: OpenStackError) => err.status === 401 && err.faultType === 'Unauthorized' && /authentication as cloud "envvars" failed/.test(err.message),
  );
  assert.equal(s.count('/auth/tokens', 'POST'), 1);
});

test('5xx answers are retried with backoff until one succeeds; warnings name the attempt', async (t) => {
  const s = await setup(t);
  s.emu.addFault({ service: 'compute', path: '^/servers/detail', status: 503, times: 2 });
  assert.deepEqual(await s.client.nova.listServers(), []);
  assert.equal(s.count('/servers/detail'), 3);
  const warnings = s.logs
    .map((l) => JSON.parse(l) as { msg: string; attempt?: number; status?: number })
    .filter((l) => l.msg === 'openstack request failed, retrying');
  assert.deepEqual(
    warnings.map((w) => [w.attempt, w.status]),
    [
      [1, 503],
      [2, 503],
    ],
  );
});

test('when every attempt fails the error carries the last status, fault, request ID and attempt count', async (t) => {
  const s = await setup(t);
  s.emu.addFault({ service: 'network', path: '^/routers/', status: 500, message: 'db gone away' });
  const err = await s.client.neutron.getRouter('r1').catch((e: unknown) => e);
  assert.ok(err instanceof OpenStackError);
  assert.equal(err.status, 500);
  assert.equal(err.details.attempts, 4);
  assert.equal(err.faultType, 'HTTPInternalServerError');
  const last = s.emu.requests.filter((r) => r.path.includes('/routers/r1')).at(-1)!;
  assert.equal(err.requestId, last.requestId);
  assert.match(err.message, new RegExp(`db gone away \\(request ${last.requestId}, 4 attempts\\)`));
});

test('4xx answers are never retried', async (t) => {
  const s = await setup(t);
  for (const status of [400, 404, 409, 429]) s.emu.addFault({ service: 'volume', method: 'DELETE', path: `/volumes/v${status}$`, status });
  for (const status of [400, 409, 429]) {
    await assert.rejects(s.client.cinder.deleteVolume(`v${status}`), (err: OpenStackError) => err.status === status && err.details.attempts === 1);
    assert.equal(s.count(`/volumes/v${status}`), 1, `HTTP ${status} tried once`);
  }
  assert.equal(await s.client.cinder.deleteVolume('v404'), 'absent');
});

test('a POST is retried after a 5xx only when it is safe to repeat', async (t) => {
  const s = await setup(t);
  s.emu.addFault({ service: 'compute', method: 'POST', path: '/action$', status: 502, times: 1 });
  await assert.rejects(s.client.nova.reboot('srv', 'SOFT'), (err: OpenStackError) => err.status === 502);
  assert.equal(s.count('/servers/srv/action'), 1, 'a reboot is not repeated blindly');
  s.emu.addFault({ service: 'compute', method: 'POST', path: '/metadata$', status: 502, times: 1 });
  await assert.rejects(s.client.nova.mergeMetadata('srv', { a: 'b' }), (err: OpenStackError) => err.status === 404);
  assert.equal(s.count('/servers/srv/metadata'), 2, 'a metadata merge is retried (and then finds no server)');
});

test('a hung service times out per attempt and the retry gets through', async (t) => {
  const s = await setup(t, {}, { retry: { baseDelayMs: 5, maxDelayMs: 20, attemptTimeoutMs: 300 } });
  s.emu.addFault({ service: 'load-balancer', path: '^/lbaas/loadbalancers$', hang: true, times: 1 });
  const started = performance.now();
  assert.deepEqual(await s.client.octavia.listLoadBalancers(), []);
  assert.ok(performance.now() - started >= 290);
  assert.equal(s.count('/lbaas/loadbalancers'), 2);
});

test('a service that always hangs gives E_TIMEOUT after the attempts are used up', async (t) => {
  const s = await setup(t, {}, { retry: { maxAttempts: 2, baseDelayMs: 5, maxDelayMs: 20, attemptTimeoutMs: 200 } });
  s.emu.addFault({ service: 'volume', hang: true });
  await assert.rejects(
    s.client.cinder.listVolumes(),
    (err: OpenStackError) => err.code === 'E_TIMEOUT' && err.details.attempts === 2 && /no answer within 200 ms/.test(err.message),
  );
});

test("aborting the caller's signal stops waiting and retrying at once", async (t) => {
  const s = await setup(t, {}, { retry: { maxAttempts: 10, baseDelayMs: 5_000, maxDelayMs: 5_000, attemptTimeoutMs: 5_000 } });
  s.emu.addFault({ service: 'compute', status: 503 });
  const ac = new AbortController();
  const started = performance.now();
  const call = s.client.nova.listServers({}, { signal: ac.signal });
  // Abort once the first 503 is answered: the client is then in its 5 s backoff.
  await waitFor(() => s.count('/servers', 'GET') >= 1, { what: 'the first attempt answered 503' });
  ac.abort(new Error('shutting down'));
  await assert.rejects(call, /shutting down/);
  assert.ok(performance.now() - started < 2000);
  assert.equal(s.count('/servers', 'GET'), 1, 'no retry after the abort');
});

test('paged lists are followed to the end: Nova servers, Cinder volumes, Octavia load balancers', async (t) => {
  const s = await setup(t, { maxPageSize: 4, timings: { serverBuildMs: 0, lbCreateMs: 0 } });
  const fx = s.client.http;
  const net = (await fx.request<{ network: { id: string } }>('network', { method: 'POST', path: '/networks', body: { network: { name: 'n' } } })).body.network
    .id;
  const sub = (
    await fx.request<{ subnet: { id: string } }>('network', {
      method: 'POST',
      path: '/subnets',
      body: { subnet: { network_id: net, cidr: '10.5.0.0/24', ip_version: 4 } },
    })
  ).body.subnet.id;
  for (let i = 0; i < 10; i++) {
    await fx.request('compute', {
      method: 'POST',
      path: '/servers',
      body: { server: { name: `s${i}`, flavorRef: '1', imageRef: '00000000-0000-4000-8000-000000000001', networks: [{ uuid: net }] } },
    });
    await fx.request('block-storage', { method: 'POST', path: '/volumes', body: { volume: { size: 1, name: `v${i}` } } });
    await fx.request('load-balancer', { method: 'POST', path: '/lbaas/loadbalancers', body: { loadbalancer: { name: `lb${i}`, vip_subnet_id: sub } } });
  }
  assert.equal(new Set((await s.client.nova.listServers()).map((x) => x.name)).size, 10);
  assert.equal(s.count('/servers/detail'), 3, 'pages of 4, 4, 2');
  assert.equal(new Set((await s.client.cinder.listVolumes()).map((x) => x.id)).size, 10);
  assert.equal(new Set((await s.client.octavia.listLoadBalancers()).map((x) => x.id)).size, 10);
  const small = createOpenStackClient({ config: s.config, log: createSilentLogger(), pageSize: 5 });
  assert.equal((await small.cinder.listVolumes()).length, 10, 'a page size of our own: 5, 5 and an empty last page');
});

test('errors of every service carry the request ID the service sent', async (t) => {
  const s = await setup(t);
  const calls: [string, () => Promise<unknown>][] = [
    ['nova', () => s.client.nova.reboot('missing', 'HARD')],
    ['neutron', () => s.client.neutron.updateRoutes('missing', [])],
    ['cinder', () => s.client.http.request('block-storage', { method: 'GET', path: '/volumes/missing' })],
    ['octavia', () => s.client.http.request('load-balancer', { method: 'GET', path: '/lbaas/loadbalancers/missing' })],
  ];
  for (const [service, call] of calls) {
    const err = await call().catch((e: unknown) => e);
    assert.ok(err instanceof OpenStackError, service);
    assert.equal(err.status, 404, service);
    assert.ok(
      s.emu.requests.some((r) => r.requestId === err.requestId && r.status === 404),
      `${service}: ${err.message}`,
    );
    assert.ok(err.message.includes(err.requestId!), service);
  }
});

test('passwords, application credential secrets and tokens never reach the logs', async (t) => {
  const s = await setup(t);
  s.emu.store.users.get('user-admin')!.password = 'Adm1n-Secret-Pw';
  const lines: string[] = [];
  const log = (format: 'json' | 'text') => createLogger({ format, level: 'trace', write: (l) => void lines.push(l) });
  const adminConfig: CloudConfig = { ...s.config, auth: { ...s.config.auth, password: 'Adm1n-Secret-Pw' } as CloudConfig['auth'] };
  const admin = createOpenStackClient({ config: adminConfig, log: log('json') });
  await admin.nova.listServers();
  const created = await admin.http.request<{ application_credential: { id: string; secret: string } }>('identity', {
    method: 'POST',
    path: '/users/user-admin/application_credentials',
    body: { application_credential: { name: 'kw', secret: 'app-cred-s3cret-value' } },
  });
  const cred = created.body.application_credential;
  const app = createOpenStackClient({ config: { ...s.config, auth: { type: 'applicationCredential', id: cred.id, secret: cred.secret } }, log: log('text') });
  assert.equal((await app.keystone.tokenInfo()).projectName, 'admin', 'application credential auth works');
  await app.neutron.listExtensions();
  const wrong = createOpenStackClient({
    config: { ...s.config, auth: { ...s.config.auth, password: 'wrong-password-xyz' } as CloudConfig['auth'] },
    log: log('json'),
  });
  const err = await wrong.neutron.listExtensions().catch((e: unknown) => e);
  s.emu.addFault({ service: 'network', status: 500, times: 1 });
  await admin.neutron.listExtensions();
  const all = lines.join('\n');
  assert.ok(
    lines.some((l) => l.includes('openstack request')),
    'requests are logged at debug',
  );
  assert.ok(
    lines.some((l) => l.includes('retrying')),
    'retries are logged',
  );
  const secrets = ['Adm1n-Secret-Pw', 'app-cred-s3cret-value', 'wrong-password-xyz', (await admin.session.token()).value, (await app.session.token()).value];
  for (const secret of secrets) {
    assert.ok(!all.includes(secret), `found ${secret.slice(0, 10)}… in the logs`);
    assert.ok(!String(err).includes(secret) && !JSON.stringify(err).includes(secret), 'nor in errors');
  }
});

test('clouds.yaml on disk: ./clouds.yaml is preferred to ~/.config/openstack/clouds.yaml, and the client authenticates with it', async (t) => {
  const s = await setup(t);
  const root = await mkdtemp(join(tmpdir(), 'kw-clouds-'));
  t.after(() => rm(root, { recursive: true, force: true }));
  const cwd = join(root, 'cwd');
  const home = join(root, 'home');
  await mkdir(join(home, '.config', 'openstack'), { recursive: true });
  await mkdir(cwd);
  await writeFile(join(home, '.config', 'openstack', 'clouds.yaml'), s.emu.cloudsYaml('emu', 'admin'));
  const fromHome = await loadCloudConfig({ cloudName: 'emu', where: { env: {}, cwd, homeDir: home } });
  assert.equal(fromHome.source, join(home, '.config', 'openstack', 'clouds.yaml'));
  await writeFile(join(cwd, 'clouds.yaml'), s.emu.cloudsYaml('emu', 'demo'));
  const fromCwd = await loadCloudConfig({ cloudName: undefined, where: { env: { OS_CLOUD: 'emu' }, cwd, homeDir: home } });
  assert.equal(fromCwd.source, join(cwd, 'clouds.yaml'));
  const demo = createOpenStackClient({ config: fromCwd, log: createSilentLogger() });
  assert.equal((await demo.keystone.tokenInfo()).projectName, 'demo');
  const override = join(root, 'elsewhere.yaml');
  await writeFile(override, s.emu.cloudsYaml('emu', 'admin'));
  const fromOverride = await loadCloudConfig({ cloudName: 'emu', where: { env: { OS_CLIENT_CONFIG_FILE: override }, cwd, homeDir: home } });
  assert.equal(fromOverride.source, override);
});

test('emulated delays: a volume that takes 30 s to delete, one stuck forever, an LB deleted with cascade', async (t) => {
  const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
  const s = await setup(t, { clock, timings: { volumeCreateMs: 0, lbCreateMs: 1000, lbUpdateMs: 0, lbDeleteMs: 5000 } });
  const http = s.client.http;
  const mk = async (name: string) =>
    (await http.request<{ volume: { id: string } }>('block-storage', { method: 'POST', path: '/volumes', body: { volume: { size: 1, name } } })).body.volume.id;
  const slow = await mk('slow');
  const stuck = await mk('stuck');
  s.emu.addDelay({ kind: 'volume-delete', id: slow, delayMs: 30_000 });
  s.emu.addDelay({ kind: 'volume-delete', id: stuck, stuck: true });
  assert.equal(await s.client.cinder.deleteVolume(slow), 'deleted');
  assert.equal(await s.client.cinder.deleteVolume(stuck), 'deleted');
  clock.advance(29_000);
  assert.equal((await s.client.cinder.getVolume(slow))?.status, 'deleting');
  clock.advance(1_000);
  assert.equal(await s.client.cinder.getVolume(slow), undefined);
  clock.advance(24 * 3_600_000);
  assert.equal((await s.client.cinder.getVolume(stuck))?.status, 'deleting');
  await assert.rejects(s.client.cinder.deleteVolume(stuck), (err: OpenStackError) => err.status === 400 && err.faultType === 'badRequest');

  const net = (await http.request<{ network: { id: string } }>('network', { method: 'POST', path: '/networks', body: { network: { name: 'n' } } })).body.network
    .id;
  const sub = (
    await http.request<{ subnet: { id: string } }>('network', {
      method: 'POST',
      path: '/subnets',
      body: { subnet: { network_id: net, cidr: '10.6.0.0/24', ip_version: 4 } },
    })
  ).body.subnet.id;
  const lb = (
    await http.request<{ loadbalancer: { id: string } }>('load-balancer', {
      method: 'POST',
      path: '/lbaas/loadbalancers',
      body: { loadbalancer: { name: 'kube_service_c1_ns_svc', vip_subnet_id: sub } },
    })
  ).body.loadbalancer.id;
  assert.equal((await s.client.octavia.getLoadBalancer(lb))?.provisioning_status, 'PENDING_CREATE');
  await assert.rejects(s.client.octavia.deleteLoadBalancer(lb), (err: OpenStackError) => err.status === 409 && /immutable/.test(err.message));
  clock.advance(1000);
  await http.request('load-balancer', {
    method: 'POST',
    path: '/lbaas/listeners',
    body: { listener: { loadbalancer_id: lb, protocol: 'TCP', protocol_port: 80 } },
  });
  await assert.rejects(s.client.octavia.deleteLoadBalancer(lb), (err: OpenStackError) => err.status === 400 && /it has children/.test(err.message));
  assert.equal(await s.client.octavia.deleteLoadBalancer(lb, { cascade: true }), 'deleted');
  assert.equal((await s.client.octavia.getLoadBalancer(lb))?.provisioning_status, 'PENDING_DELETE');
  clock.advance(5000);
  assert.equal(await s.client.octavia.getLoadBalancer(lb), undefined);
  assert.equal(await s.client.octavia.deleteLoadBalancer(lb, { cascade: true }), 'absent');
  assert.deepEqual(await s.client.neutron.listPorts({ networkId: net }), [], 'the VIP port went with the LB');
});

test('the admin API drives faults and delays over HTTP too', async (t) => {
  const s = await setup(t);
  const admin = (path: string, method: string, body?: unknown) =>
    fetch(`${s.emu.url}/_admin${path}`, { method, body: body === undefined ? undefined : JSON.stringify(body) });
  assert.equal((await admin('/faults', 'POST', { service: 'network', path: '^/extensions$', status: 503, times: 1 })).status, 201);
  await s.client.neutron.listExtensions();
  assert.equal(s.count('/network/v2.0/extensions'), 2);
  assert.equal((await admin('/delays', 'POST', { kind: 'volume-delete', stuck: true })).status, 201);
  assert.equal((await admin('/delays', 'POST', { kind: 'bogus' })).status, 400);
  assert.equal((await admin('/clock/advance', 'POST', { ms: 1 })).status, 400, 'the system clock cannot be advanced');
  const state = (await (await admin('/state', 'GET')).json()) as { servers: unknown[] };
  assert.deepEqual(state.servers, []);
  assert.equal((await admin('/tokens/revoke', 'POST')).status, 204);
  await s.client.neutron.listExtensions();
  assert.equal(s.count('/auth/tokens', 'POST'), 2);
});

test('floating IPs: found by port, shown as floating addresses on the server, released with the LB or deleted', async (t) => {
  const s = await setup(t, { timings: { serverBuildMs: 0, lbCreateMs: 0, lbDeleteMs: 0 } });
  const http = s.client.http;
  const post = async <T>(service: 'network' | 'compute' | 'load-balancer', path: string, body: unknown) =>
    (await http.request<T>(service, { method: 'POST', path, body })).body;
  const ext = (await post<{ network: { id: string } }>('network', '/networks', { network: { name: 'public', 'router:external': true } })).network.id;
  await post('network', '/subnets', { subnet: { network_id: ext, cidr: '203.0.113.0/24', ip_version: 4 } });
  const net = (await post<{ network: { id: string } }>('network', '/networks', { network: { name: 'nodes' } })).network.id;
  const sub = (await post<{ subnet: { id: string } }>('network', '/subnets', { subnet: { network_id: net, cidr: '10.7.0.0/24', ip_version: 4 } })).subnet.id;
  const server = (
    await post<{ server: { id: string } }>('compute', '/servers', {
      server: { name: 'n1', flavorRef: '1', imageRef: '00000000-0000-4000-8000-000000000001', networks: [{ uuid: net }] },
    })
  ).server.id;
  const [port] = await s.client.neutron.listPorts({ deviceId: server });
  const fip = (
    await post<{ floatingip: { id: string; floating_ip_address: string } }>('network', '/floatingips', {
      floatingip: { floating_network_id: ext, port_id: port!.id },
    })
  ).floatingip;
  assert.deepEqual(
    (await s.client.neutron.listFloatingIps({ portId: port!.id })).map((f) => f.id),
    [fip.id],
  );
  const addrs = Object.values((await s.client.nova.getServer(server))!.addresses).flat();
  assert.deepEqual(addrs.map((a) => a['OS-EXT-IPS:type']).sort(), ['fixed', 'floating']);
  assert.equal(await s.client.neutron.deleteFloatingIp(fip.id), 'deleted');
  assert.equal(await s.client.neutron.deleteFloatingIp(fip.id), 'absent');

  const lb = (
    await post<{ loadbalancer: { id: string; vip_port_id: string } }>('load-balancer', '/lbaas/loadbalancers', {
      loadbalancer: { name: 'svc', vip_subnet_id: sub },
    })
  ).loadbalancer;
  const lbFip = (await post<{ floatingip: { id: string } }>('network', '/floatingips', { floatingip: { floating_network_id: ext, port_id: lb.vip_port_id } }))
    .floatingip;
  assert.equal(await s.client.octavia.deleteLoadBalancer(lb.id, { cascade: true }), 'deleted');
  await s.client.octavia.getLoadBalancer(lb.id);
  const [left] = await s.client.neutron.listFloatingIps({ projectId: 'project-admin' });
  assert.deepEqual([left?.id, left?.port_id], [lbFip.id, null], 'the floating IP outlives its LB, detached: debris to report');
});

test('a caller that gives up during a shared authentication does not fail the others', async (t) => {
  const s = await setup(t);
  const slowAuth = s.emu.addFault({ service: 'identity', method: 'POST', path: '^/auth/tokens$', latencyMs: 300, times: 1 });
  const ac = new AbortController();
  const impatient = s.client.nova.listServers({}, { signal: ac.signal });
  const patient = s.client.neutron.listExtensions();
  // Give up while the shared authentication is under way (it arrived; its 300 ms latency runs).
  await waitFor(() => slowAuth.hits >= 1, { intervalMs: 5, what: 'the token request at the emulator' });
  ac.abort(new Error('gave up'));
  await assert.rejects(impatient, /gave up/);
  assert.ok((await patient).length > 0);
  assert.equal(s.count('/auth/tokens', 'POST'), 1);
});

test('the session keeps only the catalog fields it reads: every type, and only the endpoints of its interface and region', async (t) => {
  const s = await setup(t);
  const info = await s.client.keystone.tokenInfo();
  assert.ok(
    info.catalog.some((e) => e.type === 'network'),
    'the catalog still has its services',
  );
  for (const e of info.catalog) {
    assert.deepEqual(Object.keys(e).sort(), ['endpoints', 'type']);
    for (const ep of e.endpoints) {
      assert.deepEqual(
        Object.keys(ep).filter((k) => !['interface', 'url', 'region', 'region_id'].includes(k)),
        [],
      );
      assert.equal(ep.interface, s.config.interface, `${e.type} ${ep.url}`);
      if (s.config.regionName !== undefined) assert.equal(ep.region_id ?? ep.region, s.config.regionName);
    }
  }
  await s.client.neutron.listExtensions();
  // The emulator's catalog has every interface in RegionOne: a client of another region keeps no
  // endpoint, and its miss lists what the whole catalog offered.
  const elsewhere = createOpenStackClient({ config: { ...s.config, regionName: 'Nowhere' }, log: createSilentLogger() });
  const kept = await elsewhere.keystone.tokenInfo();
  assert.deepEqual(
    kept.catalog.flatMap((e) => e.endpoints),
    [],
  );
  assert.ok(
    kept.catalog.some((e) => e.type === 'load-balancer'),
    'types stay, for callers that ask whether a service exists',
  );
  await assert.rejects(
    elsewhere.neutron.listExtensions(),
    /no network endpoint with interface public in region Nowhere .*it has: .*network\/internal\/RegionOne/,
  );
});
