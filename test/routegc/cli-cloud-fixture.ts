// What the routegc and flight process tests share: a real kube-apiserver for the cluster's Nodes,
// the OpenStack emulator with a network, router and security group, a clouds.yaml for the child
// process, servers created with exact names, and the emulator's request log sorted into writes.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSilentLogger } from '../../src/base/logger.ts';
import { createKubeApi, type KubeApi } from '../../src/clients/kube/kube-api.ts';
import { loadKubeConfig } from '../../src/clients/kube/load-kube-config.ts';
import { resolveCloudConfig } from '../../src/clients/openstack/cloud-config.ts';
import { createOpenStackClient, type OpenStackClientHandle } from '../../src/clients/openstack/create-openstack-client.ts';
import { startKubeApiserver, type KubeTestServer } from '../../testkit/kube/kube-test-server.ts';
import { envWithoutOpenStack, KubewardProcess } from '../../testkit/kubeward-process.ts';
import { OpenStackEmulator, type RequestLogEntry } from '../../testkit/openstack/openstack-emulator.ts';
import { waitFor } from '../../testkit/wait-for.ts';
import { ContractFixture, type TestNet } from '../openstack/contract-fixture.ts';

export interface CliCloud {
  kube: KubeTestServer;
  api: KubeApi;
  emu: OpenStackEmulator;
  os: OpenStackClientHandle;
  fx: ContractFixture;
  net: TestNet;
  routerId: string;
  /** Runs kubeward to its end (bounded) with the emulator's clouds.yaml, and returns exit code and output. */
  run(mode: 'routegc' | 'flight', args: string[], timeoutMs?: number): Promise<{ code: number | null; stdout: string; stderr: string }>;
  /** A server with exactly this name (and the metadata its provisioner writes, if any), ACTIVE, and its fixed IP. */
  server(name: string, metadata?: Record<string, string>): Promise<{ id: string; ip: string }>;
  /** Requests that change something in OpenStack (everything but GET and token calls). */
  writes(): RequestLogEntry[];
  close(): Promise<void>;
}

export async function openCliCloud(): Promise<CliCloud> {
  const dir = await mkdtemp(join(tmpdir(), 'kw-cli-cloud-'));
  const kube = await startKubeApiserver();
  const emu = new OpenStackEmulator({ timings: { serverBuildMs: 0, serverRebootMs: 0, serverDeleteMs: 0 } });
  await emu.start();
  const cloudsFile = join(dir, 'clouds.yaml');
  await writeFile(cloudsFile, emu.cloudsYaml('emulator'));
  const config = resolveCloudConfig({
    env: {
      OS_AUTH_URL: emu.authUrl,
      OS_USERNAME: 'admin',
      OS_PASSWORD: 'admin',
      OS_PROJECT_NAME: 'admin',
      OS_USER_DOMAIN_NAME: 'Default',
      OS_PROJECT_DOMAIN_NAME: 'Default',
    },
  });
  const os = createOpenStackClient({ config, log: createSilentLogger() });
  const fx = new ContractFixture(os);
  const net = await fx.network('10.0.0.0/24');
  const routerId = await fx.router(net);
  return {
    kube,
    api: createKubeApi(loadKubeConfig({ kind: 'file', path: kube.kubeconfigPath })),
    emu,
    os,
    fx,
    net,
    routerId,
    run: async (mode, args, timeoutMs = 60_000) => {
      const p = new KubewardProcess([mode, '--kubeconfig', kube.kubeconfigPath, '--os-cloud', 'emulator', '--admin-address', 'off', ...args], {
        env: envWithoutOpenStack({ OS_CLIENT_CONFIG_FILE: cloudsFile }),
      });
      const timer = setTimeout(() => p.child.kill('SIGKILL'), timeoutMs);
      const { code } = await p.exited;
      clearTimeout(timer);
      return { code, stdout: p.stdout, stderr: p.stderr };
    },
    server: async (name, metadata) => {
      const created = await os.http.request<{ server: { id: string } }>('compute', {
        method: 'POST',
        path: '/servers',
        body: { server: { name, flavorRef: '1', imageRef: '00000000-0000-4000-8000-000000000001', networks: [{ uuid: net.networkId }], metadata } },
      });
      const id = created.body.server.id;
      await waitFor(async () => (await os.nova.getServer(id))?.status === 'ACTIVE', { timeoutMs: 10_000, intervalMs: 50, what: `server ${name} ACTIVE` });
      return { id, ip: Object.values((await os.nova.getServer(id))!.addresses).flat()[0]!.addr };
    },
    writes: () => emu.requests.filter((r) => r.method !== 'GET' && !(r.service === 'identity' && r.path.endsWith('/auth/tokens'))),
    close: async () => {
      await emu.close();
      await kube.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
