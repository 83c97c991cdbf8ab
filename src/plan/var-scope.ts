// Variables as Ansible sees them from one host: layers from lowest to highest precedence (role
// defaults, group_vars, --vars files, host vars), each value's Jinja evaluated on first use in
// this same scope, so "{{ kube_config_dir }}/ssl" follows whichever layer set kube_config_dir.
import { JinjaError, isTemplate, renderTemplate, type Lookup } from './jinja.ts';
import type { Vars } from './raw-inventory.ts';

export class VarScope {
  readonly #layers: Vars[];
  readonly #cache = new Map<string, { found: true; value: unknown } | { found: false } | { error: JinjaError }>();
  readonly #resolving = new Set<string>();

  /** layers: lowest precedence first. */
  constructor(layers: Vars[]) {
    this.#layers = layers;
  }

  /** The raw (unevaluated) value and whether any layer sets it. */
  raw(name: string): unknown {
    for (let i = this.#layers.length - 1; i >= 0; i--) if (Object.hasOwn(this.#layers[i]!, name)) return this.#layers[i]![name];
    return undefined;
  }

  /** True when a layer above the role defaults (layer 0) sets the variable. */
  setByInventory(name: string): boolean {
    return this.#layers.slice(1).some((l) => Object.hasOwn(l, name) && l[name] !== null && l[name] !== undefined);
  }

  /** The evaluated value; throws JinjaError (naming the variable at fault) when it cannot be evaluated. */
  value(name: string): unknown {
    const r = this.#resolve(name);
    if ('error' in r) throw r.error;
    return r.found ? r.value : undefined;
  }

  readonly lookup: Lookup = (name) => {
    const r = this.#resolve(name);
    if ('error' in r) throw r.error;
    return r;
  };

  #resolve(name: string): { found: true; value: unknown } | { found: false } | { error: JinjaError } {
    const cached = this.#cache.get(name);
    if (cached) return cached;
    let result: { found: true; value: unknown } | { found: false } | { error: JinjaError };
    if (this.#resolving.has(name)) return { error: new JinjaError(name, `${name} refers to itself`) };
    this.#resolving.add(name);
    try {
      const raw = this.raw(name);
      // Ansible treats a key with an empty value (`kube_vip_address:`) as defined and None.
      const present = this.#layers.some((l) => Object.hasOwn(l, name));
      result = present ? { found: true, value: this.#deep(raw, 0) } : { found: false };
    } catch (err) {
      if (!(err instanceof JinjaError)) throw err;
      result = { error: err };
    } finally {
      this.#resolving.delete(name);
    }
    this.#cache.set(name, result);
    return result;
  }

  #deep(v: unknown, depth: number): unknown {
    if (depth > 20) throw new JinjaError('(nesting)', 'nested too deeply');
    if (isTemplate(v)) {
      const out = renderTemplate(v, this.lookup);
      // A value that renders to another template is evaluated again, as Ansible does.
      return isTemplate(out) ? this.#deep(out, depth + 1) : out;
    }
    if (Array.isArray(v)) return v.map((x) => this.#deep(x, depth + 1));
    if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, this.#deep(x, depth + 1)]));
    return v;
  }
}
