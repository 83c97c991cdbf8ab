// Where clouds.yaml and secure.yaml are found, in the OpenStack SDK's order, and reading the first one.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';
import { KubewardError, describeError } from '../../base/errors.ts';

/** The process facts the lookup needs; the CLI passes process.env, process.cwd() and os.homedir(). */
export interface LookupEnvironment {
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  homeDir: string;
}

const SUFFIXES = ['.yaml', '.yml', '.json'];

/**
 * Candidate paths in the order openstacksdk (config/loader.py) tries them: the file named by the
 * override variable, then the current directory, the user's config directory and /etc/openstack.
 */
export function configFileCandidates(kind: 'clouds' | 'secure', where: LookupEnvironment): string[] {
  const override = where.env[kind === 'clouds' ? 'OS_CLIENT_CONFIG_FILE' : 'OS_CLIENT_SECURE_FILE'];
  const dirs = [where.cwd];
  const xdg = where.env.XDG_CONFIG_HOME;
  if (xdg) dirs.push(join(xdg, 'openstack'));
  dirs.push(join(where.homeDir, '.config', 'openstack'), '/etc/openstack');
  const files = dirs.flatMap((d) => SUFFIXES.map((s) => join(d, kind + s)));
  return [...(override ? [override] : []), ...new Set(files)];
}

export type ReadText = (path: string) => Promise<string | undefined>;

/** Reads a file, or undefined when it does not exist; other errors (permissions) are reported. */
export const readTextIfExists: ReadText = async (path) => {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw new KubewardError('E_CONFIG', `cannot read ${path}: ${describeError(err)}`, { cause: err });
  }
};

export interface FoundFile {
  path: string;
  doc: Record<string, unknown>;
}

/** The first candidate that exists, parsed (YAML is a superset of JSON), or undefined. */
export async function readFirstConfigFile(candidates: string[], read: ReadText = readTextIfExists): Promise<FoundFile | undefined> {
  for (const path of candidates) {
    const text = await read(path);
    if (text === undefined) continue;
    let doc: unknown;
    try {
      doc = parse(text);
    } catch (err) {
      // Line and column only: the parser's own message quotes the line, often a password.
      throw new KubewardError('E_CONFIG', `${path} is not valid YAML: ${describeError(err)}`, { cause: err });
    }
    if (doc === null || doc === undefined) return { path, doc: {} };
    if (typeof doc !== 'object' || Array.isArray(doc)) throw new KubewardError('E_CONFIG', `${path}: expected a mapping with a "clouds" key`);
    return { path, doc: doc as Record<string, unknown> };
  }
  return undefined;
}
