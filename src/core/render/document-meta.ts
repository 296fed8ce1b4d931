/**
 * What rendering reads of each document: its identity (schema, layer,
 * name), its `metadata.layeringDefinition`, `substitutions` and
 * `replacement`, checked as Deckhand's own metadata schema checks them
 * (`metadata/Document/v1`: a parentSelector needs actions and actions a
 * parentSelector; an action is `merge`, `replace` or `delete` at a path; a
 * substitution has `src` schema, name and path and one `dest` or a list of
 * them). Fields Deckhand requires but rendering does not need
 * (`storagePolicy`, `layeringDefinition` itself) are not required, so an
 * unlayered site reads as it always has. Pure.
 */
import type { PathSegment } from '../plan/site-error.ts';
import { isMapping, type Mapping, type Value } from './python-values.ts';

/** A problem found in one input document, at a path of it. */
export type RenderProblem = { document: number; path: PathSegment[]; message: string };

/** A layering action as written. */
export type Action = { method: 'merge' | 'replace' | 'delete'; path: string; at: PathSegment[] };

/** Where a substitution writes. */
export type SubstitutionDest = { path: string; pattern?: string; recurse?: { depth: number }; at: PathSegment[] };

/** A substitution as written. */
export type Substitution = {
  src: { schema: string; name: string; path: string; pattern?: string; matchGroup: number; deepcopy: boolean };
  dest: SubstitutionDest[];
  at: PathSegment[];
};

/** One input document as rendering sees it. */
export type DocMeta = {
  /** Position among the inputs. */
  index: number;
  schema: string;
  name: string;
  /** `metadata.layeringDefinition.layer`, or '' without one. */
  layer: string;
  abstract: boolean;
  control: boolean;
  replacement: boolean;
  encrypted: boolean;
  labels: Record<string, string>;
  parentSelector: Record<string, string>;
  actions: Action[];
  substitutions: Substitution[];
  /** The document as read. */
  raw: Mapping;
};

/** A document as Deckhand names it in its errors: `[schema, layer] "name"`. */
export function describeDoc(doc: Pick<DocMeta, 'schema' | 'layer' | 'name'>): string {
  return `[${doc.schema}, ${doc.layer}] ${JSON.stringify(doc.name)}`;
}

/** The schema of Deckhand's layering policy documents. */
export const LAYERING_POLICY_SCHEMA = 'deckhand/LayeringPolicy';

const METHODS = ['merge', 'replace', 'delete'] as const;

function stringMap(value: Value, at: PathSegment[], problems: RenderProblem[], index: number, what: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isMapping(value)) {
    problems.push({ document: index, path: at, message: `${what} must be a mapping` });
    return {};
  }
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(value)) {
    // Deckhand compares label values as parsed: a number selects a number.
    out[key] = typeof v === 'string' ? v : JSON.stringify(v);
  }
  return out;
}

function actionsOf(value: Value, at: PathSegment[], problems: RenderProblem[], index: number): Action[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length === 0) {
    problems.push({ document: index, path: at, message: 'actions must be a list of at least one action' });
    return [];
  }
  const actions: Action[] = [];
  value.forEach((item: Value, i) => {
    const here = [...at, i];
    if (!isMapping(item)) {
      problems.push({ document: index, path: here, message: 'an action must be a mapping with method and path' });
      return;
    }
    const extra = Object.keys(item).filter((k) => k !== 'method' && k !== 'path');
    for (const key of extra) problems.push({ document: index, path: [...here, key], message: `unknown field ${JSON.stringify(key)} of an action` });
    const method = item['method'];
    const path = item['path'];
    if (!METHODS.includes(method as Action['method'])) {
      problems.push({ document: index, path: [...here, 'method'], message: `method must be one of ${METHODS.join(', ')}` });
    } else if (typeof path !== 'string') {
      problems.push({ document: index, path: [...here, 'path'], message: 'an action needs a path (a string)' });
    } else {
      actions.push({ method: method as Action['method'], path, at: here });
    }
  });
  return actions;
}

function destOf(value: Value, at: PathSegment[], problems: RenderProblem[], index: number): SubstitutionDest | undefined {
  if (!isMapping(value) || typeof value['path'] !== 'string') {
    problems.push({ document: index, path: at, message: 'a substitution dest needs a path (a string)' });
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (!['path', 'pattern', 'recurse'].includes(key))
      problems.push({ document: index, path: [...at, key], message: `unknown field ${JSON.stringify(key)} of a dest` });
  }
  const dest: SubstitutionDest = { path: value['path'], at };
  const pattern = value['pattern'];
  if (pattern !== undefined) {
    if (typeof pattern !== 'string') problems.push({ document: index, path: [...at, 'pattern'], message: 'pattern must be a string' });
    else dest.pattern = pattern;
  }
  const recurse = value['recurse'];
  if (recurse !== undefined) {
    const depth = isMapping(recurse) ? recurse['depth'] : undefined;
    if (typeof depth !== 'number' || !Number.isInteger(depth) || depth < -1) {
      problems.push({ document: index, path: [...at, 'recurse'], message: 'recurse must be {depth: N}, N an integer of -1 (no limit) or more' });
    } else {
      dest.recurse = { depth };
    }
  }
  return dest;
}

