// The last good discovered upstream lists, persisted so that a node rebooting while the control
// plane moved still finds it (k3s keeps the same kind of file). One file, lists by frontend name.
import { readFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { array, literal, minLength, record, string, strictObject } from 'zod/mini';
import { describeError } from '../base/errors.ts';
import { formatHostPort, hostPort, type HostPort } from '../config/fields.ts';
import { writeFileAtomic } from '../sys/atomic-file.ts';

export const CACHE_KIND = 'KubewardProxyUpstreams';

const cacheSchema = strictObject({
  kind: literal(CACHE_KIND),
  version: literal(1),
  frontends: record(string(), strictObject({ upstreams: array(hostPort).check(minLength(1)), updatedAt: string() })),
});

export type CacheRead = { ok: true; lists: Map<string, HostPort[]> } | { ok: false; missing: boolean; problem: string };

/** Parses a cache file's text. Pure. A corrupt or foreign file is a problem to report, never an exception. */
export function parseUpstreamCache(text: string): CacheRead {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    return { ok: false, missing: false, problem: `not JSON (${describeError(err)})` };
  }
  const parsed = cacheSchema.safeParse(data);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    return { ok: false, missing: false, problem: `not a kubeward proxy upstream cache (${i.path.join('.') || 'top level'}: ${i.message})` };
  }
  return { ok: true, lists: new Map(Object.entries(parsed.data.frontends).map(([name, f]) => [name, f.upstreams])) };
}

export function renderUpstreamCache(lists: ReadonlyMap<string, readonly HostPort[]>, now: Date): string {
  const frontends = Object.fromEntries([...lists].map(([name, ups]) => [name, { upstreams: ups.map(formatHostPort), updatedAt: now.toISOString() }]));
  return JSON.stringify({ kind: CACHE_KIND, version: 1, frontends }, null, 2) + '\n';
}

export async function readUpstreamCache(path: string): Promise<CacheRead> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    const missing = (err as NodeJS.ErrnoException).code === 'ENOENT';
    return { ok: false, missing, problem: missing ? 'no cache file yet' : `cannot read (${describeError(err)})` };
  }
  return parseUpstreamCache(text);
}

/** Writes atomically (the old file or the new one, never half of one); creates the directory. */
export async function writeUpstreamCache(path: string, lists: ReadonlyMap<string, readonly HostPort[]>, now = new Date()): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await writeFileAtomic(path, renderUpstreamCache(lists, now), 0o644);
}
