// kubeward routes on the command line: every bad input exits 2 with one line naming the flag and
// the fix, and no stack trace (a bad input is an operator's typo, not a crash). Each case runs in its own
// empty network namespace with a throwaway state directory, so a value wrongly accepted starts a
// daemon that can touch nothing of the host (it is then killed and the case fails).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execCommand } from '../src/sys/exec.ts';
import { kubewardArgv } from '../testkit/kubeward-process.ts';

const isRoot = process.getuid?.() === 0;

async function routes(args: string[]): Promise<{ code: number; stderr: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'kw-routes-cli-'));
  try {
    const withDir = args.some((a) => a.startsWith('--state-dir')) ? args : ['--state-dir', join(dir, 'state'), ...args];
    const argv = kubewardArgv(['routes', '--admin-address', 'off', ...withDir]);
    const r = await execCommand(isRoot ? ['unshare', '--net', '--', ...argv] : argv, { okCodes: [0, 1, 2], timeoutMs: 20_000 }).catch((err: Error) => ({
      code: -1,
      stderr: `did not exit: ${err.message}`,
    }));
    return { code: r.code, stderr: r.stderr.trim() };
  } finally {
    await rm(dir, { recursive: true, force: true });
    await rm(join(dir, 'state-heartbeat'), { recursive: true, force: true });
  }
}