function substitutionsOf(value: Value, at: PathSegment[], problems: RenderProblem[], index: number): Substitution[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    problems.push({ document: index, path: at, message: 'substitutions must be a list' });
    return [];
  }
  const out: Substitution[] = [];
  value.forEach((item: Value, i) => {
    const here = [...at, i];
    const src = isMapping(item) ? item['src'] : undefined;
    const dest = isMapping(item) ? item['dest'] : undefined;
    if (!isMapping(src)) {
      problems.push({ document: index, path: [...here, 'src'], message: 'a substitution needs a src mapping (schema, name, path)' });
      return;
    }
    const missing = ['schema', 'name', 'path'].filter((k) => typeof src[k] !== 'string');
    for (const key of missing) problems.push({ document: index, path: [...here, 'src', key], message: `a substitution src needs ${key} (a string)` });
    const dests = Array.isArray(dest) ? dest : dest === undefined ? [] : [dest];
    if (dests.length === 0)
      problems.push({ document: index, path: [...here, 'dest'], message: 'a substitution needs a dest (a mapping, or a list of at least one)' });
    const parsed = dests.flatMap((d: Value, j) => destOf(d, Array.isArray(dest) ? [...here, 'dest', j] : [...here, 'dest'], problems, index) ?? []);
    if (missing.length > 0 || parsed.length !== dests.length || dests.length === 0) return;
    const matchGroup = src['match_group'];
    out.push({
      src: {
        schema: src['schema'] as string,
        name: src['name'] as string,
        path: src['path'] as string,
        ...(typeof src['pattern'] === 'string' ? { pattern: src['pattern'] } : {}),
        matchGroup: typeof matchGroup === 'number' ? matchGroup : 0,
        deepcopy: src['deepcopy'] === true,
      },
      dest: parsed,
      at: here,
    });
  });
  return out;
}

/** Reads what rendering needs of input `index`, adding each malformed layering field to `problems`. */
export function readMeta(value: Mapping, index: number, problems: RenderProblem[]): DocMeta {
  const metadata = isMapping(value['metadata']) ? value['metadata'] : {};
  const definition = metadata['layeringDefinition'];
  const at = ['metadata', 'layeringDefinition'];
  const ld = isMapping(definition) ? definition : {};
  if (definition !== undefined && definition !== null && !isMapping(definition))
    problems.push({ document: index, path: at, message: 'layeringDefinition must be a mapping' });
  const layer = ld['layer'];
  if (layer !== undefined && typeof layer !== 'string') problems.push({ document: index, path: [...at, 'layer'], message: 'layer must be a string' });
  const parentSelector = stringMap(ld['parentSelector'], [...at, 'parentSelector'], problems, index, 'parentSelector');
  const actions = actionsOf(ld['actions'], [...at, 'actions'], problems, index);
  const hasSelector = Object.keys(parentSelector).length > 0;
  if (hasSelector && ld['actions'] === undefined)
    problems.push({ document: index, path: [...at, 'parentSelector'], message: 'a parentSelector needs actions saying how to layer onto the parent' });
  if (!hasSelector && ld['actions'] !== undefined)
    problems.push({ document: index, path: [...at, 'actions'], message: 'actions need a parentSelector naming the parent they apply to' });
  if (ld['parentSelector'] !== undefined && !hasSelector && isMapping(ld['parentSelector']))
    problems.push({ document: index, path: [...at, 'parentSelector'], message: 'parentSelector must select on at least one label' });
  const metaSchema = typeof metadata['schema'] === 'string' ? metadata['schema'] : '';
  return {
    index,
    schema: typeof value['schema'] === 'string' ? value['schema'] : '',
    name: typeof metadata['name'] === 'string' ? metadata['name'] : '',
    layer: typeof layer === 'string' ? layer : '',
    abstract: ld['abstract'] === true,
    control: metaSchema.startsWith('metadata/Control'),
    replacement: metadata['replacement'] === true,
    encrypted: metadata['storagePolicy'] === 'encrypted',
    labels: stringMap(metadata['labels'], ['metadata', 'labels'], problems, index, 'labels'),
    parentSelector,
    actions,
    substitutions: substitutionsOf(metadata['substitutions'], ['metadata', 'substitutions'], problems, index),
    raw: value,
  };
}

/** Whether a document takes part in layering at all: a parent, a substitution, an abstract or a replacement document. */
export function isLayered(meta: DocMeta): boolean {
  return meta.abstract || meta.replacement || meta.substitutions.length > 0 || Object.keys(meta.parentSelector).length > 0;
}
