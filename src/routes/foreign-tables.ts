// OpenShift's own hairpin tables: `table ip gcp-vips` (openshift-gcp-routes.sh) and
// `table inet azure-vips` (openshift-azure-routes.sh), both in machine-config-operator's
// templates/master/00-master/{gcp,azure}/files/. Found next to ours, both act on the same VIPs.
export const OPENSHIFT_TABLES = ['gcp-vips', 'azure-vips'] as const;

/** `nft list tables` output → the OpenShift tables present, as "family name". */
export function parseForeignTables(text: string): string[] {
  const found: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^table (ip|ip6|inet) (\S+)$/.exec(line.trim());
    if (m && (OPENSHIFT_TABLES as readonly string[]).includes(m[2]!)) found.push(`${m[1]} ${m[2]}`);
  }
  return found.sort();
}
