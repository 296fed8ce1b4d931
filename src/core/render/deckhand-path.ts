/**
 * Deckhand's paths into a document's `data` (`.values.conf.ceph`,
 * `$.hosts[0].name`, `.annotations."kubernetes.io/role"`), read as
 * Deckhand reads them: parsed as JSONPath (the jsonpath-ng dialect), found
 * and updated as jsonpath-ng finds and updates, and created along the way
 * as Deckhand's own expansion creates them before a replace (splitting the
 * text on dots). Only the plain subset of JSONPath is accepted: fields,
 * quoted fields, `*` and indexes; a path using filters, slices or `..` is
 * refused rather than read differently. Pure.
 */
import { isMapping, type Value } from './python-values.ts';

/** One step of a parsed path: a field (`*` any), or a list index. */
export type PathStep = { field: string } | { index: number };

/** A parsed Deckhand path: the steps below the data root. */
export type DeckhandPath = { text: string; steps: PathStep[] };

/** A path Deckhand could not read, or one relabel does not read. */
export class PathError extends Error {}

const ID = /^(?:[a-zA-Z_@\u4E00-\u9FA5]|[\u{1F600}-\u{1F64F}])(?:[a-zA-Z0-9_@\-\u4E00-\u9FA5]|[\u{1F600}-\u{1F64F}])*/u;

function quoted(text: string, at: number): { value: string; end: number } {
  const quote = text.charAt(at);
  let value = '';
  for (let i = at + 1; i < text.length; i++) {
    const ch = text.charAt(i);
    if (ch === '\\' && i + 1 < text.length) {
      value += text.charAt(++i);
    } else if (ch === quote) {
      return { value, end: i + 1 };
    } else {
      value += ch;
    }
  }
  throw new PathError(`unterminated ${quote} in path ${JSON.stringify(text)}`);
}

// One field name at `at`: an identifier, a quoted name, a number (a field
// named by its digits) or `*`.
function fieldAt(text: string, at: number): { field: string; end: number } {
  const ch = text.charAt(at);
  if (ch === "'" || ch === '"') {
    const { value, end } = quoted(text, at);
    return { field: value, end };
  }
  if (ch === '*') return { field: '*', end: at + 1 };
  const number = /^-?\d+/.exec(text.slice(at));
  if (number !== null) return { field: String(Number(number[0])), end: at + number[0].length };
  const id = ID.exec(text.slice(at));
  if (id === null) throw new PathError(`unexpected ${JSON.stringify(text.slice(at, at + 1))} at ${at + 1} of path ${JSON.stringify(text)}`);
  return { field: id[0], end: at + id[0].length };
}

/**
 * Parses a path as jsonpath-ng parses it after Deckhand has put `$` in
 * front of a leading `.` (`.` alone is the root). Throws {@link PathError}.
 */
