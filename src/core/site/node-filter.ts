/**
 * Drydock node filters, `{filter_set_type, filter_set: [{filter_type, …criteria}]}`,
 * with the set operations done right (Drydock OR-ed `node_labels` even under
 * `intersection` and ignored `rack_labels`).
 *
 * Semantics, evaluated against a resolved {@link Design}:
 * - a filter's non-empty criteria are combined by its `filter_type`:
 *   `intersection` = a node must meet every criterion, `union` = any;
 * - inside a map or tag criterion the same `filter_type` applies:
 *   `node_labels` / `rack_labels` under `intersection` need every pair to
 *   match, under `union` any pair; `node_tags` likewise every tag or any tag;
 * - `node_names` and `rack_names` are membership tests (a node has one name
 *   and at most one rack, so "all of several names" could match nothing);
 * - `node_labels` match the node's desired labels (owner_data and generated);
 *   `rack_labels` match the labels of the node's rack document;
 * - empty or absent (or null) criteria are ignored, but a filter must have
 *   at least one, and a set at least one filter: an empty filter never means
 *   "every node";
 * - `filter_set_type` combines the filters' results the same way.
 */
import { z } from 'zod';
import type { Design, DesignNode } from './validate-site.ts';
import { quote } from '../plan/text.ts';
import { formatPath } from '../plan/site-error.ts';
import type { PathSegment } from '../plan/site-error.ts';

/** How results are combined, at both levels. */
export const FilterSetType = { Union: 'union', Intersection: 'intersection' } as const;
/** One of the {@link FilterSetType} strings. */
export type FilterSetType = (typeof FilterSetType)[keyof typeof FilterSetType];

const setType = (field: string) =>
  z.enum([FilterSetType.Union, FilterSetType.Intersection], {
    error: (issue) =>
      issue.input === undefined ? `${field} is required ("union" or "intersection")` : `${field} must be "union" or "intersection", not ${quote(issue.input)}`,
  });

const criteria = ['node_names', 'node_tags', 'node_labels', 'rack_names', 'rack_labels'] as const;

/** One filter of a set: a `filter_type` and at least one non-empty criterion. */
export const NodeFilter = z
  .object({
    filter_type: setType('filter_type'),
    node_names: z.array(z.string()).nullish(),
    node_tags: z.array(z.string()).nullish(),
    node_labels: z.record(z.string(), z.string()).nullish(),
    rack_names: z.array(z.string()).nullish(),
    rack_labels: z.record(z.string(), z.string()).nullish(),
  })
  .strict()
  .refine((filter) => criteria.some((name) => size(filter[name]) > 0), {
    error: `a filter needs at least one non-empty criterion (${criteria.join(', ')})`,
  });
/** One filter of a set. */
export type NodeFilter = z.infer<typeof NodeFilter>;

/** A Drydock node filter set. */
export const NodeFilterSet = z
  .object({
    filter_set_type: setType('filter_set_type'),
    filter_set: z.array(NodeFilter).min(1, { error: 'filter_set needs at least one filter' }),
  })
  .strict();
/** A Drydock node filter set. */
export type NodeFilterSet = z.infer<typeof NodeFilterSet>;

/** A problem in a node filter: a JSON path in it and a message. */
export type NodeFilterError = { path: string; message: string };

/** Outcome of {@link parseNodeFilter}. */
export type NodeFilterParse = { ok: true; filter: NodeFilterSet } | { ok: false; errors: NodeFilterError[] };

/** Nodes selected by a filter, and `node_names` entries the design lacks. */
export type NodeSelection = { nodes: string[]; unknownNodeNames: string[] };

function size(criterion: readonly unknown[] | Readonly<Record<string, unknown>> | null | undefined): number {
  if (criterion === null || criterion === undefined) return 0;
  return Array.isArray(criterion) ? criterion.length : Object.keys(criterion).length;
}

/**
 * Validates a node filter from an API request or workflow input. Unknown
 * fields and set types are rejected with one error per problem, each with
 * its path (`filter_set[0].node_label`).
 */
export function parseNodeFilter(input: unknown): NodeFilterParse {
  const result = NodeFilterSet.safeParse(input);
  if (result.success) return { ok: true, filter: result.data };
  const errors: NodeFilterError[] = [];
  for (const issue of result.error.issues) {
    const path = issue.path.filter((s): s is PathSegment => typeof s !== 'symbol');
    if (issue.code === 'unrecognized_keys') {
      const allowed = path.length === 0 ? ['filter_set_type', 'filter_set'] : ['filter_type', ...criteria];
      for (const key of issue.keys) {
        errors.push({ path: formatPath([...path, key]), message: `unknown field ${quote(key)} (allowed: ${allowed.join(', ')})` });
      }
    } else {
      errors.push({ path: formatPath(path), message: issue.message });
    }
  }
  return { ok: false, errors };
}

function combine(type: FilterSetType, results: readonly boolean[]): boolean {
  return type === FilterSetType.Intersection ? results.every(Boolean) : results.some(Boolean);
}

function pairsMatch(type: FilterSetType, wanted: Readonly<Record<string, string>>, have: Readonly<Record<string, string>>): boolean {
  return combine(
    type,
    Object.entries(wanted).map(([key, value]) => Object.hasOwn(have, key) && have[key] === value),
  );
}

function matches(design: Design, node: DesignNode, filter: NodeFilter): boolean {
  const type = filter.filter_type;
  const results: boolean[] = [];
  const { node_names: names, node_tags: tags, node_labels: labels, rack_names: racks, rack_labels: rackLabels } = filter;
  if (names && names.length > 0) results.push(names.includes(node.name));
  if (racks && racks.length > 0) results.push(node.rack !== null && racks.includes(node.rack));
  if (tags && tags.length > 0)
    results.push(
      combine(
        type,
        tags.map((tag) => node.tags.includes(tag)),
      ),
    );
  if (labels && size(labels) > 0) results.push(pairsMatch(type, labels, node.labels));
  if (rackLabels && size(rackLabels) > 0) {
    const rack = node.rack !== null && Object.hasOwn(design.racks, node.rack) ? design.racks[node.rack] : undefined;
    results.push(rack !== undefined && pairsMatch(type, rackLabels, rack.labels));
  }
  return combine(type, results);
}

/**
 * Selects the design's nodes matching `filter`, sorted by name. Names in
 * `node_names` that are not in the design are returned separately: a target
 * missing from the design is reported by the caller, never silently dropped.
 */
export function selectNodes(design: Design, filter: NodeFilterSet): NodeSelection {
  const nodes = Object.values(design.nodes)
    .filter((node) =>
      combine(
        filter.filter_set_type,
        filter.filter_set.map((f) => matches(design, node, f)),
      ),
    )
    .map((node) => node.name)
    .sort();
  const named = filter.filter_set.flatMap((f) => f.node_names ?? []);
  const unknownNodeNames = [...new Set(named)].filter((name) => !Object.hasOwn(design.nodes, name)).sort();
  return { nodes, unknownNodeNames };
}
