/**
 * A JSON value with every repeated object and array written once.
 *
 * A design repeats itself from node to node: the nodes of one rack and host
 * profile have equal labels, sources, annotations and taints. Written as
 * plain JSON, 50,000 nodes are 106 MB, and reading them back allocates
 * millions of objects. Written as a table of distinct objects and arrays,
 * each naming its children by position, a value is read back as one object
 * per distinct value, shared wherever it repeats: a fraction of the time and
 * memory. Read-back values are therefore shared, and must not be changed.
 *
 * The table is a JSON array. Entry `i` is `["o", key, child, key, child...]`
 * for an object or `["a", child...]` for an array; a child is a string,
 * number, boolean or null as it is, or `[j]` for entry `j < i` (no object or
 * array is ever a child as it is, so `[j]` is never data). The last entry is
 * the value. As `JSON.stringify` does, object members whose value is
 * undefined (or a function) are left out and such array elements are null.
 */

type Entry = ['o', ...unknown[]] | ['a', ...unknown[]];

/** The table of `value` (an object or array), as JSON text. */
export function stringifyShared(value: object): string {
  const table: string[] = [];
  const index = new Map<string, number>();
  const childOf = (v: unknown): unknown => {
    if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
    if (typeof v === 'number') return Number.isFinite(v) ? v : null;
    if (typeof v === 'object') return [add(v)];
    return undefined;
  };
  const add = (v: object): number => {
    let entry: Entry;
    if (Array.isArray(v)) {
      entry = ['a', ...v.map((item) => childOf(item) ?? null)];
    } else {
      entry = ['o'];
      for (const [key, item] of Object.entries(v)) {
        const child = childOf(item);
        if (child !== undefined) entry.push(key, child);
      }
    }
    const text = JSON.stringify(entry);
    let i = index.get(text);
    if (i === undefined) {
      i = table.push(text) - 1;
      index.set(text, i);
    }
    return i;
  };
  // A value is never equal to a part of itself, so it is the last entry.
  add(value);
  return `[${table.join(',\n')}]`;
}

/** The value {@link stringifyShared} wrote; throws when `text` is not such a table. */
export function parseShared(text: string): unknown {
  const table: unknown = JSON.parse(text);
  if (!Array.isArray(table) || table.length === 0) throw new Error('not a shared JSON table');
  const values: object[] = [];
  const child = (c: unknown, at: number): unknown => {
    if (c === null || typeof c !== 'object') return c;
    const j = Array.isArray(c) && c.length === 1 ? c[0] : undefined;
    if (typeof j !== 'number' || !Number.isInteger(j) || j < 0 || j >= at) throw new Error(`shared JSON entry ${at} names no earlier entry`);
    return values[j];
  };
  for (let i = 0; i < table.length; i++) {
    const entry: unknown = table[i];
    if (!Array.isArray(entry)) throw new Error(`shared JSON entry ${i} is not an array`);
    if (entry[0] === 'a') {
      const array = new Array<unknown>(entry.length - 1);
      for (let k = 1; k < entry.length; k++) array[k - 1] = child(entry[k], i);
      values.push(array);
    } else if (entry[0] === 'o' && entry.length % 2 === 1) {
      const object: Record<string, unknown> = {};
      for (let k = 1; k < entry.length; k += 2) {
        const key = entry[k];
        if (typeof key !== 'string') throw new Error(`shared JSON entry ${i} has a key that is not a string`);
        // Own data property even for "__proto__", as JSON.parse makes it.
        if (key === '__proto__') Object.defineProperty(object, key, { value: child(entry[k + 1], i), enumerable: true, writable: true, configurable: true });
        else object[key] = child(entry[k + 1], i);
      }
      values.push(object);
    } else {
      throw new Error(`shared JSON entry ${i} is neither an object nor an array`);
    }
  }
  return values[values.length - 1];
}