export function parsePath(text: string): DeckhandPath {
  const source = text.replace(/[ \t]/g, '');
  let at = 0;
  const steps: PathStep[] = [];
  if (source === '.' || source === '$') return { text, steps };
  if (source.startsWith('$')) at = 1;
  else if (!source.startsWith('.')) {
    // A relative path reads from the data root as well.
    const first = fieldAt(source, 0);
    steps.push({ field: first.field });
    at = first.end;
  }
  while (at < source.length) {
    const ch = source.charAt(at);
    if (source.startsWith('..', at)) throw new PathError(`path ${JSON.stringify(text)} uses '..', which relabel does not read`);
    if (ch === '.') {
      const next = fieldAt(source, at + 1);
      steps.push({ field: next.field });
      at = next.end;
    } else if (ch === '[') {
      const close = source.indexOf(']', at);
      const inner = close < 0 ? '' : source.slice(at + 1, close);
      if (/^-?\d+$/.test(inner)) steps.push({ index: Number(inner) });
      else if (/^(['"]).*\1$/.test(inner)) steps.push({ field: quoted(inner, 0).value });
      else throw new PathError(`path ${JSON.stringify(text)} uses [${inner}], which relabel does not read (fields and indexes only)`);
      at = close + 1;
    } else {
      throw new PathError(`unexpected ${JSON.stringify(ch)} at ${at + 1} of path ${JSON.stringify(text)}`);
    }
  }
  return { text, steps };
}

/** One value found at a path, with the container and key it sits at (none for the root). */
export type Match = { value: Value; parent?: Value; key?: string | number };

function stepMatches(match: Match, step: PathStep): Match[] {
  const data = match.value;
  if ('field' in step) {
    if (!isMapping(data)) return [];
    if (step.field === '*') return Object.keys(data).map((key) => ({ value: data[key], parent: data, key }));
    return Object.hasOwn(data, step.field) ? [{ value: data[step.field], parent: data, key: step.field }] : [];
  }
  // jsonpath-ng indexes anything with a length; relabel reads lists (and, as Python does, a string's characters).
  if (Array.isArray(data) || typeof data === 'string') {
    const length = data.length;
    if (length === 0 || !(length > step.index)) return [];
    const index = step.index < 0 ? length + step.index : step.index;
    if (index < 0) throw new PathError(`index ${step.index} is out of range`);
    return [{ value: Array.isArray(data) ? data[index] : data.charAt(index), parent: data, key: index }];
  }
  return [];
}

/** Every value at `path` in `data`, in document order (jsonpath-ng's `find`). */
export function findAll(data: Value, path: DeckhandPath): Match[] {
  let matches: Match[] = [{ value: data }];
  for (const step of path.steps) matches = matches.flatMap((m) => stepMatches(m, step));
  return matches;
}

/** The first value at `path`, or undefined when nothing is there (Deckhand's `jsonpath_parse`; a null found is null). */
export function findFirst(data: Value, path: DeckhandPath): { value: Value } | undefined {
  const [first] = findAll(data, path);
  return first === undefined ? undefined : { value: first.value };
}

/**
 * Sets `value` at every place `path` finds in `data` whose key already
 * exists (jsonpath-ng's `update`), returning the new data: `value` itself
 * for the root path.
 */
export function updateAt(data: Value, path: DeckhandPath, value: Value): Value {
  if (path.steps.length === 0) return value;
  const last = path.steps[path.steps.length - 1] as PathStep;
  const parents = findAll(data, { text: path.text, steps: path.steps.slice(0, -1) });
  for (const { value: parent } of parents) {
    if ('field' in last) {
      if (!isMapping(parent)) {
        if (typeof parent === 'string' && parent.includes(last.field)) throw new PathError(`cannot set a field of the string at ${path.text}`);
        continue;
      }
      const keys = last.field === '*' ? Object.keys(parent) : Object.hasOwn(parent, last.field) ? [last.field] : [];
      for (const key of keys) parent[key] = value;
    } else if (Array.isArray(parent)) {
      if (parent.length > last.index) parent[last.index < 0 ? parent.length + last.index : last.index] = value;
    } else if (typeof parent === 'string' && parent.length > last.index) {
      throw new PathError(`cannot set a character of the string at ${path.text}`);
    }
  }
  return data;
}

/**
 * Creates the keys of `text` missing from `data`, as Deckhand does before
 * it replaces a value at a path that is not there: the text is split on
 * dots (quoted names with dots are split too, as Deckhand splits them),
 * `name[i]` makes a list padded with empty mappings, any other piece an
 * empty mapping. Throws {@link PathError} where Deckhand's expansion fails
 * (a piece below a string, a list or a null).
 */
export function expandPath(data: Value, text: string): void {
  const normalized = text === '.' ? '$' : text.startsWith('.') ? `$${text}` : text;
  let here: Value = data;
  for (const piece of normalized.split('.').slice(1)) {
    const indexed = /^(.*?)\[(\d+)\](.*)$/s.exec(piece);
    if (indexed !== null && indexed[3] === '' && !indexed[1]?.includes('[')) {
      const name = indexed[1] ?? '';
      const index = Number(indexed[2]);
      if (!isMapping(here)) throw new PathError(`cannot create ${JSON.stringify(piece)} of ${text}: what is above it is not a mapping`);
      if (!Object.hasOwn(here, name)) here[name] = [];
      const list = here[name];
      if (!Array.isArray(list)) throw new PathError(`cannot create ${JSON.stringify(piece)} of ${text}: ${JSON.stringify(name)} is not a list`);
      while (list.length < index + 1) list.push({});
      here = list[index];
      continue;
    }
    if (isMapping(here) && Object.hasOwn(here, piece)) {
      here = here[piece];
      continue;
    }
    if (!isMapping(here)) throw new PathError(`cannot create ${JSON.stringify(piece)} of ${text}: what is above it is not a mapping`);
    const name = piece.replace(/^'+|'+$/g, '').replace(/^"+|"+$/g, '');
    if (!Object.hasOwn(here, name)) here[name] = {};
    here = here[name];
  }
}
