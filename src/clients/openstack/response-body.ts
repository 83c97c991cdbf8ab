// What a 200 from OpenStack must look like before anything trusts it. An HTML maintenance page, `{}`
// or a renamed key read as "no items" would make a caller believe every volume or server is gone;
// so a list body is accepted only when its key holds an array of objects, and anything else is an
// OpenStackBodyError. Pure, so a property test can throw arbitrary bodies at it.
import { OpenStackError } from './openstack-error.ts';

/** Which call a body came from, for the error message. */
export interface BodySource {
  service: string;
  method: string;
  path: string;
  status: number;
  requestId?: string;
}

export type BodyProblem = 'UnexpectedBody' | 'PagingLoop';

/** A 200 whose body cannot be trusted, or paging that does not end: refuse, never guess. */
export class OpenStackBodyError extends OpenStackError {
  readonly problem: BodyProblem;

  constructor(problem: BodyProblem, src: BodySource, message: string) {
    super('E_UPSTREAM', { ...src, faultType: problem, faultMessage: message, attempts: 1 });
    this.name = 'OpenStackBodyError';
    this.problem = problem;
  }
}

/** The response text as JSON; undefined for an empty body, the text itself when it is not JSON. */
export function parseResponseText(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function describeValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  if (v === null) return 'null';
  if (typeof v === 'string') return `text (${JSON.stringify(v.slice(0, 60))}${v.length > 60 ? '…' : ''})`;
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') {
    const keys = Object.keys(v);
    return keys.length === 0 ? 'an empty object' : `an object with keys ${keys.slice(0, 5).join(', ')}${keys.length > 5 ? ', …' : ''}`;
  }
  return typeof v;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export interface ListPage<T> {
  items: T[];
  /** The `<key>_links` array, when the service sent one. */
  links: { rel?: unknown; href?: unknown }[] | undefined;
}

/** One page of a list: `{"<key>": [{...}, ...], "<key>_links": [...]?}`, or an OpenStackBodyError. */
export function readListPage<T>(body: unknown, key: string, src: BodySource): ListPage<T> {
  if (!isPlainObject(body)) throw new OpenStackBodyError('UnexpectedBody', src, `expected a JSON object with "${key}", got ${describeValue(body)}`);
  if (!Object.hasOwn(body, key)) throw new OpenStackBodyError('UnexpectedBody', src, `expected "${key}" in the answer, got ${describeValue(body)}`);
  const items = body[key];
  if (!Array.isArray(items)) throw new OpenStackBodyError('UnexpectedBody', src, `"${key}" is ${describeValue(items)}, not a list`);
  const bad = items.findIndex((x) => !isPlainObject(x));
  if (bad >= 0) throw new OpenStackBodyError('UnexpectedBody', src, `"${key}"[${bad}] is ${describeValue(items[bad])}, not an object`);
  const linkKey = `${key}_links`;
  const links = body[linkKey];
  if (links !== undefined && !Array.isArray(links)) throw new OpenStackBodyError('UnexpectedBody', src, `"${linkKey}" is ${describeValue(links)}, not a list`);
  return { items: items as T[], links: links as ListPage<T>['links'] };
}

/** A single object: `{"<key>": {...}}`, or an OpenStackBodyError. */
export function readObjectBody<T>(body: unknown, key: string, src: BodySource): T {
  if (!isPlainObject(body)) throw new OpenStackBodyError('UnexpectedBody', src, `expected a JSON object with "${key}", got ${describeValue(body)}`);
  const obj = body[key];
  if (!isPlainObject(obj)) throw new OpenStackBodyError('UnexpectedBody', src, `"${key}" is ${describeValue(obj)}, not an object`);
  return obj as T;
}

/** A single array value: `{"<key>": [...]}` (Nova tags, extensions), or an OpenStackBodyError. */
export function readArrayBody<T>(body: unknown, key: string, src: BodySource): T[] {
  if (!isPlainObject(body)) throw new OpenStackBodyError('UnexpectedBody', src, `expected a JSON object with "${key}", got ${describeValue(body)}`);
  const arr = body[key];
  if (!Array.isArray(arr)) throw new OpenStackBodyError('UnexpectedBody', src, `"${key}" is ${describeValue(arr)}, not a list`);
  return arr as T[];
}
