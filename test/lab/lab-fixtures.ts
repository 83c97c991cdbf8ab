// Per-test set-up shared by the routes lab scenarios: a fresh cloud lab torn down in t.after,
// state files written the way kubeward watch writes them, the GCP metadata stand-in, and a stand-in
// for "another healthy GCP backend" that accepts the forwarded IPs.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { removeIfExists, writeFileAtomic } from '../../src/sys/atomic-file.ts';
import { CloudLab, INGRESS_VIP, METADATA_IP, VIP4, VIP6, type CloudStyle } from './cloud-lab.ts';
import { NODE } from './lab-net.ts';

type AfterHook = { after: (fn: () => Promise<void>) => void };

export async function newLab(t: AfterHook, style: CloudStyle, masters = 2): Promise<CloudLab> {
  const lab = await CloudLab.create(style, masters);
  t.after(() => lab.destroy());
  for (const m of lab.masters) await m.agent.serve(m.name);
  return lab;
}

/** Publishes a VIP's state as kubeward watch does: the new file atomically, then the old one removed. */
export async function publish(dir: string, vip: string, state: 'up' | 'down', heartbeat?: Date): Promise<void> {
  const content = heartbeat
    ? JSON.stringify({ state, since: heartbeat.toISOString(), reason: 'lab', pid: process.pid, generation: 1, heartbeat: heartbeat.toISOString() }) + '\n'
    : '';
  await writeFileAtomic(join(dir, `${vip}.${state}`), content);
  await removeIfExists(join(dir, `${vip}.${state === 'up' ? 'down' : 'up'}`));
}

/**
 * What kubeward routes (or the old gcp-routes script) does on every GCP backend: accept traffic
 * to the forwarded IPs. Used on nodes other than the one under test.
 */
export async function acceptForwardedIps(lab: CloudLab, node: string): Promise<void> {
  await lab.net.nft(
    node,
    `table inet standin-gcp-routes {\n chain pre {\n  type nat hook prerouting priority -100; policy accept;\n  ip daddr { ${VIP4}, ${INGRESS_VIP} } redirect\n  ip6 daddr ${VIP6} redirect\n }\n}\n`,
  );
}

export interface MetadataControl {
  mode: 'ok' | 'error500' | 'garbage' | 'hang' | 'no-flavor';
  nics: { ips?: string[]; ipv6s?: string[] }[];
}

/** Starts the metadata stand-in in lb; returns the URL for --metadata-url and a setter. */
export async function startMetadata(
  lab: CloudLab,
  stateDir: string,
  control: MetadataControl,
): Promise<{ url: string; set: (c: MetadataControl) => Promise<void> }> {
  // Kept in the state directory: kubeward routes must ignore files that are not VIP state files.
  const file = join(stateDir, 'metadata-control.json');
  const set = (c: MetadataControl) => writeFile(file, JSON.stringify(c));
  await set(control);
  const child = lab.net.spawn('lb', [NODE, join(import.meta.dirname, 'metadata-standin-main.ts'), '--host', METADATA_IP, '--port', '80', '--file', file]);
  child.stderr!.resume();
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`metadata stand-in exited ${code}`)));
    createInterface({ input: child.stdout! }).once('line', () => resolve());
  });
  return { url: `http://${METADATA_IP}/computeMetadata/v1/`, set };
}
