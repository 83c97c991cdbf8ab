// A real kube-apiserver (with its etcd) for the proxy's discovery tests, started by the shared
// scripts in ../shared/kube-apiserver with a private state directory and free ports, and stopped
// by the PIDs they record. Skips (with how to enable) when the binary is not built.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../testkit/wait-for.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCRIPTS = process.env.KUBE_TEST_SCRIPTS ?? join(ROOT, '..', 'shared', 'kube-apiserver');
const HOME = process.env.KUBE_TEST_HOME ?? '/opt/kube-test';

export interface TestApiserver {
  port: number;
  kubeconfig: string;
  caFile: string;
  tokenFile: string;
  stop(): Promise<void>;
}

/** Why the real-apiserver tests cannot run here, or undefined when they can. */
export function apiserverSkipReason(): string | undefined {
  if (!existsSync(join(SCRIPTS, 'start.sh'))) return `no ${SCRIPTS}/start.sh; set KUBE_TEST_SCRIPTS to the shared kube-apiserver scripts`;
  if (!existsSync(join(HOME, 'bin', 'kube-apiserver'))) return `kube-apiserver is not built in ${HOME}/bin; run ${SCRIPTS}/build.sh as root (or set KUBE_TEST_HOME)`;
  if (!existsSync('/usr/bin/etcd')) return 'etcd is not installed; apt-get install etcd-server';
  return undefined;
}

function run(script: string, env: Record<string, string>, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [join(SCRIPTS, script)], { env: { ...process.env, ...env }, timeout: timeoutMs }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${script} failed: ${err.message}\n${stderr.slice(-2000)}`));
      else resolve(stdout);
    });
  });
}

export async function startTestApiserver(): Promise<TestApiserver> {
  const state = await mkdtemp(join(tmpdir(), 'kw-proxy-kube-'));
  let lastError: unknown;
  // The etcd peer port is the client port + 10 and may be taken: a few tries with fresh ports.
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const env = { KUBE_TEST_HOME: HOME, KUBE_TEST_STATE: state, KUBE_TEST_PORT: String(port), KUBE_TEST_ETCD_PORT: String(await freePort()), KUBE_TEST_AUTHZ: 'AlwaysAllow' };
    try {
      const out = await run('start.sh', env, 90_000);
      const kubeconfig = out.trim().split('\n').at(-1)!;
      return {
        port,
        kubeconfig,
        caFile: join(state, 'pki', 'ca.crt'),
        tokenFile: join(state, 'pki', 'admin.token'),
        stop: async () => void (await run('stop.sh', { KUBE_TEST_STATE: state, KUBE_TEST_WIPE: '1' }, 30_000)),
      };
    } catch (err) {
      lastError = err;
      await run('stop.sh', { KUBE_TEST_STATE: state }, 30_000).catch(() => undefined);
    }
  }
  throw lastError;
}
