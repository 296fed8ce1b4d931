/**
 * The few Python behaviours Deckhand's rendering leans on, so that relabel
 * renders a site to what Deckhand renders it to: `==` between parsed YAML
 * values (where `True == 1` and `1 == 1.0`), `str()` of a value substituted
 * into a string, and `re.sub`'s reading of its replacement text. Pure.
 */

/** A YAML value as JavaScript holds it: what `yaml`'s `toJS` returns. */
export type Value = unknown;

/** A mapping of a document, as parsed. */
export type Mapping = Record<string, Value>;

/** Whether `value` is a mapping (a Python dict), not a list, string or null. */
export function isMapping(value: Value): value is Mapping {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// Python compares bools as the integers 0 and 1.
function numeric(value: Value): number | undefined {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return undefined;
}

/** Python's `a == b` on parsed YAML values: deep, with bools equal to the integers 0 and 1. */
export function pyEqual(a: Value, b: Value): boolean {
  if (a === b) return true;
  const [x, y] = [numeric(a), numeric(b)];
  if (x !== undefined || y !== undefined) return x === y;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => pyEqual(item, b[i]));
  }
  if (isMapping(a) && isMapping(b)) {
    const keys = Object.keys(a);
    if (keys.length !== Object.keys(b).length) return false;
    return keys.every((key) => Object.hasOwn(b, key) && pyEqual(a[key], b[key]));
  }
  return false;
}

function pyRepr(value: Value): string {
  if (typeof value === 'string') {
    // Python picks single quotes unless the text holds one and no double quote.
    const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
    const body = value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t');
    return `${quote}${quote === "'" ? body.replace(/'/g, "\\'") : body}${quote}`;
  }
  return pyStr(value);
}

function pyFloat(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (!Number.isFinite(value)) return value > 0 ? 'inf' : '-inf';
  if (Number.isInteger(value) && Math.abs(value) < 1e16) return `${value}.0`;
  return String(value).replace(/e\+?/, 'e+').replace('e+-', 'e-');
}

/**
 * Python's `str()` of a parsed YAML value, as Deckhand passes a substituted
 * value to `re.sub`: `True`, `None`, `1.0`, `{'a': 1}`. YAML integers and
 * floats are both numbers here; a whole number is written as an integer,
 * which is how YAML's plain integers read (a float such as `1.0` in a
 * source that reaches a pattern is the one case told apart wrongly).
 */
export function pyStr(value: Value): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : pyFloat(value);
  if (typeof value === 'bigint') return String(value);
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(', ')}]`;
  if (isMapping(value)) {
    return `{${Object.entries(value)
      .map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`)
      .join(', ')}}`;
  }
  return String(value);
}

/** What went wrong reading a Python pattern or replacement: Python's `re.error`. */
export class PatternError extends Error {}

/**
 * Python's `re.sub(pattern, replacement, text)`: every match replaced, the
 * replacement read as Python reads it (`\1`, `\g<name>`, `\n`, `\\`). The
 * patterns of real sites are plain text or simple classes, which mean the
 * same in both dialects; a construct JavaScript reads differently is refused.
 */
export function pySub(pattern: string, replacement: string, text: string): string {
  return text.replace(compiled(pattern), (...args: unknown[]) => {
    const hasGroups = typeof args[args.length - 1] === 'object';
    const groups = args.slice(0, hasGroups ? -3 : -2) as (string | undefined)[];
    const named = (hasGroups ? args[args.length - 1] : undefined) as Record<string, string | undefined> | undefined;
    return expandTemplate(replacement, groups, named);
  });
}

// A site repeats a few patterns over thousands of documents: each is compiled once.
const patterns = new Map<string, RegExp>();

function compiled(pattern: string): RegExp {
  const known = patterns.get(pattern);
  if (known !== undefined) return known;
  let regex: RegExp;
  try {
    if (/\(\?P[<=]|\(\?[aiLmsux]+\)|\\[AZ]/.test(pattern)) throw new PatternError(`pattern ${pattern} uses Python-only syntax`);
    regex = new RegExp(pattern, 'gu');
  } catch (err) {
    throw new PatternError(`bad pattern ${JSON.stringify(pattern)}: ${(err as Error).message}`);
  }
  if (patterns.size >= 1000) patterns.clear();
  patterns.set(pattern, regex);
  return regex;
}

const ESCAPES: Record<string, string> = { n: '\n', t: '\t', r: '\r', f: '\f', v: '\v', a: '\x07', b: '\b', '\\': '\\' };

function expandTemplate(template: string, groups: readonly (string | undefined)[], named: Record<string, string | undefined> | undefined): string {
  if (!template.includes('\\')) return template;
  let out = '';
  for (let i = 0; i < template.length; i++) {
    const ch = template.charAt(i);
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    const next = template.charAt(i + 1);
    if (next === '') throw new PatternError('bad escape (end of pattern)');
    if (/[0-9]/.test(next)) {
      const digits = /^[0-9]{1,2}/.exec(template.slice(i + 1))?.[0] ?? next;
      const index = Number(digits);
      if (index >= groups.length) throw new PatternError(`invalid group reference ${index}`);
      out += groups[index] ?? '';
      i += digits.length;
    } else if (next === 'g') {
      const match = /^g<([^>]*)>/.exec(template.slice(i + 1));
      if (match === null) throw new PatternError('missing group name');
      const ref = match[1] ?? '';
      const value = /^[0-9]+$/.test(ref) ? groups[Number(ref)] : named?.[ref];
      if (value === undefined && !(/^[0-9]+$/.test(ref) ? Number(ref) < groups.length : named !== undefined && ref in named)) {
        throw new PatternError(`unknown group name ${JSON.stringify(ref)}`);
      }
      out += value ?? '';
      i += match[0].length;
    } else if (next in ESCAPES) {
      out += ESCAPES[next];
      i += 1;
    } else if (/[A-Za-z]/.test(next)) {
      throw new PatternError(`bad escape \\${next}`);
    } else {
      out += `\\${next}`;
      i += 1;
    }
  }
  return out;
}
