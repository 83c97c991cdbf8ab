// The upgrade hand-over as every kubeward node pod carries it: --handover-socket in a directory of
// the pod's uid that only kubeward's pods mount, and a preStop hook that holds the old pod until its
// successor accepts on the sockets (docs/design/listener-handover.md).
import type { HostMount } from './pod-parts.ts';

/** How long the old pod waits for its successor to take the listeners (it bounds the grace). */
export const HANDOVER_WAIT_S = 20;

/**
 * The proxy pod (65532) uses the state directory it mounts already (/var/lib/kubeward, which
 * belongs to 65532 by the install step) and creates its 0700 directory there itself.
 */
export const PROXY_HANDOVER_SOCKET = '/var/lib/kubeward/proxy-handover/listeners.sock';

export type RootMode = 'agent' | 'watch' | 'routes';

/**
 * The root pods (agent, watch, routes) run without CAP_DAC_OVERRIDE, so they cannot create a
 * directory in a 65532-owned one: each gets a hostPath of its own under /run/kubeward-handover,
 * which kubelet creates as root's (0755) and the process narrows to 0700. One per mode, so that
 * the DaemonSet's two containers, each with its own successor, never answer each other.
 */
export function rootHandover(mode: RootMode): { mount: HostMount; arg: string } {
  const dir = `/run/kubeward-handover/${mode}`;
  return {
    mount: { name: `${mode}-handover`, hostPath: dir, mountPath: dir, type: 'DirectoryOrCreate' },
    arg: `--handover-socket=${dir}/listeners.sock`,
  };
}

/** The preStop hook: holds the old pod until no process of its own holds the listening sockets (await-successor.ts). */
export function awaitSuccessorHook(addresses: readonly string[]): Record<string, unknown> {
  return {
    preStop: { exec: { command: ['/usr/local/bin/node', '/opt/kubeward/src/handover/await-successor.ts', ...addresses, '--timeout', `${HANDOVER_WAIT_S}s`] } },
  };
}
