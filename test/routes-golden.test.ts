// Rendered rulesets against golden files, each also checked by the real tool (`nft -c -f`,
// `iptables-restore --test`) in a throwaway network namespace. UPDATE_GOLDEN=1 rewrites the files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execCommand } from '../src/sys/exec.ts';
import { buildDesiredRuleset, type DesiredInput } from '../src/routes/desired-ruleset.ts';
import { renderNftRuleset, renderNftCleanup } from '../src/routes/render-nft.ts';
import { EMPTY_CURRENT, parseIptablesSave, renderIptablesCleanup, renderIptablesRestore } from '../src/routes/render-iptables.ts';
import type { VipState } from '../src/routes/vip-states.ts';
import fc from 'fast-check';
import { checkCidr, checkVip } from '../src/watch/vip-address.ts';
import { noteTierSkip } from '../testkit/test-tiers.ts';

const GOLDEN = join(import.meta.dirname, 'golden', 'routes');
const update = process.env.UPDATE_GOLDEN === '1';
const canCheck = process.getuid?.() === 0;
const skipCheck = canCheck ? false : 'needs root to run nft -c / iptables-restore --test (run the tests as root)';
noteTierSkip('root', skipCheck);

function vip(v: string, up: boolean): VipState {
  return { vip: v, family: v.includes(':') ? 6 : 4, file: up ? 'up' : 'down', up, reason: 'golden' };
}

const HC = ['35.191.0.0/16', '130.211.0.0/22', '2600:2d00:1:b029::/64'];
const CASES: Record<string, DesiredInput> = {
  'azure-dual-stack': {
    provider: 'azure',
    vips: [vip('10.0.0.100', true), vip('10.0.0.101', false), vip('2001:db8:100::100', true)],
    ports: [6443],
    natTarget: 'redirect',
    nodeIps: {},
    healthCheckerCidrs: HC,
  },
  // The defaults: every port and protocol, as openshift-azure-routes.sh / openshift-gcp-routes.sh
  // (machine-config-operator templates/master/00-master/{azure,gcp}/files/) redirect them.
  'azure-default-all-ports': {
    provider: 'azure',
    vips: [vip('10.0.0.100', true), vip('2001:db8:100::100', true)],
    ports: 'all',
    natTarget: 'redirect',
    nodeIps: {},
    healthCheckerCidrs: HC,
  },
  'gcp-default-no-file-up': {
    provider: 'gcp',
    vips: [
      { vip: '10.0.0.100', family: 4, file: 'none', up: true, reason: 'no state file: up' },
      { vip: '10.0.0.200', family: 4, file: 'down', up: false, reason: 'down file' },
    ],
    ports: 'all',
    natTarget: 'redirect',
    nodeIps: {},
    healthCheckerCidrs: HC.slice(0, 2),
  },
  'azure-all-down': { provider: 'azure', vips: [vip('10.0.0.100', false)], ports: [6443], natTarget: 'redirect', nodeIps: {}, healthCheckerCidrs: HC },
  'gcp-dual-stack': {
    provider: 'gcp',
    vips: [vip('10.0.0.100', true), vip('10.0.0.200', false), vip('2001:db8:100::100', false)],
    ports: [6443, 22623],
    natTarget: 'redirect',
    nodeIps: {},
    healthCheckerCidrs: HC,
  },
  'gcp-node-ip-all-ports': {
    provider: 'gcp',
    vips: [vip('10.0.0.100', true), vip('2001:db8:100::100', true)],
    ports: 'all',
    natTarget: 'node-ip',
    nodeIps: { 4: '10.0.1.11', 6: '2001:db8:1::11' },
    healthCheckerCidrs: HC.slice(0, 2),
  },
};

async function golden(name: string, actual: string): Promise<void> {
  const path = join(GOLDEN, name);
  if (update) await writeFile(path, actual);
  assert.equal(actual, await readFile(path, 'utf8'), `${name} differs from the golden file (UPDATE_GOLDEN=1 rewrites it)`);
}

/**
 * Runs the checker on the text in a new, empty network namespace (so the host's rules play no
 * part), then applies it there for real: iptables-nft's --test only parses, the kernel checks more.
 */
async function checkWith(argv: string[], text: string): Promise<void> {
  await execCommand(['unshare', '--net', '--', ...argv], { input: text, timeoutMs: 10_000 });
  const apply = argv.filter((a) => a !== '-c' && a !== '--test');
  await execCommand(['unshare', '--net', '--', ...apply], { input: text, timeoutMs: 10_000 });
}

for (const [name, input] of Object.entries(CASES)) {
  const { ruleset } = buildDesiredRuleset(input);

  test(`the nftables ruleset for ${name} matches its golden file and nft -c accepts it`, async (t) => {
    const text = renderNftRuleset(ruleset);
    await golden(`${name}.nft`, text);
    if (skipCheck) return t.skip(skipCheck);
    await checkWith(['nft', '-c', '-f', '-'], text);
  });

  test(`the iptables input for ${name} matches its golden files and iptables-restore --test accepts it`, async (t) => {
    const v4 = renderIptablesRestore(ruleset, 4, EMPTY_CURRENT);
    const v6 = renderIptablesRestore(ruleset, 6, EMPTY_CURRENT);
    await golden(`${name}.iptables`, v4);
    await golden(`${name}.ip6tables`, v6);
    if (skipCheck) return t.skip(skipCheck);
    await checkWith(['iptables-restore', '--test', '--noflush'], v4);
    await checkWith(['ip6tables-restore', '--test', '--noflush'], v6);
  });
}

