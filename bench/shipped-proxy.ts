// How the bench's own harnesses (relay-ab.ts, burst-instructions.ts) run one kubeward proxy as
// shipped without bin/kubeward.js re-executing itself: its V8 flags up front (so the pid measured is
// the one that serves, and valgrind sees it from the start) and the proxy's arguments.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** bin/kubeward.js's DEFAULT_FLAGS, read from the file so a change there reaches the harnesses. */
export function shippedV8Flags(repo: string): string[] {
  const list = /const DEFAULT_FLAGS = \[([^\]]*)\]/.exec(readFileSync(join(repo, 'bin/kubeward.js'), 'utf8'))?.[1] ?? '';
  return [...list.matchAll(/'([^']+)'/g)].map((m) => m[1]!);
}

/** `kubeward proxy` on 127.0.0.1:listenPort to one upstream on 127.0.0.1, TCP checks, no admin listener, warnings only. */
export function bareProxyArgs(listenPort: number, upstreamPort: number, connectTimeout: string, extra: readonly string[] = []): string[] {
  return [
    'proxy',
    '--listen',
    `127.0.0.1:${listenPort}`,
    '--upstream',
    `127.0.0.1:${upstreamPort}`,
    '--health-check',
    'tcp',
    '--admin-address',
    'off',
    '--log-level',
    'warn',
    '--connect-timeout',
    connectTimeout,
    ...extra,
  ];
}
