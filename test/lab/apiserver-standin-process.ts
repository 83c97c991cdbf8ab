// The HTTPS apiserver stand-in as a process in a lab namespace, and which apiserver answers the VIP
// from a namespace: shared by the end-to-end lab tests of watch + routes (standalone and agent).
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { NODE, REPO, type LabNet } from './lab-net.ts';
import { VIP4 } from './cloud-lab.ts';
import type { NsAgent } from './ns-agent.ts';

/** Starts testkit/apiserver-standin-main.ts on [::]:6443 in ns; `command` writes to its stdin ("readyz fail"). */
export async function startStandin(net: LabNet, ns: string, name: string, certFile: string, keyFile: string) {
  const child = net.spawn(ns, [NODE, join(REPO, 'testkit', 'apiserver-standin-main.ts'), '--cert', certFile, '--key', keyFile, '--host', '::', '--port', '6443', '--name', name]);
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
