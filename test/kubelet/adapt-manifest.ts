// A shipped manifest made fit for the kubelet tier's node, and nothing more: the image becomes the
// one pushed to the node's registry, host paths move under the test's directory, an annotation may
// be added; everything else (user, capabilities, probes, hooks) stays as users get it.
import assert from 'node:assert/strict';
import { parse, stringify } from 'yaml';
import { KUBEWARD_IMAGE } from '../../src/manifests/kubeward-image.ts';

interface Container {
  name: string;
  image: string;
  args?: string[];
  ports?: { name?: string; containerPort: number; protocol?: string }[];
  securityContext?: { capabilities?: { drop?: string[]; add?: string[] } };
}
interface PodSpec {
  containers: Container[];
  volumes?: { name: string; hostPath?: { path: string } }[];
  nodeSelector?: Record<string, string>;
}
export interface PodObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: PodSpec & { template?: { metadata: { labels: Record<string, string> }; spec: PodSpec } };
}

export interface Adaptation {
  image: string;
  /** Host path in the manifest -> host path on the test node. */
  hostPaths: Record<string, string>;
  annotations?: Record<string, string>;
  /** Container name -> its new args (a config the test node can serve). */
  args?: Record<string, (args: string[]) => string[]>;
  /** A deliberate change for a negative case (a capability taken away). */
  edit?: (pod: PodObject) => void;
}

/** A DaemonSet's pod template as the static pod a kubelet without a scheduler can run. */
export function templateAsPod(ds: PodObject): PodObject {
  assert.equal(ds.kind, 'DaemonSet');
  const tpl = ds.spec.template!;
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: ds.metadata.name, namespace: ds.metadata.namespace, labels: tpl.metadata.labels }, spec: tpl.spec };
}

export function adaptManifest(text: string, a: Adaptation): { yaml: string; pod: PodObject } {
  const obj = parse(text) as PodObject;
  const pod = obj.kind === 'DaemonSet' ? templateAsPod(obj) : obj;
  for (const c of pod.spec.containers) {
    assert.equal(c.image, KUBEWARD_IMAGE, `${pod.metadata.name}/${c.name} names the image the build tags`);
    c.image = a.image;
    const edit = a.args?.[c.name];
    if (edit) c.args = edit(c.args ?? []);
  }
  for (const v of pod.spec.volumes ?? []) {
    if (v.hostPath && v.hostPath.path in a.hostPaths) v.hostPath.path = a.hostPaths[v.hostPath.path]!;
  }
  if (a.annotations) pod.metadata.annotations = { ...pod.metadata.annotations, ...a.annotations };
  a.edit?.(pod);
  return { yaml: stringify(pod), pod };
}

/**
 * The shipped DaemonSet as the test apiserver (v1.20) takes it. It predates a DaemonSet's maxSurge
 * (alpha in 1.21, on by default from 1.22), and server-side apply refuses a field its schema lacks,
 * so the update strategy goes back to maxUnavailable: 1 here. Fails if the shipped file no longer
 * surges (its update would have nothing to hand over to).
 */
export function daemonSetForApiserver120(text: string): string {
  const surge = /\n(\s+)maxSurge: 1\n\s+maxUnavailable: 0\n/;
  assert.match(text, surge, 'the shipped DaemonSet surges, so that its update can hand over');
  return text.replace(surge, '\n$1maxUnavailable: 1\n');
}
