// The privileges the shipped manifests and units grant are the ones the kernel asks for: each mode
// runs with exactly what its manifest or unit gives it (setpriv: the same user, capability bounding
// set and ambient set, no_new_privs) and fails without it. routes, the agent static pod and the
// agent unit program nftables with NET_ADMIN alone and cannot without it; watch cannot take its lock
// in the root-owned /run/cloud-routes as the image's user, which is why its pod runs as root.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { IMAGE_UID } from '../../src/manifests/pod-parts.ts';
import { shippedManifests } from '../../src/manifests/shipped-manifests.ts';
import { MAIN, NODE } from '../../testkit/kubeward-process.ts';
import { waitFor } from '../../testkit/wait-for.ts';

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, '../..');
const canRun = process.getuid?.() === 0 && (await run('setpriv', ['--version']).then(() => true, () => false));
const skip = canRun ? false : 'needs root and setpriv (util-linux) for network namespaces and capability sets';

interface Grant {
  uid: number;
  /** Capabilities as setpriv names them (net_admin). */
  caps: string[];
}

/** `kubeward ARGS` in network namespace `ns` with exactly `g`; resolves with its output once `until` matches, then stops it. */
async function runWith(ns: string, g: Grant, args: string[], until: RegExp): Promise<string> {
  const set = (caps: string[]) => ['-all', ...caps.map((c) => `+${c}`)].join(',');
  const priv = [`--reuid=${g.uid}`, `--regid=${g.uid}`, '--clear-groups', `--inh-caps=${set(g.caps)}`, `--bounding-set=${set(g.caps)}`, '--no-new-privs'];
  // A non-root user keeps capabilities across execve (of node, then nft) only as ambient ones, as systemd's AmbientCapabilities= gives them.
  if (g.uid !== 0 && g.caps.length > 0) priv.splice(4, 0, `--ambient-caps=${g.caps.map((c) => `+${c}`).join(',')}`);
  const child = spawn('ip', ['netns', 'exec', ns, 'setpriv', ...priv, NODE, MAIN, ...args, '--log-format', 'text'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise((r) => child.once('exit', r));
  try {
    await waitFor(() => until.test(out) || child.exitCode !== null, { timeoutMs: 30_000, intervalMs: 50, what: `${until} in the output of kubeward ${args[0]}` });
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
  return out;
}

const tables = async (ns: string) => (await run('ip', ['netns', 'exec', ns, 'nft', 'list', 'tables'])).stdout;

/** The capabilities a shipped manifest adds to its container `name`. */
function manifestCaps(path: string, name: string): string[] {
  const obj = shippedManifests().find((m) => m.path === path)!.object as {
    spec: { containers?: Container[]; template?: { spec: { containers: Container[] } } };
  };
  const c = (obj.spec.containers ?? obj.spec.template!.spec.containers).find((x) => x.name === name)!;
  assert.deepEqual(c.securityContext.capabilities.drop, ['ALL'], `${path} ${name}: every capability dropped first`);
  return (c.securityContext.capabilities.add ?? []).map((x) => x.toLowerCase());
}
interface Container {
  name: string;
  securityContext: { runAsUser: number; capabilities: { drop: string[]; add?: string[] } };
}

/** AmbientCapabilities= and CapabilityBoundingSet= of a unit, as setpriv names them. */
async function unitCaps(path: string): Promise<{ ambient: string[]; bounding: string[] }> {
  const text = await readFile(join(ROOT, path), 'utf8');
  const list = (key: string) =>
    (new RegExp(`^${key}=(.*)$`, 'm').exec(text)?.[1] ?? '')
      .split(/\s+/)
      .filter(Boolean)
      .map((c) => c.replace(/^CAP_/, '').toLowerCase());
  return { ambient: list('AmbientCapabilities'), bounding: list('CapabilityBoundingSet') };
}

describe('least privilege, shown by the kernel', { skip }, () => {
  const ns = `kwpriv-${process.pid}`;
  let dir: string;
  before(async () => {
    await run('ip', ['netns', 'add', ns]);
    dir = await mkdtemp(join(tmpdir(), 'kw-priv-'));
    await chmod(dir, 0o755); // the non-root users below reach their files through it
  });
  after(async () => {
    await run('ip', ['netns', 'del', ns]).catch(() => undefined);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('routes (static pod and DaemonSet): root with NET_ADMIN alone programs nftables; without NET_ADMIN the kernel refuses', async () => {
    const caps = manifestCaps('deploy/routes/static-pod.yaml', 'routes');
    assert.deepEqual(caps, ['net_admin']);
    assert.deepEqual(manifestCaps('deploy/node-agents/daemonset.yaml', 'routes'), caps, 'the DaemonSet grants what the static pod does');
    const state = join(dir, 'routes');
    await mkdir(state);
    const args = ['routes', '--provider', 'azure', '--state-dir', state, '--admin-address', 'off'];
    const refused = await runWith(ns, { uid: 0, caps: [] }, args, /Operation not permitted/);
    assert.match(refused, /nft -f - failed .*Operation not permitted/);
    assert.doesNotMatch(await tables(ns), /kubeward-routes/, 'no table without NET_ADMIN');
    const applied = await runWith(ns, { uid: 0, caps }, args, /rules applied/);
    assert.doesNotMatch(applied, /not permitted/);
    assert.match(await tables(ns), /table inet kubeward-routes/);
    await run('ip', ['netns', 'exec', ns, 'nft', 'delete', 'table', 'inet', 'kubeward-routes']);
  });

  test('the agent static pod: the same one capability, root', async () => {
    assert.deepEqual(manifestCaps('deploy/agent/static-pod.yaml', 'agent'), ['net_admin']);
    const config = join(dir, 'agent-pod.yaml');
    const state = join(dir, 'agent-pod');
    await mkdir(state);
    await writeFile(config, `routes: { provider: azure, stateDir: ${state} }\n`);
    const args = ['agent', '--config', config, '--admin-address', 'off'];
    assert.match(await runWith(ns, { uid: 0, caps: [] }, args, /Operation not permitted/), /not permitted/);
    assert.doesNotMatch(await tables(ns), /kubeward-routes/);
    await runWith(ns, { uid: 0, caps: ['net_admin'] }, args, /rules applied/);
    assert.match(await tables(ns), /table inet kubeward-routes/);
    await run('ip', ['netns', 'exec', ns, 'nft', 'delete', 'table', 'inet', 'kubeward-routes']);
  });

  test("the agent's systemd unit: a non-root user with the unit's ambient NET_ADMIN programs nftables; without it the kernel refuses", async () => {
    const unit = await unitCaps('deploy/agent/kubeward-agent.service');
    assert.deepEqual(unit, { ambient: ['net_admin'], bounding: ['net_admin'] });
    assert.match(await readFile(join(ROOT, 'deploy/agent/kubeward-agent.service'), 'utf8'), /^DynamicUser=yes$/m, 'the unit runs as a user of its own');
    // A user with no other role on this machine, owning the state directory as RuntimeDirectory= makes it.
    const uid = 61_000 + (process.pid % 1000);
    const config = join(dir, 'agent-unit.yaml');
    const state = join(dir, 'agent-unit');
    await mkdir(state);
    await chown(state, uid, uid);
    await writeFile(config, `routes: { provider: azure, stateDir: ${state} }\n`);
    const args = ['agent', '--config', config, '--admin-address', 'off'];
    assert.match(await runWith(ns, { uid, caps: [] }, args, /Operation not permitted/), /not permitted/);
    assert.doesNotMatch(await tables(ns), /kubeward-routes/);
    await runWith(ns, { uid, caps: unit.ambient }, args, /rules applied/);
    assert.match(await tables(ns), /table inet kubeward-routes/);
    await run('ip', ['netns', 'exec', ns, 'nft', 'delete', 'table', 'inet', 'kubeward-routes']);
  });

  test("watch: the image's user cannot take its lock in a root-owned state directory, so its pod runs as root (without capabilities)", async () => {
    const pod = shippedManifests().find((m) => m.path === 'deploy/watch/static-pod.yaml')!.object as { spec: { containers: Container[] } };
    assert.equal(pod.spec.containers[0]!.securityContext.runAsUser, 0);
    assert.deepEqual(manifestCaps('deploy/watch/static-pod.yaml', 'watch'), []);
    // As kubelet's hostPath DirectoryOrCreate makes /run/cloud-routes: root's, 0755.
    const state = join(dir, 'cloud-routes');
    await mkdir(state, { mode: 0o755 });
    const args = ['watch', '--vip', '192.0.2.10', '--health-url', 'https://127.0.0.1:9/readyz', '--insecure-skip-tls-verify', '--state-dir', state, '--admin-address', 'off'];
    const denied = await runWith(ns, { uid: IMAGE_UID, caps: [] }, args, /cannot lock/);
    assert.match(denied, new RegExp(`--state-dir ${state}: cannot lock .*Permission denied`));
    const asRoot = await runWith(ns, { uid: 0, caps: [] }, args, /192\.0\.2\.10/);
    assert.doesNotMatch(asRoot, /cannot lock/);
  });
});
