/**
 * Multi-row statements over both SQL backends: rows travel in VALUES lists
 * of at most {@link BATCH} rows, so 50,000 rows are a hundred statements.
 */

/** Rows per multi-row statement (at most 8 values a row: well under both backends' parameter limits). */
export const BATCH = 500;

/** `count` rows of placeholders, one per type; the first row's are cast so PostgreSQL knows the VALUES column types. */
export function valueRows(count: number, types: readonly string[]): string {
  const first = `(${types.map((type) => `CAST(? AS ${type})`).join(', ')})`;
  const plain = `(${types.map(() => '?').join(', ')})`;
  return [first, ...Array.from({ length: count - 1 }, () => plain)].join(', ');
}

/** Split `items` into consecutive chunks of at most {@link BATCH}. */
export function* batches<T>(items: readonly T[]): Generator<{ start: number; chunk: readonly T[] }> {
  for (let start = 0; start < items.length; start += BATCH) yield { start, chunk: items.slice(start, start + BATCH) };
}
