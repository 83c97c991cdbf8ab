// The two targets of the OpenStack contract suite: the emulator (always) and the real Keystone, Neutron
// and Nova from ../shared/openstack (only when KUBEWARD_OPENSTACK_REAL=1 and OS_* point at them).
import { createSilentLogger } from '../../src/base/logger.ts';
import { resolveCloudConfig, type CloudConfig } from '../../src/clients/openstack/cloud-config.ts';
import { createOpenStackClient, type OpenStackClientHandle } from '../../src/clients/openstack/create-openstack-client.ts';
import { OpenStackEmulator } from '../../testkit/openstack/openstack-emulator.ts';
import { tierRan } from '../../testkit/test-tiers.ts';

export interface TargetSession {
  admin: OpenStackClientHandle;
  /** A member of another project (demo/demo), to check what other projects see. */
  demo: OpenStackClientHandle;
  adminConfig: CloudConfig;
  /** Whether Nova is in the catalog (setup.sh only adds it with OS_IT_NOVA=1). */
  hasNova: boolean;
  maxRoutes: number;
  /** Non-null for the emulator, for checks that need its internals. */
  emulator: OpenStackEmulator | null;
  close(): Promise<void>;
}

export interface ContractTarget {
  name: 'emulator' | 'real';
  /** A reason to skip, or false. */
  skip: string | false;
  open(): Promise<TargetSession>;
}

const FAST_RETRY = { baseDelayMs: 50, maxDelayMs: 500, attemptTimeoutMs: 60_000 };

function client(config: CloudConfig): OpenStackClientHandle {
  return createOpenStackClient({ config, log: createSilentLogger(), retry: FAST_RETRY });
}

function withUser(config: CloudConfig, user: string): CloudConfig {
  if (config.auth.type !== 'password') throw new Error('the contract suite needs password credentials');
  return { ...config, auth: { ...config.auth, username: user, password: user, userId: undefined, projectId: undefined, projectName: user } };
}

async function session(adminConfig: CloudConfig, maxRoutes: number, emulator: OpenStackEmulator | null): Promise<TargetSession> {
  const admin = client(adminConfig);
  const demo = client(withUser(adminConfig, 'demo'));
  const info = await admin.keystone.tokenInfo();
  return {
    admin,
    demo,
    adminConfig,
    hasNova: info.catalog.some((e) => e.type === 'compute'),
    maxRoutes,
    emulator,
    close: async () => {
      await emulator?.close();
    },
  };
}

export function contractTargets(env: Readonly<Record<string, string | undefined>>): ContractTarget[] {
  const realOn = env.KUBEWARD_OPENSTACK_REAL === '1';
  return [
    {
      name: 'emulator',
      skip: false,
      open: async () => {
        const emu = new OpenStackEmulator({ maxRoutes: 30 });
        await emu.start();
        const config = resolveCloudConfig({
          env: {
            OS_AUTH_URL: emu.authUrl,
            OS_USERNAME: 'admin',
            OS_PASSWORD: 'admin',
            OS_PROJECT_NAME: 'admin',
            OS_USER_DOMAIN_NAME: 'Default',
            OS_PROJECT_DOMAIN_NAME: 'Default',
            OS_REGION_NAME: 'RegionOne',
          },
        });
        return session(config, 30, emu);
      },
    },
    {
      name: 'real',
      skip:
        realOn && env.OS_AUTH_URL
          ? false
          : 'real OpenStack is off: run `sudo OS_IT_NOVA=1 bash ../shared/openstack/setup.sh`, then `. /tmp/openstack-it/openrc` and set KUBEWARD_OPENSTACK_REAL=1 (.ci/run does this)',
      open: async () => {
        const s = await session(resolveCloudConfig({ env: { ...env, OS_CLOUD: undefined } }), Number(env.KUBEWARD_OPENSTACK_REAL_MAX_ROUTES ?? 30), null);
        tierRan('openstack-real'); // Keystone answered: the real tier is running
        return s;
      },
    },
  ];
}
