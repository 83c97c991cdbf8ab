// The real kube-apiserver (with its etcd) for the proxy's discovery tests: testkit's shared starter,
// with anonymous-friendly authorization and the fields these tests use. Skips (with how to enable)
// when the binary is not built.
import { existsSync } from 'node:fs';
import { kubeApiserverMissing, startKubeApiserver } from '../../testkit/kube/kube-test-server.ts';

export interface TestApiserver {
  port: number;
  kubeconfig: string;
  caFile: string;
  tokenFile: string;
  stop(): Promise<void>;
}

/** Why the real-apiserver tests cannot run here, or undefined when they can. */
export function apiserverSkipReason(): string | undefined {
  return kubeApiserverMissing() ?? (existsSync('/usr/bin/etcd') ? undefined : 'etcd is not installed; apt-get install etcd-server');
}

export async function startTestApiserver(): Promise<TestApiserver> {
  const s = await startKubeApiserver(undefined, { authz: 'AlwaysAllow' });
  return { port: s.port, kubeconfig: s.kubeconfigPath, caFile: s.caFile, tokenFile: s.tokenFile, stop: s.stop };
}
