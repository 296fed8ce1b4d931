/**
 * How any message repeats a value it was given: cut to a bound, so no
 * message grows with its input (a label value, a path, a plugin's output, a
 * server's answer). Pure text; every side of relabel uses it.
 */

/**
 * Characters of a value an error message echoes; longer values are cut.
 * Room for any valid label key (a 253-character prefix, `/`, a 63-character name).
 */
export const ECHO_MAX_CHARS = 320;

/**
 * `text` as it is when at most `max` characters long, else its first
 * `max - 1` characters and `…` (a surrogate pair is never split): the one
 * way any message bounds what it repeats.
 */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text.charAt(max - 2)) ? max - 2 : max - 1;
  return `${text.slice(0, end)}…`;
}

/** `value` cut after {@link ECHO_MAX_CHARS} characters with `…`. */
function cut(value: string): string {
  return clip(value, ECHO_MAX_CHARS + 1);
}

/**
 * A value as an error message echoes it: JSON-quoted, cut after
 * {@link ECHO_MAX_CHARS} characters with `…` and its full length, so no
 * message grows with the input: `"xxxx…" (1048576 characters)`. A valid label
 * key or value is never cut.
 */
export function quote(value: unknown): string {
  if (typeof value !== 'string') return describeValue(value);
  const shown = cut(value);
  return shown === value ? JSON.stringify(value) : `${JSON.stringify(shown)} (${value.length} characters)`;
}

/** A value that is not a string, as an error message names it without echoing a large one. */
function describeValue(value: unknown): string {
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object' && value !== null) return 'an object';
  if (typeof value === 'bigint') return `${value}`;
  return JSON.stringify(value) ?? String(value);
}
