// kubeward routes on the command line: bad usage exits 2 with one line naming the flag and the fix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execCommand } from '../src/sys/exec.ts';
import { kubewardArgv } from '../testkit/kubeward-process.ts';


async function routes(...args: string[]): Promise<{ code: number; stderr: string }> {
  const r = await execCommand(kubewardArgv(['routes', '--admin-address', 'off', ...args]), { okCodes: [0, 1, 2], timeoutMs: 20_000 });
  return { code: r.code, stderr: r.stderr.trim() };
}

const cases: [string, string[], RegExp][] = [
  ['a missing --provider', [], /--provider/],
  ['a port out of range', ['--provider', 'azure', '--ports', '6443,70000'], /--ports: "6443,70000" is not a port list/],
  ['node-ip without --node-ip', ['--provider', 'azure', '--nat-target', 'node-ip'], /--nat-target node-ip needs --node-ip/],
  ['a bad health-checker range', ['--provider', 'gcp', '--vip', '10.0.0.2', '--health-checker-cidr', '35.191.0.0'], /--health-checker-cidr.*not a CIDR/],
];

for (const [what, args, message] of cases) {
  test(`${what} is bad usage: exit 2 and one line saying so`, async () => {
    const r = await routes(...args);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.split('\n').length, 1, r.stderr);
  });
}
