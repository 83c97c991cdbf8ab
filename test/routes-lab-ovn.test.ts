// kubeward routes and OVN-Kubernetes' shared gateway (OCPBUGS-9972, OCPBUGS-17841): against a real
// OVN northbound database (ovsdb-server with OVN's own schema, driven by the real ovn-nbctl), with a
// crictl stand-in that runs the command instead of entering the ovnkube-controller container, and
// an ovn-k8s-mp0 link (one end of a veth pair) in the node's namespace. What this proves: the policies OpenShift's
// scripts keep are created, withdrawn and cleaned up in OVN's database as they would be; what it
// cannot prove: OVN's data path (no ovn-northd or ovn-controller runs here).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execCommand } from '../src/sys/exec.ts';
import { waitFor } from '../testkit/wait-for.ts';
import { NODE, REPO, labSkipReason } from './lab/lab-net.ts';
import { noteTierSkip } from '../testkit/test-tiers.ts';
import { VIP4 } from './lab/cloud-lab.ts';
import { newLab, publish } from './lab/lab-fixtures.ts';
import { RoutesProcess, makeStateDir } from './lab/routes-process.ts';

const SCHEMA = process.env.KUBEWARD_OVN_NB_SCHEMA ?? '/usr/share/ovn/ovn-nb.ovsschema';

async function ovnSkipReason(): Promise<string | undefined> {
  const lab = await labSkipReason();
  if (lab) return lab;
  for (const tool of ['ovsdb-server', 'ovsdb-tool', 'ovn-nbctl']) {
    const r = await execCommand(['sh', '-c', `command -v ${tool}`], { okCodes: [0, 1, 127] });
    if (r.code !== 0) return `needs ${tool} (Debian: ovn-common, openvswitch-common)`;
  }
  if (!existsSync(SCHEMA)) return `needs OVN's northbound schema at ${SCHEMA} (Debian: ovn-central, or set KUBEWARD_OVN_NB_SCHEMA)`;
  return undefined;
}

const skip = (await ovnSkipReason()) ?? false;
noteTierSkip('root', skip);

/** A northbound database in a temporary directory, served on a unix socket; removed in t.after. */
async function startNbDb(t: { after: (fn: () => Promise<void>) => void }): Promise<{ db: string; nbctl: (...args: string[]) => Promise<string> }> {
  const dir = await mkdtemp(join(tmpdir(), 'kwl-ovn-'));
  await execCommand(['ovsdb-tool', 'create', join(dir, 'nb.db'), SCHEMA]);
  const sock = join(dir, 'nb.sock');
  const server = spawn('ovsdb-server', [`--remote=punix:${sock}`, `--unixctl=${join(dir, 'ctl')}`, '--no-chdir', join(dir, 'nb.db')], { stdio: 'ignore' });
  t.after(async () => {
    server.kill('SIGTERM');
    await new Promise((r) => (server.exitCode === null ? server.once('exit', r) : r(undefined)));
    await rm(dir, { recursive: true, force: true });
  });
  const db = `unix:${sock}`;
  await waitFor(() => existsSync(sock), { what: 'ovsdb-server socket' });
  const nbctl = async (...args: string[]) => (await execCommand(['ovn-nbctl', `--db=${db}`, ...args])).stdout;
  return { db, nbctl };
}

/** crictl as far as the reroute code uses it: `ps` names one container, `exec -i ID CMD...` runs CMD. */
async function crictlStandin(t: { after: (fn: () => Promise<void>) => void }, db: string): Promise<string> {
  const bin = await mkdtemp(join(tmpdir(), 'kwl-bin-'));
  t.after(() => rm(bin, { recursive: true, force: true }));
  await writeFile(
    join(bin, 'crictl'),
    `#!/bin/sh\ncase "$1" in\n  ps) echo 0123456789abcdef ;;\n  exec) shift 3; OVN_NB_DB='${db}' exec "$@" ;;\n  *) exit 2 ;;\nesac\n`,
    { mode: 0o755 },
  );
  return bin;
}

test("[ovn] up VIPs get this node's reroute policy in ovn_cluster_router, down VIPs lose it, --clean-up removes only ours", { skip }, async (t) => {
  const lab = await newLab(t, 'azure');
  const m1 = lab.master('m1');
  const { db, nbctl } = await startNbDb(t);
  await nbctl('lr-add', 'ovn_cluster_router');
  // Someone else's policies at the same priority and elsewhere: never touched.
  await nbctl('lr-policy-add', 'ovn_cluster_router', '1010', `inport == "rtos-other" && ip4.dst == ${VIP4}`, 'reroute', '10.129.0.2');
  await nbctl('lr-policy-add', 'ovn_cluster_router', '102', 'ip4.src == 10.128.0.0/14 && ip4.dst == 10.128.0.0/14', 'allow');
  await lab.net.batch('m1', [
    'link add ovn-k8s-mp0 type veth peer name mp0-peer',
    'link set ovn-k8s-mp0 up',
    'link set mp0-peer up',
    'addr add 10.128.0.2/23 dev ovn-k8s-mp0',
  ]);
  const bin = await crictlStandin(t, db);
  const dir = await makeStateDir(t);
  await publish(dir, VIP4, 'up');
  const env = { PATH: `${bin}:${process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'}` };
  const args = ['--provider', 'azure', '--state-dir', dir, '--resync', '1s', '--ovn-node-name', 'm1'];
  const policies = async () =>
    (await nbctl('lr-policy-list', 'ovn_cluster_router'))
      .split('\n')
      .map((l) => l.trim().replace(/\s+/g, ' '))
      .filter((l) => /^\d/.test(l))
      .sort();
  const ours = `1010 inport == "rtos-m1" && ip4.dst == ${VIP4} reroute 10.128.0.2`;
  const theirs = [`1010 inport == "rtos-other" && ip4.dst == ${VIP4} reroute 10.129.0.2`, '102 ip4.src == 10.128.0.0/14 && ip4.dst == 10.128.0.0/14 allow'];

  const routes = await RoutesProcess.start(lab.net, 'm1', m1.agent, args, env);
  t.after(() => routes.stop().then(() => undefined));
  await waitFor(async () => (await policies()).includes(ours), { timeoutMs: 5000, what: 'our reroute policy' });
  assert.deepEqual(await policies(), [ours, ...theirs].sort());
  assert.ok(
    routes.logs.some((l) => l.includes('ovn_cluster_router reroute policies')),
    'start-up says it is covered',
  );

  await publish(dir, VIP4, 'down');
  await waitFor(async () => !(await policies()).includes(ours), { timeoutMs: 5000, what: 'policy withdrawn on down' });
  assert.deepEqual(await policies(), [...theirs].sort(), 'only ours went');
  await publish(dir, VIP4, 'up');
  await waitFor(async () => (await policies()).includes(ours), { timeoutMs: 5000, what: 'policy back on up' });
  assert.equal(await routes.stop(), 0);
  assert.ok((await policies()).includes(ours), 'kept across a stop, like the nat rules');

  const r = await lab.net.exec('m1', [
    'env',
    `PATH=${env.PATH}`,
    NODE,
    join(REPO, 'src', 'cli', 'main.ts'),
    'routes',
    '--provider',
    'azure',
    '--clean-up',
    '--ovn-node-name',
    'm1',
    '--admin-address',
    'off',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(await policies(), [...theirs].sort(), '--clean-up removed ours and nothing else');
});