/** [what, args, the line must match]. Every line must also name the flag it is about. */
const cases: [string, string[], RegExp][] = [
  ['a missing --provider', [], /^kubeward routes: .*required: give --provider gcp or --provider azure$/],
  ['an unknown provider', ['--provider', 'aws'], /--provider: expected gcp or azure/],
  ['an unknown backend', ['--provider', 'azure', '--backend', 'ebpf'], /--backend: expected nftables or iptables/],
  ['a port out of range', ['--provider', 'azure', '--ports', '6443,70000'], /--ports: "6443,70000" is not a port list/],
  ['port 0', ['--provider', 'azure', '--ports', '0'], /--ports: "0" is not a port list/],
  ['a port that is not a number', ['--provider', 'azure', '--ports', 'https'], /--ports: "https" is not a port list/],
  [
    'sixteen ports (iptables multiport takes 15)',
    ['--provider', 'azure', '--ports', Array.from({ length: 16 }, (_, i) => 6000 + i).join(',')],
    /--ports: .*at most 15/,
  ],
  ['node-ip without --node-ip', ['--provider', 'azure', '--nat-target', 'node-ip'], /--nat-target node-ip needs --node-ip/],
  ['an unknown NAT target', ['--provider', 'azure', '--nat-target', 'snat'], /--nat-target: expected redirect or node-ip/],
  [
    'two IPv4 node addresses',
    ['--provider', 'azure', '--nat-target', 'node-ip', '--node-ip', '10.0.1.11', '--node-ip', '10.0.1.12'],
    /--node-ip: give at most one IPv4/,
  ],
  ['a loopback down-peer', ['--provider', 'gcp', '--vip', '10.0.0.2', '--down-peer', '127.0.0.1'], /--down-peer.*loopback/],
  ['a link-local down-peer', ['--provider', 'gcp', '--vip', '10.0.0.2', '--down-peer', '169.254.169.254'], /--down-peer.*link-local/],
  ['a down-peer that is the VIP', ['--provider', 'gcp', '--vip', '10.0.0.2', '--down-peer', '10.0.0.2'], /--down-peer 10\.0\.0\.2: that is a --vip/],
  [
    'a clean-up that would take over the running agent',
    ['--provider', 'azure', '--clean-up', '--handover-socket', '/run/kubeward-handover/routes/listeners.sock'],
    /--clean-up runs once and takes nothing over; leave out --handover-socket/,
  ],
  [
    'a down-peer that is this node',
    ['--provider', 'gcp', '--vip', '10.0.0.2', '--nat-target', 'node-ip', '--node-ip', '10.0.1.11', '--down-peer', '10.0.1.11'],
    /--down-peer 10\.0\.1\.11: that is this node/,
  ],
  ['a down-peer window too short', ['--provider', 'gcp', '--vip', '10.0.0.2', '--down-peer', '10.0.2.12', '--down-peer-window', '10ms'], /--down-peer-window/],
  [
    'an unknown down-peer check',
    ['--provider', 'gcp', '--vip', '10.0.0.2', '--down-peer', '10.0.2.12', '--down-peer-check', 'ping'],
    /--down-peer-check: expected readyz or tcp/,
  ],
  ['a node address with a zone id', ['--provider', 'azure', '--nat-target', 'node-ip', '--node-ip', 'fe80::1%eth0'], /--node-ip/],
  [
    'a health-checker range without a length',
    ['--provider', 'gcp', '--vip', '10.0.0.2', '--health-checker-cidr', '35.191.0.0'],
    /--health-checker-cidr.*not a CIDR/,
  ],
  [
    'a zone-id health-checker range',
    ['--provider', 'gcp', '--vip', '10.0.0.2', '--health-checker-cidr', 'fe80::%eth0/64'],
    /--health-checker-cidr.*"fe80::%eth0\/64" is not a CIDR.*no zone ids/,
  ],
  [
    'a health-checker prefix too long',
    ['--provider', 'gcp', '--vip', '10.0.0.2', '--health-checker-cidr', '35.191.0.0/33'],
    /--health-checker-cidr.*not a CIDR/,
  ],
  [
    'none mixed with ranges',
    ['--provider', 'gcp', '--vip', '10.0.0.2', '--health-checker-cidr', 'none', '--health-checker-cidr', '35.191.0.0/16'],
    /--health-checker-cidr none cannot be mixed/,
  ],
  ['the metadata address as VIP', ['--provider', 'azure', '--vip', '169.254.169.254'], /--vip.*"169\.254\.169\.254" is link-local/],
  ['0.0.0.0 as VIP', ['--provider', 'azure', '--vip', '0.0.0.0'], /--vip.*"0\.0\.0\.0" is in 0\.0\.0\.0\/8/],
  [':: as VIP', ['--provider', 'azure', '--vip', '::'], /--vip.*"::" is the unspecified address/],
  ['a multicast VIP', ['--provider', 'azure', '--vip', 'ff02::1'], /--vip.*"ff02::1" is a multicast address/],
  ['an IPv4 multicast VIP', ['--provider', 'azure', '--vip', '224.0.0.18'], /--vip.*is a multicast address/],
  ['a link-local IPv6 VIP', ['--provider', 'azure', '--vip', 'fe80::1'], /--vip.*"fe80::1" is link-local/],
  ['a zone-id VIP', ['--provider', 'azure', '--vip', 'fe80::1%eth0'], /--vip.*"fe80::1%eth0" has a zone id/],
  ['a VIP in 0.0.0.0/8', ['--provider', 'azure', '--vip', '0.1.2.3'], /--vip.*"0\.1\.2\.3" is in 0\.0\.0\.0\/8/],
  ['a VIP with leading zeros', ['--provider', 'azure', '--vip', '010.0.0.2'], /--vip.*"010\.0\.0\.2" is not an IPv4 or IPv6 address/],
  ['an IPv4-mapped VIP', ['--provider', 'azure', '--vip', '::ffff:10.0.0.2'], /--vip.*IPv4-mapped/],
  ['the broadcast address as VIP', ['--provider', 'azure', '--vip', '255.255.255.255'], /--vip.*reserved or broadcast/],
  ['a VIP with a prefix', ['--provider', 'azure', '--vip', '10.0.0.2/32'], /--vip.*"10\.0\.0\.2\/32" is not an IPv4 or IPv6 address/],
  ['a VIP with a line break', ['--provider', 'azure', '--vip', '10.0.0.2\n10.0.0.3'], /--vip.*"10\.0\.0\.2\\n10\.0\.0\.3"/],
  ['a VIP with a path in it', ['--provider', 'azure', '--vip', '../../etc/passwd'], /--vip.*not an IPv4 or IPv6 address/],
  ['a resync too short', ['--provider', 'azure', '--resync', '1ms'], /--resync: 1ms is too short/],
  ['a resync that is not a duration', ['--provider', 'azure', '--resync', 'often'], /--resync: "often" is not a duration/],
  ['a negative stale-after', ['--provider', 'azure', '--stale-after', '-1s'], /--stale-after: "-1s" is not a duration/],
  ['a metadata URL that is not http', ['--provider', 'gcp', '--metadata-url', 'ftp://10.0.0.1/'], /--metadata-url/],
  ['a metadata URL that is no URL', ['--provider', 'gcp', '--metadata-url', 'metadata'], /--metadata-url/],
  ['a metadata timeout too short', ['--provider', 'gcp', '--metadata-timeout', '1ms'], /--metadata-timeout: 1ms is too short/],
  ['gcp without VIPs and without metadata', ['--provider', 'gcp', '--metadata-url', 'off'], /--provider gcp needs --vip IP or the metadata server/],
  ['a relative state directory', ['--provider', 'azure', '--state-dir', 'cloud-routes'], /--state-dir: "cloud-routes" is not an absolute path/],
  [
    'a state directory with a line break',
    ['--provider', 'azure', '--state-dir', '/run/a\nb'],
    /--state-dir: "\/run\/a\\nb" is not an absolute path without control characters/,
  ],
  [
    'the heartbeat directory equal to the state directory',
    ['--provider', 'azure', '--state-dir', '/tmp/kw-cli-same', '--heartbeat-dir', '/tmp/kw-cli-same/'],
    /--heartbeat-dir must not be --state-dir/,
  ],
  [
    'an unknown without-state-file reading',
    ['--provider', 'gcp', '--vip', '10.0.0.2', '--without-state-file', 'maybe'],
    /--without-state-file: expected up or down/,
  ],
  ['an unknown OVN setting', ['--provider', 'azure', '--ovn-reroute', 'on'], /--ovn-reroute: expected auto or off/],
  [
    'an OVN node name that would end the match string',
    ['--provider', 'azure', '--ovn-node-name', 'm1" || 1 || "'],
    /--ovn-node-name: "m1\\" \|\| 1 \|\| \\"" is not a node name/,
  ],
  ['an upper-case OVN node name', ['--provider', 'azure', '--ovn-node-name', 'Master-0'], /--ovn-node-name: "Master-0" is not a node name/],
  ['an unknown flag', ['--provider', 'azure', '--vips', '10.0.0.2'], /unknown option '--vips'/],
];

for (const [what, args, message] of cases) {
  test(`bad input, ${what}: exit 2, one line naming the flag, no stack trace`, async () => {
    const r = await routes(args);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.split('\n').length, 1, r.stderr);
    assert.doesNotMatch(r.stderr, /^\s+at |Error:|node:internal/m, 'no stack trace');
  });
}

test('bad input, a resync beyond the timer range: exit 2 naming --resync', async () => {
  const r = await routes(['--provider', 'azure', '--resync', '1000h']);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /--resync/);
});

test(`the table covers ${cases.length} bad inputs`, () => {
  assert.ok(cases.length >= 40);
});
