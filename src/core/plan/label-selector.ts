/**
 * Kubernetes label selectors (`metav1.LabelSelector`): `matchLabels` and
 * `matchExpressions` with the operators In, NotIn, Exists and DoesNotExist,
 * matched as the API server matches a `labelSelector` in a LIST. Every
 * requirement must hold; NotIn and DoesNotExist hold on an object that
 * lacks the key.
 */
import { labelKeyErrors, labelValueErrors, invalidValue } from './label-syntax.ts';
import { quote } from './text.ts';
import type { PathSegment } from './site-error.ts';

/** The operators of a selector requirement. */
export const SelectorOperator = { In: 'In', NotIn: 'NotIn', Exists: 'Exists', DoesNotExist: 'DoesNotExist' } as const;
/** One of the {@link SelectorOperator} names. */
export type SelectorOperator = (typeof SelectorOperator)[keyof typeof SelectorOperator];

/** One `matchExpressions` entry; `values` only with In and NotIn. */
export type SelectorRequirement = { key: string; operator: SelectorOperator; values?: string[] };

/** A label selector as a document writes it; plain JSON. */
export type LabelSelector = { matchLabels?: Record<string, string>; matchExpressions?: SelectorRequirement[] };

/** A problem in a selector as written: a path relative to the selector and a message. */
export type SelectorProblem = { path: PathSegment[]; message: string; target: 'key' | 'value' };

const OPERATORS: readonly string[] = Object.values(SelectorOperator);

/** Whether `selector` matches an object with `labels` (every requirement holds). */
export function selectorMatches(selector: LabelSelector, labels: Readonly<Record<string, string>>): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (!Object.hasOwn(labels, key) || labels[key] !== value) return false;
  }
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(labels, key);
    const value = has ? labels[key] : undefined;
    switch (operator) {
      case SelectorOperator.In:
        if (!has || !values.includes(value as string)) return false;
        break;
      case SelectorOperator.NotIn:
        if (has && values.includes(value as string)) return false;
        break;
      case SelectorOperator.Exists:
        if (!has) return false;
        break;
      case SelectorOperator.DoesNotExist:
        if (has) return false;
        break;
    }
  }
  return true;
}

/**
 * The keys a selector reads, sorted, each once: those of `matchLabels` and
 * of every expression.
 */
export function selectorKeys(selector: LabelSelector): string[] {
  const keys = new Set([...Object.keys(selector.matchLabels ?? {}), ...(selector.matchExpressions ?? []).map((r) => r.key)]);
  return [...keys].sort();
}

/**
 * The selector in the API server's string syntax (the `labelSelector`
 * parameter of a LIST, `kubectl get -l`): `k=v`, `k in (a,b)`,
 * `k notin (a,b)`, `k`, `!k`, comma-separated. Values inside a set are
 * sorted and given once, as the API server prints them.
 */
