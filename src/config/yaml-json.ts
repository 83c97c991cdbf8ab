// What YAML's core schema gives that JSON cannot carry, across the pipe from the parser's process
// (yaml-to-json.ts) to readConfigFile: .inf, -.inf and .nan (JSON would make them null) and -0.
// Such a number travels as an object with the one key TAG; a key of the file that starts with
// PREFIX travels with one more PREFIX in front, so no key of the file is ever read as the tag.
// Everything else a parse returns (plain objects, arrays, strings, finite numbers, booleans, null)
// is JSON as it is.

const PREFIX = '\u0000kubeward:';
const TAG = `${PREFIX}number`;

/** The parsed value with every non-finite number and -0 replaced by a tagged object. */
export function encodeYamlValue(v: unknown): unknown {
  if (typeof v === 'number') return Number.isFinite(v) && !Object.is(v, -0) ? v : { [TAG]: Object.is(v, -0) ? '-0' : String(v) };
  if (Array.isArray(v)) return v.map(encodeYamlValue);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) defineOwn(out, k.startsWith(PREFIX) ? PREFIX + k : k, encodeYamlValue(x));
    return out;
  }
  return v;
}

/** The reverse of encodeYamlValue, on what JSON.parse gave. */
export function decodeYamlValue(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(decodeYamlValue);
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o);
    if (keys.length === 1 && keys[0] === TAG && typeof o[TAG] === 'string') return o[TAG] === '-0' ? -0 : Number(o[TAG]);
    const out: Record<string, unknown> = {};
    for (const k of keys) defineOwn(out, k.startsWith(PREFIX) ? k.slice(PREFIX.length) : k, decodeYamlValue(o[k]));
    return out;
  }
  return v;
}

/** out[k] = x, also for "__proto__" (an own key, as yaml and JSON.parse make it, not the prototype). */
function defineOwn(out: Record<string, unknown>, k: string, x: unknown): void {
  Object.defineProperty(out, k, { value: x, enumerable: true, writable: true, configurable: true });
}
