// A proxy peer as the bench's A/B scripts (burst-latency.ts, paced-sched.ts) take it on the command
// line: one of the bench's peers, or a kubeward build elsewhere with extra flags ("label=path@flags").
import { join } from 'node:path';
import type { ProxyPeer } from './bench-stats.ts';

export interface PeerSpec {
  label: string;
  peer: ProxyPeer;
  main: string;
  /** Node and V8 flags in front of main (bin/kubeward.js adds the shipped ones it does not find; a later flag wins). */
  nodeArgs: string[];
  extraArgs: string[];
}

/**
 * "nginx", "kubeward", ... or "LABEL=[--node-flag ...] /path/to/bin/kubeward.js[@--proxy-flag value ...]";
 * repo is this checkout.
 */
export function parsePeer(text: string, repo: string): PeerSpec {
  const m = /^([\w.-]+)=([^@]+)(?:@(.*))?$/.exec(text);
  if (m) {
    const words = m[2]!.split(' ').filter(Boolean);
    const main = words.pop();
    if (main === undefined || main.startsWith('-')) throw new Error(`--peer ${text}: no path to bin/kubeward.js after the node flags`);
    return { label: m[1]!, peer: 'kubeward', main, nodeArgs: words, extraArgs: m[3] ? m[3].split(' ').filter(Boolean) : [] };
  }
  if (!['kubeward', 'kubeward-2', 'nginx', 'nginx-2', 'haproxy'].includes(text)) throw new Error(`--peer ${text}: not a peer`);
  return { label: text, peer: text as ProxyPeer, main: join(repo, 'bin/kubeward.js'), nodeArgs: [], extraArgs: [] };
}
