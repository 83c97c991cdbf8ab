// A real kube-apiserver (with etcd) for integration tests, started with the shared scripts in
// ../shared/kube-apiserver on free loopback ports and a state directory of its own.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, freePorts } from '../wait-for.ts';
import { tierRan } from '../test-tiers.ts';

const run = promisify(execFile);

export interface KubeTestEnv {
  /** Where build.sh put the binaries' parent (bin/kube-apiserver below it). */
  home: string;
  scripts: string;
}

/** Reads the environment once (tests only): KUBE_TEST_HOME, KUBE_TEST_SCRIPTS or KUBEWARD_SHARED_DIR. */
export function kubeTestEnv(env: NodeJS.ProcessEnv = process.env): KubeTestEnv {
  const shared = env.KUBEWARD_SHARED_DIR ?? join(import.meta.dirname, '../../../shared');
  return {
    home: env.KUBE_TEST_HOME ?? '/opt/kube-test',
    scripts: env.KUBE_TEST_SCRIPTS ?? join(shared, 'kube-apiserver'),
  };
}

/** Why tests that need the apiserver cannot run here, or undefined when they can. */
export function kubeApiserverMissing(env = kubeTestEnv()): string | undefined {
  if (!existsSync(join(env.home, 'bin/kube-apiserver'))) {
    return `no kube-apiserver in ${env.home}/bin; build it with "bash ../shared/kube-apiserver/build.sh" (or set KUBE_TEST_HOME)`;
  }
  if (!existsSync(join(env.scripts, 'start.sh'))) return `no start.sh in ${env.scripts}; set KUBE_TEST_SCRIPTS`;
  return undefined;
}

/** Why the realistic tier (apiserver + kube-controller-manager) cannot run here, or undefined when it can. */
export function kubeControllerManagerMissing(env = kubeTestEnv()): string | undefined {
  const apiserver = kubeApiserverMissing(env);
  if (apiserver) return apiserver;
  if (!existsSync(join(env.home, 'bin/kube-controller-manager'))) {
    return `no kube-controller-manager in ${env.home}/bin; build it with KUBE_TEST_COMPONENTS="kube-apiserver kube-controller-manager" bash ../shared/kube-apiserver/build.sh`;
  }
  return undefined;
}

/**
 * The controllers a real cluster runs around storage and ownership: a claim a pod uses keeps its
 * finalizer, a PV keeps its own until it is released, and owned objects go with their owner.
 */
export const STORAGE_CONTROLLERS = ['pvc-protection', 'pv-protection', 'garbagecollector'] as const;

export interface KubeTestServer {
  kubeconfigPath: string;
  stateDir: string;
  /** The apiserver's port on 127.0.0.1. */
  port: number;
  /** The CA and the admin bearer token that start.sh made (in stateDir/pki). */
  caFile: string;
  tokenFile: string;
  stop(): Promise<void>;
}

export interface KubeTestOptions {
  /** The apiserver's authorization mode; start.sh's default is RBAC. */
  authz?: 'RBAC' | 'AlwaysAllow';
  /**
   * Run kube-controller-manager with these controllers, and the apiserver with every default
   * admission plugin (StorageObjectInUseProtection included), as a real cluster does. Without it the
   * apiserver runs alone and those two plugins are off.
   */
  controllers?: readonly string[];
}

/** Starts made when the ports picked lose a race with another process (see below). */
const START_ATTEMPTS = 3;

export async function startKubeApiserver(env = kubeTestEnv(), opts: KubeTestOptions = {}): Promise<KubeTestServer> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(env, opts);
    } catch (err) {
      // freePort stays here (start.sh passes the ports to etcd and kube-apiserver before they run,
      // and kube-apiserver cannot pick its own: --secure-port 0 turns serving off), so another
      // process may take a port between the pick and the bind: then new ports, a bounded number of times.
      const stderr = String((err as { stderr?: unknown }).stderr ?? '');
      if (attempt >= START_ATTEMPTS || !/is busy|address already in use/.test(stderr)) throw err;
    }
  }
}

async function startOnce(env: ReturnType<typeof kubeTestEnv>, opts: KubeTestOptions): Promise<KubeTestServer> {
  const stateDir = await mkdtemp(join(tmpdir(), 'kw-kube-'));
  const [port, firstEtcdPort] = (await freePorts(2)) as [number, number];
  let etcdPort = firstEtcdPort;
  // The etcd peer port is the client port + 10; find a pair that is free.
  for (let i = 0; i < 10 && !(await isFree(etcdPort + 10)); i++) etcdPort = await freePort();
  const vars = {
    ...process.env,
    KUBE_TEST_HOME: env.home,
    KUBE_TEST_STATE: stateDir,
    KUBE_TEST_PORT: String(port),
    KUBE_TEST_ETCD_PORT: String(etcdPort),
    ...(opts.authz ? { KUBE_TEST_AUTHZ: opts.authz } : {}),
    ...(opts.controllers ? { KUBE_TEST_CONTROLLERS: opts.controllers.join(','), KUBE_TEST_DISABLE_ADMISSION: '' } : {}),
  };
  const stop = async (): Promise<void> => {
    await run('bash', [join(env.scripts, 'stop.sh')], { env: vars }).catch(() => undefined);
    await rm(stateDir, { recursive: true, force: true });
  };
  try {
    const { stdout } = await run('bash', [join(env.scripts, 'start.sh')], { env: vars, timeout: 90_000 });
    const kubeconfigPath = stdout.trim().split('\n').pop()!;
    tierRan('kube-apiserver');
    return { kubeconfigPath, stateDir, port, caFile: join(stateDir, 'pki', 'ca.crt'), tokenFile: join(stateDir, 'pki', 'admin.token'), stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function isFree(port: number): Promise<boolean> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}
