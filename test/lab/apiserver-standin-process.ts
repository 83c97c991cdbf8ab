// The HTTPS apiserver stand-in as a process in a lab namespace, and which apiserver answers the VIP
// from a namespace: shared by the end-to-end lab tests of watch + routes (standalone and agent).
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { createTestCa, type TestCa } from '../../testkit/certs.ts';
import { NODE, REPO, type LabNet } from './lab-net.ts';
import { VIP4, type CloudLab } from './cloud-lab.ts';
import { newLab } from './lab-fixtures.ts';
import type { NsAgent } from './ns-agent.ts';
import { makeStateDir } from './routes-process.ts';

type AfterHook = { after: (fn: () => Promise<void>) => void };

/**
 * Scenario 12's start: an azure lab with m2 behind the VIP's load balancer, HTTPS apiserver
 * stand-ins on m1 and m2 (port 6443, a certificate from a fresh test CA that covers the VIP), and an
 * empty state directory; everything is removed in t.after.
 */
export async function standinLab(t: AfterHook): Promise<{ lab: CloudLab; ca: TestCa; api1: Standin; dir: string }> {
  const lab = await newLab(t, 'azure');
  await lab.setBackends(['m2']);
  const ca = await createTestCa();
  t.after(() => ca.close());
  const cert = await ca.issueServer('apiserver', ['DNS:localhost', 'IP:127.0.0.1', 'IP:::1', `IP:${VIP4}`]);
  for (const m of lab.masters) await m.agent.unserve(m.name); // the HTTPS stand-ins take port 6443
  const api1 = await startStandin(lab.net, 'm1', 'm1', cert.certFile, cert.keyFile);
  await startStandin(lab.net, 'm2', 'm2', cert.certFile, cert.keyFile);
  return { lab, ca, api1, dir: await makeStateDir(t) };
}

export type Standin = Awaited<ReturnType<typeof startStandin>>;

/** Starts testkit/apiserver-standin-main.ts on [::]:6443 in ns; `command` writes to its stdin ("readyz fail"). */
export async function startStandin(net: LabNet, ns: string, name: string, certFile: string, keyFile: string) {
  const child = net.spawn(ns, [
    NODE,
    join(REPO, 'testkit', 'apiserver-standin-main.ts'),
    '--cert',
    certFile,
    '--key',
    keyFile,
    '--host',
    '::',
    '--port',
    '6443',
    '--name',
    name,
  ]);
  child.stderr!.resume();
  const lines = createInterface({ input: child.stdout! });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${name} stand-in exited ${code}`)));
    lines.once('line', () => resolve());
  });
  return { command: (line: string) => void child.stdin!.write(line + '\n') };
}

/** Which apiserver answers https://VIP:6443/version from this namespace (its name, or the error). */
export async function whoServes(agent: NsAgent): Promise<string> {
  const r = await agent.httpGet(`https://${VIP4}:6443/version`, 1500);
  return 'status' in r ? String((JSON.parse(r.body) as { server: string }).server) : `error:${r.error}`;
}
