import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UsageError } from '../../base/errors.ts';
import { loadCloudConfig, resolveCloudConfig } from './cloud-config.ts';
import { configFileCandidates, type LookupEnvironment } from './clouds-file-lookup.ts';

const where = (env: Record<string, string> = {}): LookupEnvironment => ({ env, cwd: '/work/dir', homeDir: '/home/u' });

const CLOUDS = `
clouds:
  prod:
    auth:
      auth_url: https://keystone.example:5000/v3/
      username: svc
      user_domain_name: Default
      project_name: k8s
    region_name: RegionTwo
    interface: internal
  appcred:
    auth_type: v3applicationcredential
    auth:
      auth_url: https://keystone.example:5000
      application_credential_id: ac-1
      application_credential_secret: s3cret
`;
const SECURE = `clouds:\n  prod:\n    auth:\n      password: from-secure\n`;

function reader(files: Record<string, string>) {
  return async (path: string) => files[path];
}

test('clouds.yaml is looked for where the OpenStack SDK looks, OS_CLIENT_CONFIG_FILE first', () => {
  const c = configFileCandidates('clouds', where({ OS_CLIENT_CONFIG_FILE: '/x/my.yaml' }));
  assert.deepEqual(c.slice(0, 4), ['/x/my.yaml', '/work/dir/clouds.yaml', '/work/dir/clouds.yml', '/work/dir/clouds.json']);
  const dirs = [...new Set(c.slice(1).map((p) => p.replace(/\/clouds\.\w+$/, '')))];
  assert.deepEqual(dirs, ['/work/dir', '/home/u/.config/openstack', '/etc/openstack']);
  assert.ok(configFileCandidates('clouds', where({ XDG_CONFIG_HOME: '/xdg' })).includes('/xdg/openstack/clouds.yaml'));
  assert.equal(configFileCandidates('secure', where())[0], '/work/dir/secure.yaml');
});

test('the first existing file wins: ./clouds.yaml hides ~/.config/openstack and /etc/openstack', async () => {
  const other = CLOUDS.replace('RegionTwo', 'RegionHome');
  const files = { '/home/u/.config/openstack/clouds.yaml': other, '/etc/openstack/clouds.yaml': other, '/work/dir/clouds.yaml': CLOUDS };
  const cfg = await loadCloudConfig({ cloudName: 'prod', where: where({ OS_PASSWORD: 'p' }), read: reader(files) });
  assert.equal(cfg.regionName, 'RegionTwo');
  assert.equal(cfg.source, '/work/dir/clouds.yaml');
  const fromEtc = await loadCloudConfig({ cloudName: 'prod', where: where({ OS_PASSWORD: 'p' }), read: reader({ '/etc/openstack/clouds.yaml': other }) });
  assert.equal(fromEtc.source, '/etc/openstack/clouds.yaml');
});

test('a named cloud merges secure.yaml and is overlaid by OS_* variables, as the openstack CLI does', async () => {
  const files = { '/work/dir/clouds.yaml': CLOUDS, '/home/u/.config/openstack/secure.yaml': SECURE };
  const cfg = await loadCloudConfig({ cloudName: 'prod', where: where({ OS_REGION_NAME: 'RegionEnv' }), read: reader(files) });
  assert.equal(cfg.authUrl, 'https://keystone.example:5000/v3');
  assert.equal(cfg.interface, 'internal');
  assert.equal(cfg.regionName, 'RegionEnv');
  assert.deepEqual(cfg.auth, {
    type: 'password',
    username: 'svc',
    userId: undefined,
    userDomainName: 'Default',
    userDomainId: undefined,
    password: 'from-secure',
    projectId: undefined,
    projectName: 'k8s',
    projectDomainId: undefined,
    projectDomainName: 'Default',
    domainId: undefined,
    domainName: undefined,
  });
});

test('--os-cloud wins over OS_CLOUD', async () => {
  const files = { '/work/dir/clouds.yaml': CLOUDS };
  const cfg = await loadCloudConfig({ cloudName: 'appcred', where: where({ OS_CLOUD: 'prod' }), read: reader(files) });
  assert.equal(cfg.cloudName, 'appcred');
  assert.deepEqual(cfg.auth, {
    type: 'applicationCredential',
    id: 'ac-1',
    name: undefined,
    secret: 's3cret',
    username: undefined,
    userId: undefined,
    userDomainName: undefined,
    userDomainId: undefined,
  });
});

test('OS_* variables alone describe a cloud when none is named', () => {
  const cfg = resolveCloudConfig({
    env: {
      OS_AUTH_URL: 'http://k:5000/v3',
      OS_USERNAME: 'a',
      OS_PASSWORD: 'b',
      OS_PROJECT_ID: 'p1',
      OS_USER_DOMAIN_ID: 'default',
      OS_ENDPOINT_TYPE: 'publicURL',
    },
  });
  assert.equal(cfg.cloudName, 'envvars');
  assert.equal(cfg.interface, 'public');
  assert.equal(cfg.auth.type === 'password' && cfg.auth.projectId, 'p1');
});

const BAD: [string, () => unknown, RegExp][] = [
  ['no cloud and no OS_AUTH_URL', () => resolveCloudConfig({ env: {} }), /pass --os-cloud NAME/],
  ['an unknown cloud name', () => resolveCloudConfig({ cloudName: 'nope', env: {} }), /cloud "nope" is not defined because no clouds.yaml was found/],
  [
    'a missing password',
    () => resolveCloudConfig({ env: { OS_AUTH_URL: 'http://k', OS_USERNAME: 'a', OS_USER_DOMAIN_NAME: 'D' } }),
    /auth.password is missing.*OS_PASSWORD/,
  ],
  ['a user name without a domain', () => resolveCloudConfig({ env: { OS_AUTH_URL: 'http://k', OS_USERNAME: 'a', OS_PASSWORD: 'b' } }), /user_domain_name/],
  [
    'an application credential without secret',
    () => resolveCloudConfig({ env: { OS_AUTH_URL: 'http://k', OS_AUTH_TYPE: 'v3applicationcredential', OS_APPLICATION_CREDENTIAL_ID: 'x' } }),
    /application_credential_secret is missing/,
  ],
  ['an unsupported auth type', () => resolveCloudConfig({ env: { OS_AUTH_URL: 'http://k', OS_AUTH_TYPE: 'token' } }), /auth_type "token" is not supported/],
  ['a bad interface', () => resolveCloudConfig({ env: { OS_AUTH_URL: 'http://k', OS_INTERFACE: 'private' } }), /interface "private"/],
  ['a cacert', () => resolveCloudConfig({ env: { OS_AUTH_URL: 'http://k', OS_CACERT: '/ca.pem' } }), /NODE_EXTRA_CA_CERTS=\/ca.pem/],
];
for (const [what, fn, message] of BAD) {
  test(`${what} is a usage error that says how to fix it`, () => {
    assert.throws(fn, (err: unknown) => err instanceof UsageError && message.test(err.message));
  });
}

test('a clouds.yaml that is not YAML is reported with its path', async () => {
  await assert.rejects(
    loadCloudConfig({ cloudName: 'x', where: where(), read: reader({ '/work/dir/clouds.yaml': 'clouds: [' }) }),
    /\/work\/dir\/clouds.yaml is not valid YAML/,
  );
});
