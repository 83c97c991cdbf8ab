// What test/check-config.test.ts builds again and again: a kubeconfig naming files, an agent
// config from its sections, and the shape of a refusal (exit 2, one line, nothing on stdout).
import assert from 'node:assert/strict';

/** A kubeconfig for an unreachable server whose TLS material is these files. */
export function kubeconfig(o: { caFile: string; certFile: string; keyFile: string }): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'current-context: mgmt',
    'clusters: [{ name: mgmt, cluster: { server: "https://127.0.0.1:1", certificate-authority: ' + o.caFile + ' } }]',
    'users: [{ name: op, user: { client-certificate: ' + o.certFile + ', client-key: ' + o.keyFile + ' } }]',
    'contexts: [{ name: mgmt, context: { cluster: mgmt, user: op } }]',
    '',
  ].join('\n');
}

/** One section's keys, each value written as YAML text. */
type Section = Record<string, string>;

/** The agent's config file: adminAddress, then the sections given, in the agent's order. */
export function agentYaml(o: { adminAddress?: string; proxy: Section; watch: Section; routes?: Section }): string {
  const lines = o.adminAddress === undefined ? [] : [`adminAddress: ${o.adminAddress}`];
  for (const [name, section] of [
    ['proxy', o.proxy],
    ['watch', o.watch],
    ['routes', o.routes],
  ] as const) {
    if (section) lines.push(`${name}:`, ...Object.entries(section).map(([k, v]) => `  ${k}: ${v}`));
  }
  return [...lines, ''].join('\n');
}

/** A watch section probing an unreachable /readyz with this CA for one VIP. */
export function watchSection(caFile: string, stateDir?: string): Section {
  return { healthUrl: 'https://127.0.0.1:1/readyz', caFile, vip: '[10.0.0.100]', ...(stateDir === undefined ? {} : { stateDir }) };
}

/** One line on stderr naming the mode, exit 2, nothing on stdout. */
export function assertRefused(r: { code: number | null; stdout: string; stderr: string }, mode: string, expected: RegExp): void {
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, '');
  const lines = r.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, r.stderr);
  assert.match(lines[0]!, new RegExp(`^kubeward ${mode}: `));
  assert.match(lines[0]!, expected);
}