test('the nft cleanup is valid whether or not the table exists', async (t) => {
  await golden('cleanup.nft', renderNftCleanup());
  if (skipCheck) return t.skip(skipCheck);
  await checkWith(['nft', '-c', '-f', '-'], renderNftCleanup());
});

test('re-rendering against saved state adds no second jump and removes chains no longer wanted', () => {
  const saved = [
    '*nat',
    ':PREROUTING ACCEPT [0:0]',
    ':KUBEWARD-ROUTES-PREROUTING - [0:0]',
    ':KUBEWARD-ROUTES-OUTPUT - [0:0]',
    '-A PREROUTING -m comment --comment "kubeward routes" -j KUBEWARD-ROUTES-PREROUTING',
    '-A OUTPUT -m comment --comment "kubeward routes" -j KUBEWARD-ROUTES-OUTPUT',
    '-A OUTPUT -j KUBEWARD-ROUTES-OUTPUT',
    'COMMIT',
    '*filter',
    ':KUBEWARD-ROUTES-FORWARD - [0:0]',
    '-A FORWARD -m comment --comment "kubeward routes" -j KUBEWARD-ROUTES-FORWARD',
    'COMMIT',
  ].join('\n');
  const current = parseIptablesSave(saved);
  const text = renderIptablesRestore(buildDesiredRuleset(CASES['azure-all-down']!).ruleset, 4, current);
  assert.doesNotMatch(text, /-I (PREROUTING|OUTPUT)/, 'jumps that exist are not added again');
  assert.match(text, /^-D OUTPUT -j KUBEWARD-ROUTES-OUTPUT$/m, 'the duplicate jump goes');
  assert.match(text, /^-D FORWARD .*-j KUBEWARD-ROUTES-FORWARD\n-X KUBEWARD-ROUTES-FORWARD$/m, 'the unwanted chain goes, jump first');
  const cleanup = renderIptablesCleanup(current);
  assert.equal((cleanup.match(/^-X /gm) ?? []).length, 3);
});

test('property: every VIP and CIDR the grammar accepts renders into rules nft -c and iptables-restore --test accept', async (t) => {
  if (skipCheck) return t.skip(skipCheck);
  // Candidates from every corner the grammar has (zone ids, mapped, odd spellings); only accepted ones are rendered.
  const candidate = fc.oneof(
    fc.ipV4(),
    fc.ipV6(),
    fc.ipV4Extended(),
    fc.tuple(fc.ipV6(), fc.constantFrom('%eth0', '%1', '')).map(([a, z]) => a + z),
  );
  const ports = fc.oneof(fc.constant('all' as const), fc.uniqueArray(fc.integer({ min: 1, max: 65535 }), { minLength: 1, maxLength: 15 }));
  const cidr = fc.tuple(fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4Extended()), fc.integer({ min: 0, max: 140 })).map(([ip, len]) => `${ip}/${len}`);
  let rendered = 0;
  let cidrs = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(candidate, { minLength: 1, maxLength: 12 }),
      ports,
      fc.constantFrom('azure', 'gcp') as fc.Arbitrary<'azure' | 'gcp'>,
      fc.array(cidr, { maxLength: 6 }),
      async (texts, p, provider, cidrTexts) => {
        const vips = [...new Set(texts.map((x) => checkVip(x)).flatMap((r) => (r.ok ? [r.vip] : [])))].map((v, i) => vip(v, i % 2 === 0));
        if (vips.length === 0) return;
        rendered += vips.length;
        const healthCheckerCidrs = cidrTexts.map((c) => checkCidr(c)).flatMap((r) => (r.ok ? [r.cidr] : []));
        cidrs += healthCheckerCidrs.length;
        const { ruleset } = buildDesiredRuleset({ provider, vips, ports: p, natTarget: 'redirect', nodeIps: {}, healthCheckerCidrs });
        const nft = renderNftRuleset(ruleset);
        const v4 = renderIptablesRestore(ruleset, 4, EMPTY_CURRENT);
        const v6 = renderIptablesRestore(ruleset, 6, EMPTY_CURRENT);
        for (const text of [nft, v4, v6]) assert.doesNotMatch(text, /%|\.\.\//, 'no zone id or path in a rule');
        // Checked, then applied for real in a throwaway namespace (the kernel checks more than the parsers).
        await checkWith(['nft', '-c', '-f', '-'], nft);
        await checkWith(['iptables-restore', '--test', '--noflush'], v4);
        await checkWith(['ip6tables-restore', '--test', '--noflush'], v6);
      },
    ),
    { numRuns: 25 },
  );
  t.diagnostic(`${rendered} accepted VIPs and ${cidrs} accepted health-checker CIDRs rendered and checked`);
});
