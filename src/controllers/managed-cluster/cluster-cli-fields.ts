// The settings the one-shot cluster commands (routegc, flight) share: which cluster's API and cloud
// they talk to, and the pod CIDR they are scoped to. One definition, so the two commands' messages
// and grammar cannot drift apart.
import * as z from 'zod/mini';
import { parseCidr } from '../../base/ip.ts';

export const clusterCidrField = z
  .string({ error: "give the cluster's pod CIDR, such as 100.100.0.0/16" })
  .check(z.refine((s: string) => parseCidr(s) !== undefined, { error: (i) => `"${String(i.input)}" is not a CIDR such as 100.100.0.0/16` }));

export const clusterAccessFields = {
  kubeconfig: z.string({ error: "give the path of the cluster's kubeconfig" }).check(z.minLength(1, "give the path of the cluster's kubeconfig")),
  context: z.optional(z.string().check(z.minLength(1))),
  osCloud: z.optional(z.string().check(z.minLength(1))),
};
