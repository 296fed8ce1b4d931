/**
 * JSON read as longhorn-manager reads its node annotations: with Go's
 * `encoding/json`, whose answers differ from `JSON.parse`'s in ways that
 * decide whether Longhorn keeps or discards a configuration. This reader
 * keeps what `JSON.parse` loses: a number's literal text (Go reads
 * `storageReserved` as an int64 from that text: `1e3` and `1.0` are errors,
 * not 1000 and 1) and every member of an object in order (repeated keys
 * included). Strings are decoded as Go decodes them: a lone UTF-16
 * surrogate becomes U+FFFD.
 */
import { clip, quote } from '../plan/text.ts';

/** A JSON number, kept as written. */
export class JsonNumber {
  /** The literal exactly as in the JSON text, e.g. `1e3`. */
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** A JSON object: its members in order, a repeated key once per occurrence. */
export class JsonObject {
  /** Each `[key, value]` in the order written. */
  readonly members: readonly (readonly [string, Json])[];
  constructor(members: readonly (readonly [string, Json])[]) {
    this.members = members;
  }
}

/** A JSON value as read by {@link readJson}. */
export type Json = null | boolean | string | JsonNumber | readonly Json[] | JsonObject;

/**
 * Nesting read in full; a deeper array or object is read as an empty one.
 * No Longhorn annotation has a field nested more than three levels deep, so
 * a value that deep is already refused for its place.
 */
export const JSON_READ_DEPTH = 16;

// Go's decoder replaces an unpaired surrogate (from a `\ud800` escape) with U+FFFD.
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const literal = /-?[0-9][-+.0-9eE]*|true|false|null/y;

/**
 * Reads a JSON text: its value, or why it is not JSON (the syntax is
 * `JSON.parse`'s, which is RFC 8259's as Go's is). Never throws.
 */
export function readJson(text: string): { value: Json } | { error: string } {
  try {
    JSON.parse(text);
  } catch (err) {
    return { error: clip(err instanceof Error ? err.message : String(err), 200) };
  }
  let at = 0;
  const space = () => {
    while (text[at] === ' ' || text[at] === '\t' || text[at] === '\n' || text[at] === '\r') at++;
  };
  const string = (): string => {
    const start = at++;
    while (text[at] !== '"') at += text[at] === '\\' ? 2 : 1;
    at++;
    return (JSON.parse(text.slice(start, at)) as string).replace(loneSurrogate, '\uFFFD');
  };
  // The text is valid JSON here, so each step can trust what comes next.
  const skip = () => {
    let level = 0;
    do {
      const char = text[at];
      if (char === '"') string();
      else {
        if (char === '[' || char === '{') level++;
        else if (char === ']' || char === '}') level--;
        at++;
      }
    } while (level > 0);
  };
  const value = (depth: number): Json => {
    space();
    const char = text[at];
    if (char === '"') return string();
    if (char === '[' || char === '{') {
      if (depth >= JSON_READ_DEPTH) {
        skip();
        return char === '[' ? [] : new JsonObject([]);
      }
      at++;
      const items: Json[] = [];
      const members: [string, Json][] = [];
      space();
      while (text[at] !== ']' && text[at] !== '}') {
        if (char === '[') items.push(value(depth + 1));
        else {
          space();
          const key = string();
          space();
          at++; // the colon
          members.push([key, value(depth + 1)]);
        }
        space();
        if (text[at] === ',') at++;
        space();
      }
      at++;
      return char === '[' ? items : new JsonObject(members);
    }
    literal.lastIndex = at;
    const token = literal.exec(text)?.[0] ?? '';
    at += token.length;
    return token === 'null' ? null : token === 'true' ? true : token === 'false' ? false : new JsonNumber(token);
  };
  return { value: value(0) };
}

/** Go's int64 range. */
export const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

/**
 * A JSON number as Go's decoder stores it in an int64 (`strconv.ParseInt` of
 * the literal): the value, or `fraction` when the literal has a fraction or
 * an exponent (even `1.0`, `1e3`), or `overflow` beyond the int64 range.
 */
export function goInt64(number: JsonNumber): bigint | 'fraction' | 'overflow' {
  if (!/^-?(0|[1-9][0-9]*)$/.test(number.text)) return 'fraction';
  const value = BigInt(number.text);
  return value > INT64_MAX || value < INT64_MIN ? 'overflow' : value;
}

/**
 * A JSON value as an error message names it, bounded: a string quoted, a
 * number as written, an array or object by its kind.
 */
export function describeJson(value: Json): string {
  if (value instanceof JsonNumber) return clip(value.text, 40);
  if (value instanceof JsonObject) return 'an object';
  if (Array.isArray(value)) return 'an array';
  return quote(value);
}

/**
 * A key as Go's decoder compares it with a struct's ASCII field names
 * (`foldName`): ASCII letters capitalised, and the two other letters whose
 * case fold is an ASCII one, long s (ſ, folds with S) and the Kelvin sign
 * (K, folds with K); so `Path`, `PATH` and `ſtorageReserved` fill Longhorn's
 * fields. Other characters are kept: none folds to an ASCII letter.
 */
export function goFoldKey(key: string): string {
  return key
    .replace(/[a-z]/g, (letter) => letter.toUpperCase())
    .replaceAll('\u017F', 'S')
    .replaceAll('\u212A', 'K');
}
