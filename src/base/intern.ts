// One copy of a string that many long-lived objects hold with equal contents (the same endpoint URL
// in the Keystone catalog of every project of a region). JSON.parse gives each response its own
// copies; a cluster's catalog lives as long as its token, so a thousand clusters kept a thousand
// copies of each URL. The table belongs to whoever makes it: the operator makes one for every
// cluster's OpenStack client (create-openstack-client.ts, OpenStackShared).

/** Characters the table holds at most (about 1 MiB); past it a new string is returned as it is. A fleet's catalogs need a few KiB. */
const MAX_CHARS = 1 << 20;
/** Longer strings are not worth a table entry: they are unlikely to repeat. */
const MAX_LENGTH = 4096;

export class InternTable {
  readonly #table = new Map<string, string>();
  #chars = 0;

  /** The table's copy of `s`, or `s` itself when it is new (kept for next time while there is room). */
  readonly intern = (s: string): string => {
    if (s.length > MAX_LENGTH) return s;
    const hit = this.#table.get(s);
    if (hit !== undefined) return hit;
    // Callers pass values of JSON.parse: strings of their own, not slices of the response body.
    if (this.#chars + s.length <= MAX_CHARS) {
      this.#table.set(s, s);
      this.#chars += s.length;
    }
    return s;
  };

  /** How many strings and characters the table holds. */
  get size(): { strings: number; chars: number } {
    return { strings: this.#table.size, chars: this.#chars };
  }
}
