/**
 * Deckhand's substitutions (`deckhand/engine/secrets_manager.py`): a value
 * read from a source document at `src.path` (cut by `src.pattern` and
 * `match_group` when given) written into this document at each `dest.path`,
 * or into the strings there that hold `dest.pattern` (recursively with
 * `recurse`). Values are copied as Deckhand copies them: shallowly, unless
 * `src.deepcopy`. Pure.
 */
import { expandPath, findFirst, parsePath, PathError, updateAt, type DeckhandPath } from './deckhand-path.ts';
import type { SubstitutionDest } from './document-meta.ts';
import { isMapping, PatternError, pyStr, pySub, type Value } from './python-values.ts';

/** Why a substitution could not be made: Deckhand's UnknownSubstitutionError and MissingDocumentPattern. */
export class SubstitutionError extends Error {}

function shallow(value: Value): Value {
  return Array.isArray(value) ? [...(value as Value[])] : isMapping(value) ? { ...value } : value;
}

/** The value a substitution takes from its source's data: the whole data when it is not a mapping (a passphrase). */
export function sourceValue(data: Value, path: string): { value: Value } | undefined {
  if (!isMapping(data)) return { value: data };
  return findFirst(data, parsePath(path));
}

/** `src.pattern` applied to the value (Python's `re.search`, group `group`); the whole value when it does not match. */
export function cutBySourcePattern(value: Value, pattern: string, group: number): Value {
  if (typeof value !== 'string') throw new SubstitutionError(`src.pattern needs a string value, found ${pyStr(value).slice(0, 80)}`);
  let match: RegExpExecArray | null;
  try {
    match = new RegExp(pattern, 'u').exec(value);
  } catch (err) {
    throw new SubstitutionError(`bad src.pattern ${JSON.stringify(pattern)}: ${(err as Error).message}`);
  }
  if (match === null) return value;
  if (group >= match.length) throw new SubstitutionError(`src.match_group ${group}: the pattern has ${match.length - 1} groups`);
  return match[group] ?? null;
}

function replacePattern(text: Value, pattern: string, value: Value): string {
  if (typeof text !== 'string') throw new SubstitutionError(`the destination holds no string to find pattern ${JSON.stringify(pattern)} in`);
  try {
    return pySub(pattern, pyStr(value), text);
  } catch (err) {
    if (err instanceof PatternError) throw new SubstitutionError(err.message);
    throw err;
  }
}

// Deckhand's recursive replacement: strings holding the pattern's text are replaced, the rest walked, `depth` levels down.
function replaceRecursively(data: Value, pattern: string, value: Value, depth: number, maxDepth: number): void {
  if (depth === maxDepth) return;
  const entries: [string | number, Value][] = Array.isArray(data) ? data.map((v: Value, i) => [i, v]) : isMapping(data) ? Object.entries(data) : [];
  for (const [key, item] of entries) {
    if (typeof item === 'string' && item.includes(pattern)) (data as Record<string | number, Value>)[key] = replacePattern(item, pattern, value);
    else replaceRecursively(item, pattern, value, depth + 1, maxDepth);
  }
}

function destPath(dest: SubstitutionDest): { text: string; path: DeckhandPath } {
  const text = dest.path === '.' ? '$' : dest.path.startsWith('.') ? `$${dest.path}` : dest.path;
  if (text !== '$' && !text.startsWith('$.')) throw new SubstitutionError(`dest path ${JSON.stringify(dest.path)} must begin with "." or "$"`);
  return { text, path: parsePath(text) };
}

/**
 * Writes `value` into `data` at `dest` (Deckhand's `jsonpath_replace` and
 * `_substitute_one`): returns the document's new data. A mapping written at
 * the root is merged into the mapping there, as Deckhand updates it.
 */
export function substituteOne(data: Value, value: Value, dest: SubstitutionDest, deep: boolean): Value {
  const { text, path } = destPath(dest);
  const copy = deep ? structuredClone(value) : shallow(value);
  const top = shallow(data);
  try {
    if (findFirst(top, path) === undefined) expandPath(top, text);
    const found = findFirst(top, path);
    if (found === undefined) throw new SubstitutionError(`dest path ${dest.path} cannot be reached in the destination`);
    let result: Value;
    if (dest.pattern === undefined) {
      result = updateAt(top, path, copy);
    } else if (dest.recurse !== undefined && (isMapping(found.value) || Array.isArray(found.value))) {
      replaceRecursively(found.value, dest.pattern, copy, 0, dest.recurse.depth);
      result = top;
    } else {
      result = updateAt(top, path, replacePattern(found.value, dest.pattern, copy));
    }
    if (isMapping(data) && isMapping(result)) {
      Object.assign(data, result);
      return data;
    }
    if (result === null || result === undefined || result === '' || result === 0 || result === false || (Array.isArray(result) && result.length === 0)) {
      throw new SubstitutionError(`failed to create ${dest.path} in the destination: nothing was substituted`);
    }
    return result;
  } catch (err) {
    if (err instanceof PathError) throw new SubstitutionError(err.message);
    throw err;
  }
}