export function selectorString(selector: LabelSelector): string {
  const parts = Object.entries(selector.matchLabels ?? {}).map(([key, value]) => `${key}=${value}`);
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    const set = [...new Set(values)].sort().join(',');
    if (operator === SelectorOperator.In) parts.push(`${key} in (${set})`);
    else if (operator === SelectorOperator.NotIn) parts.push(`${key} notin (${set})`);
    else if (operator === SelectorOperator.Exists) parts.push(key);
    else parts.push(`!${key}`);
  }
  return parts.join(',');
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function requirementProblems(entry: unknown, at: PathSegment[]): SelectorProblem[] {
  if (!isRecord(entry)) return [{ path: at, message: 'a match expression must be a mapping of key, operator and values', target: 'value' }];
  const problems: SelectorProblem[] = [];
  for (const field of Object.keys(entry)) {
    if (!['key', 'operator', 'values'].includes(field)) problems.push({ path: [...at, field], message: `unknown field ${quote(field)}`, target: 'key' });
  }
  const { key, operator, values } = entry;
  if (typeof key !== 'string') problems.push({ path: [...at, 'key'], message: 'key is required and must be a string', target: 'value' });
  else for (const message of labelKeyErrors(key)) problems.push({ path: [...at, 'key'], message: invalidValue(key, message), target: 'value' });
  if (typeof operator !== 'string' || !OPERATORS.includes(operator)) {
    const given = operator === undefined ? 'operator is required' : `unknown operator ${quote(operator)}`;
    problems.push({ path: [...at, 'operator'], message: `${given} (one of ${OPERATORS.join(', ')})`, target: 'value' });
  }
  if (values !== undefined && !Array.isArray(values)) {
    problems.push({ path: [...at, 'values'], message: 'values must be a list of strings', target: 'value' });
    return problems;
  }
  const list = (values ?? []) as unknown[];
  if ((operator === SelectorOperator.In || operator === SelectorOperator.NotIn) && list.length === 0) {
    problems.push({ path: [...at, values === undefined ? 'operator' : 'values'], message: `operator ${operator} needs at least one value`, target: 'value' });
  }
  if ((operator === SelectorOperator.Exists || operator === SelectorOperator.DoesNotExist) && list.length > 0) {
    problems.push({ path: [...at, 'values'], message: `operator ${operator} takes no values`, target: 'value' });
  }
  list.forEach((value, i) => {
    if (typeof value !== 'string') {
      problems.push({ path: [...at, 'values', i], message: 'selector values must be strings; quote it in YAML', target: 'value' });
    } else for (const message of labelValueErrors(value)) problems.push({ path: [...at, 'values', i], message: invalidValue(value, message), target: 'value' });
  });
  return problems;
}

/**
 * Checks a selector as written, with the API server's rules: only
 * `matchLabels` and `matchExpressions`; keys valid label keys and values
 * valid label values; an expression's operator one of
 * {@link SelectorOperator}, In and NotIn with at least one value, Exists
 * and DoesNotExist with none. One rule of relabel's own: a selector needs at
 * least one requirement (an empty selector would match every node).
 * Paths are relative to the selector. Empty when it is valid.
 */
export function selectorProblems(selector: unknown): SelectorProblem[] {
  if (!isRecord(selector)) return [{ path: [], message: 'selector must be a mapping with matchLabels and/or matchExpressions', target: 'value' }];
  const problems: SelectorProblem[] = [];
  for (const field of Object.keys(selector)) {
    if (field !== 'matchLabels' && field !== 'matchExpressions') {
      problems.push({ path: [field], message: `unknown field ${quote(field)} (allowed: matchLabels, matchExpressions)`, target: 'key' });
    }
  }
  const { matchLabels, matchExpressions } = selector;
  if (matchLabels !== undefined && !isRecord(matchLabels)) {
    problems.push({ path: ['matchLabels'], message: 'matchLabels must be a mapping of label keys to values', target: 'value' });
  }
  for (const [key, value] of Object.entries(isRecord(matchLabels) ? matchLabels : {})) {
    for (const message of labelKeyErrors(key)) problems.push({ path: ['matchLabels', key], message: invalidValue(key, message), target: 'key' });
    if (typeof value !== 'string') {
      problems.push({ path: ['matchLabels', key], message: 'selector values must be strings; quote it in YAML', target: 'value' });
    } else for (const message of labelValueErrors(value)) problems.push({ path: ['matchLabels', key], message: invalidValue(value, message), target: 'value' });
  }
  if (matchExpressions !== undefined && !Array.isArray(matchExpressions)) {
    problems.push({ path: ['matchExpressions'], message: 'matchExpressions must be a list', target: 'value' });
  }
  const expressions = Array.isArray(matchExpressions) ? (matchExpressions as unknown[]) : [];
  expressions.forEach((entry, i) => problems.push(...requirementProblems(entry, ['matchExpressions', i])));
  const requirements = (isRecord(matchLabels) ? Object.keys(matchLabels).length : 0) + expressions.length;
  if (problems.length === 0 && requirements === 0) {
    problems.push({
      path: [],
      message: 'a selector needs at least one requirement (matchLabels or matchExpressions): an empty one would match every node',
      target: 'value',
    });
  }
  return problems;
}
