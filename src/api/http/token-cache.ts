/**
 * A bounded cache of validated tokens: each entry lives until its own
 * deadline, and past `maxEntries` the least recently used entry goes. A
 * Map keeps insertion order, so moving an entry to the end on every hit
 * makes the first key the least recently used one; twenty lines do what a
 * dependency would.
 */

/** What {@link TokenCache} needs: its bound and a clock (ms since the epoch). */
export interface TokenCacheOptions {
  maxEntries: number;
  now?: () => number;
}

/**
 * A least-recently-used cache with a deadline per entry. Never holds more
 * than `maxEntries` entries; an entry past its deadline is never returned.
 */
export class TokenCache<V> {
  readonly #entries = new Map<string, { value: V; until: number }>();
  readonly #max: number;
  readonly #now: () => number;

  constructor(options: TokenCacheOptions) {
    if (!Number.isInteger(options.maxEntries) || options.maxEntries < 1) throw new Error(`a token cache holds at least 1 entry, not ${options.maxEntries}`);
    this.#max = options.maxEntries;
    this.#now = options.now ?? Date.now;
  }

  /** The value under `key` while its deadline has not passed (and it becomes the most recently used); else undefined. */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    this.#entries.delete(key);
    if (entry.until <= this.#now()) return undefined;
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Keeps `value` under `key` until `until` (ms since the epoch); a deadline already past keeps nothing. */
  set(key: string, value: V, until: number): void {
    this.#entries.delete(key);
    if (until <= this.#now()) return;
    this.#entries.set(key, { value, until });
    while (this.#entries.size > this.#max) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }

  /** How many entries are held (expired ones not yet met included). */
  get size(): number {
    return this.#entries.size;
  }
}
