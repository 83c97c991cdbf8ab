// API discovery: which version of an optional API group the server serves (none is an answer, not
// an error), and the server's Kubernetes version.
import type { KubeClient } from './kube-client.ts';
import { isNotFound } from './kube-api-error.ts';

interface ApiGroup {
  versions?: { version: string }[];
  preferredVersion?: { version: string };
}

/**
 * The version of `group` to use: the first of `wanted` that the server serves, or undefined when
 * the group does not exist there (a 404 from /apis/<group>). Other failures throw.
 */
export async function discoverGroupVersion(kube: KubeClient, group: string, wanted: readonly string[]): Promise<string | undefined> {
  let g: ApiGroup;
  try {
    g = await kube.request<ApiGroup>('GET', `/apis/${group}`);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
  const served = new Set((g.versions ?? []).map((v) => v.version));
  return wanted.find((v) => served.has(v));
}
