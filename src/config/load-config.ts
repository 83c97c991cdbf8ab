// Reads a mode's config: the YAML file (if any) under the flags, validated once by the mode's schema.
// Every error names where the bad value came from: the flag, or the file and its key.
import { readFile } from 'node:fs/promises';
import { safeParse } from 'zod/mini';
import type { core, output } from 'zod/mini';
import { UsageError, describeError } from '../base/errors.ts';
import { parseYamlInChildProcess, type YamlResult } from './yaml-process.ts';

export type RawConfig = Record<string, unknown>;

/** "healthUrl" → "--health-url". */
export function flagNameOf(key: string): string {
  return '--' + key.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
}

export async function readConfigFile(path: string): Promise<RawConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new UsageError(`--config ${path}: cannot read the file (${describeError(err)})`, { cause: err });
  }
  // Parsed in a process of its own (yaml-process.ts): the daemon never loads yaml.
  let parsed: YamlResult;
  try {
    parsed = await parseYamlInChildProcess(text);
  } catch (err) {
    throw new UsageError(`--config ${path}: cannot parse the file (${describeError(err)})`, { cause: err });
  }
  if ('error' in parsed) throw new UsageError(`${path}: not valid YAML: ${parsed.error}`);
  const data = parsed.data;
  if (data === null || data === undefined) return {};
  if (typeof data !== 'object' || Array.isArray(data)) {
    throw new UsageError(`${path}: the top level must be a mapping of keys to values`);
  }
  return data as RawConfig;
}

/**
 * Flags override the file key by key. The merged object is validated by the mode's schema; the
 * first problem becomes a UsageError naming its source.
 */
export function mergeConfig<S extends core.$ZodType>(schema: S, fileData: RawConfig, flags: RawConfig, filePath?: string): output<S> {
  const merged: RawConfig = { ...fileData };
  for (const [k, v] of Object.entries(flags)) if (v !== undefined) merged[k] = v;
  const result = safeParse(schema, merged);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw new UsageError(describeIssue(issue, fileData, flags, filePath));
}

const KIND_WORDS: Record<string, string> = {
  string: 'a text value',
  array: 'a list',
  object: 'a mapping of keys to values',
  number: 'a number',
  boolean: 'true or false',
  undefined: 'nothing',
  null: 'null',
};

const RECEIVED_WORDS: Record<string, string> = {
  string: 'text',
  array: 'a list',
  object: 'a mapping',
  number: 'a number',
  boolean: 'true/false',
  null: 'an empty value',
};

/** zod's own wording ("Invalid input: expected string, received number") in the words of a config file. */
export function issueText(issue: core.$ZodIssue): string {
  const m = /^Invalid input: expected (\w+), received (\w+)$/.exec(issue.message);
  if (m) {
    const want = KIND_WORDS[m[1]!] ?? m[1]!;
    return m[2] === 'undefined' ? `is required (${want})` : `expected ${want}, not ${RECEIVED_WORDS[m[2]!] ?? m[2]!}`;
  }
  const size = /^Too (small|big): expected (\w+) to have ([<>]=?)(\d+) (\w+)$/.exec(issue.message);
  if (size) return `expected ${size[1] === 'small' ? 'at least' : 'at most'} ${size[4]} ${size[5]}`;
  return issue.message;
}

function describeIssue(issue: core.$ZodIssue, fileData: RawConfig, flags: RawConfig, filePath?: string): string {
  issue = { ...issue, message: issueText(issue) };
  const [top, ...rest] = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') {
    const where = issue.path.length ? issue.path.join('.') + '.' : '';
    return `${filePath ?? 'config'}: unknown key ${issue.keys.map((k) => `"${where}${k}"`).join(', ')}; check the spelling against --help`;
  }
  if (top === undefined) return `config: ${issue.message}`;
  if (flags[top] !== undefined) {
    const idx = rest.length && /^\d+$/.test(rest[0]!) ? ` (value ${Number(rest[0]) + 1})` : '';
    return `${flagNameOf(top)}${idx}: ${issue.message}`;
  }
  if (fileData[top] !== undefined) return `${filePath ?? 'config'}: key "${issue.path.join('.')}": ${issue.message}`;
  // In neither place (a required value left out): name the flag, which is how most set it.
  return `${flagNameOf(top)}${rest.length ? ` (key "${issue.path.join('.')}")` : ''}: ${issue.message}`;
}
