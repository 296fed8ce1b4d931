/**
 * Parsers for option and argument values. Each throws commander's
 * InvalidArgumentError, so the message names the flag or argument and the
 * command exits with the usage code before anything is opened.
 */
import { InvalidArgumentError } from 'commander';
import { normalizeTargets } from '../core/plan/targets.ts';

const DIGITS = /^[0-9]+$/;

function integer(value: string, min: number, what: string): number {
  const n = Number(value);
  if (!DIGITS.test(value.trim()) || !Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`must be ${what}`);
  return n;
}

/** An integer ≥ 1 (revisions, concurrency). */
export function positiveInteger(value: string): number {
  return integer(value, 1, 'a whole number ≥ 1');
}

/** An integer ≥ 0 (the "from" side of a diff, where 0 is the empty site). */
export function nonNegativeInteger(value: string): number {
  return integer(value, 0, 'a whole number ≥ 0 (0 is the empty site)');
}

/** Node names given as `a,b,c`: non-empty, unique; the core's rules. */
export function nodeList(value: string): string[] {
  const parsed = normalizeTargets(value);
  if (!parsed.ok) throw new InvalidArgumentError(parsed.message);
  return parsed.targets;
}

/** A JSON object (tag data). */
export function jsonObject(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (err) {
    throw new InvalidArgumentError(`must be JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InvalidArgumentError(`must be a JSON object, such as '{"by":"ops"}'`);
  }
  return parsed as Record<string, unknown>;
}

/** Names given as `a,b,c` (racks, tags), added to those of earlier uses of the flag. */
export function nameList(value: string, previous: string[] = []): string[] {
  const names = value.split(',').map((s) => s.trim());
  if (names.some((n) => n === '')) throw new InvalidArgumentError('must be comma-separated names, none empty');
  return [...new Set([...previous, ...names])];
}

/** `key=value`, added to the pairs of earlier uses of the flag. */
export function labelPair(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError('must be key=value, such as --label example.com/role=storage');
  const key = value.slice(0, at);
  if (Object.hasOwn(previous, key)) throw new InvalidArgumentError(`label ${key} is given more than once`);
  return { ...previous, [key]: value.slice(at + 1) };
}

/** A whole number from 0 to `max`. */
export const count = (max: number) => (text: string) => {
  if (!/^\d{1,6}$/.test(text) || Number(text) > max) throw new InvalidArgumentError(`expected a whole number from 0 to ${max}`);
  return Number(text);
};

/** `--select region=east,type=edge`: the sites whose labels hold every pair. */
export function selector(text: string): { matchLabels: Record<string, string> } {
  const pairs = text.split(',').map((p) => p.trim());
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new InvalidArgumentError(`${JSON.stringify(pair.slice(0, 80))}: expected key=value[,key=value…]`);
    out[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return { matchLabels: out };
}
