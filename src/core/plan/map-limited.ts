/**
 * Bounded concurrency over a list: what the activities' reads of named
 * nodes, the plugin polls and the fleet's health reads share. No I/O of
 * its own; `fn` does the I/O.
 */

/** `fn` over `items`, at most `limit` calls at once; the results in the items' order. Rejects with the first call that does. */
export async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lane = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}
