/**
 * Validation of one document on its own: its envelope and schema (zod), and
 * the syntax of what it declares, each field checked whether or not another
 * field failed the schema (see `document-view.ts`). Checks that need other documents
 * happen later: names given twice among a set of documents in
 * `validate-documents.ts`, references, the policy and site-wide uniqueness
 * in site validation.
 */
import { quote } from '../plan/text.ts';
import type { z } from 'zod';
import { LabelPolicy, policyProblems } from './label-policy.ts';
import { LabelPlugin, pluginProblems } from './label-plugin.ts';
import { RECORD_ANNOTATIONS } from '../plan/constants.ts';
import { isKubeletLabelKey, NODE_CONFIG_ANNOTATIONS } from '../plan/label-keys.ts';
import { annotationKeyErrors, dns1123SubdomainErrors, invalidValue, labelKeyErrors, labelValueErrors } from '../plan/label-syntax.ts';
import { hostView, mapAt, nameOf, pluginView, policyView, valueAt, type HostView, type MapView, type TaintView } from './document-view.ts';
import { BaremetalNode, HostProfile, NodeSet, PassThroughDocument, Rack, RELABEL_SCHEMA_NAMESPACE, Region, SchemaName, TAINT_EFFECTS } from './schema.ts';
import { selectorProblems } from '../plan/label-selector.ts';
import { taintId, taintSyntaxErrors, taintValueErrors } from '../plan/taints.ts';
import type { PathSegment, SiteError } from '../plan/site-error.ts';
import { documentError, documentRef } from './yaml-source.ts';
import type { LoadedDocument } from './yaml-source.ts';

/** A document after its own validation, classified by what relabel does with it. */
export type CheckedDocument =
  | { kind: 'node'; doc: LoadedDocument; value: BaremetalNode }
  | { kind: 'profile'; doc: LoadedDocument; value: HostProfile }
  | { kind: 'rack'; doc: LoadedDocument; value: Rack }
  | { kind: 'region'; doc: LoadedDocument; value: Region }
  | { kind: 'policy'; doc: LoadedDocument; value: LabelPolicy }
  | { kind: 'plugin'; doc: LoadedDocument; value: LabelPlugin }
  | { kind: 'nodeSet'; doc: LoadedDocument; value: NodeSet }
  | { kind: 'passThrough'; doc: LoadedDocument }
  /** `schemaKind`: what the document would be, when it was checked as one of the schemas relabel interprets. */
  | { kind: 'invalid'; doc: LoadedDocument; schemaKind?: InterpretedKind };

/** The kinds of the schemas relabel interprets. */
export type InterpretedKind = 'node' | 'profile' | 'rack' | 'region' | 'policy' | 'plugin' | 'nodeSet';

const interpreted: Record<string, z.ZodType> = {
  [SchemaName.BaremetalNode]: BaremetalNode,
  [SchemaName.HostProfile]: HostProfile,
  [SchemaName.Rack]: Rack,
  [SchemaName.Region]: Region,
  [SchemaName.LabelPolicy]: LabelPolicy,
  [SchemaName.LabelPlugin]: LabelPlugin,
  [SchemaName.NodeSet]: NodeSet,
};

/** Turns zod issues into located errors; an unknown field is reported at its key. */
export function zodErrors(doc: LoadedDocument, issues: readonly z.core.$ZodIssue[]): SiteError[] {
  const errors: SiteError[] = [];
  for (const issue of issues) {
    const path = issue.path.filter((s): s is PathSegment => typeof s !== 'symbol');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        errors.push(documentError(doc, [...path, key], `unknown field ${quote(key)}`, 'key'));
      }
    } else if (issue.code === 'invalid_type' && valueAt(doc.value, issue.path) === undefined) {
      const field = path[path.length - 1];
      errors.push(documentError(doc, path, `missing required field ${JSON.stringify(field)} (expected ${issue.expected})`));
    } else {
      errors.push(documentError(doc, path, issue.message));
    }
  }
  return errors;
}

/** Errors one label map lists at most; the rest are counted in one last error. */
export const MAX_ERRORS_PER_LABEL_MAP = 100;

/**
 * Checks a map of labels as written in a document. With `deletions`, a key
 * `!k` deletes the parent's `k` (Drydock inheritance): `k` must be a valid
 * key, and a map may not both set and delete the same key. Kubelet-owned
 * keys are rejected. With `kind` `annotation`, the keys are annotation keys
 * (the API server's annotation-key rule, which ignores case; relabel's own
 * records refused) and values are not checked (only a node's total size is,
 * once inherited). A value that is not a string is the schema's error: its
 * key is still checked. At most {@link MAX_ERRORS_PER_LABEL_MAP} errors are
 * listed; one more error says how many were left out.
 */
export function labelMapErrors(
  doc: LoadedDocument,
  path: readonly PathSegment[],
  labels: MapView,
  deletions: boolean,
  kind: 'label' | 'annotation' = 'label',
): SiteError[] {
  const errors: SiteError[] = [];
  let unlisted = 0;
  const add = (key: string, message: string, target: 'key' | 'value') => {
    if (errors.length < MAX_ERRORS_PER_LABEL_MAP) errors.push(documentError(doc, [...path, key], message, target));
    else unlisted++;
  };
  const keyErrors = kind === 'annotation' ? annotationKeyErrors : labelKeyErrors;
  for (const [key, value] of Object.entries(labels)) {
    if (deletions && key.startsWith('!')) {
      const deleted = key.slice(1);
      for (const message of keyErrors(deleted)) add(key, `deletion key ${quote(key)}: ${invalidValue(deleted, message)}`, 'key');
      if (Object.hasOwn(labels, deleted)) add(key, `both ${quote(deleted)} and ${quote(key)} are given; set the key or delete it, not both`, 'key');
      continue;
    }
    for (const message of keyErrors(key)) add(key, invalidValue(key, message), 'key');
    if (kind === 'annotation') {
      // Deliberate: relabel's own bookkeeping, and Node configuration whose JSON the API server checks.
      if (RECORD_ANNOTATIONS.includes(key)) add(key, `annotation ${quote(key)} is relabel's own record; documents may not set it`, 'key');
      if (NODE_CONFIG_ANNOTATIONS.includes(key)) {
        add(key, `annotation ${quote(key)} is Node configuration the API server decodes; documents may not set it (set taints as taints)`, 'key');
      }
      continue;
    }
    // Deliberate: the API server would take these, but the kubelet owns them.
    if (isKubeletLabelKey(key)) add(key, `label ${quote(key)} is owned by the kubelet; documents may not set it (relabel never writes or removes it)`, 'key');
    if (typeof value === 'string') for (const message of labelValueErrors(value)) add(key, invalidValue(value, message), 'value');
  }
  if (unlisted > 0) {
    errors.push(documentError(doc, path, `${unlisted} more error(s) in this map are not listed (at most ${MAX_ERRORS_PER_LABEL_MAP} are)`));
  }
  return errors;
}

/**
 * Checks a taint list as written in a document: each taint's syntax (see
 * `taintSyntaxErrors`), an effect on every taint but a deletion, a key and
 * effect given at most once, and no taint both set and deleted. A key,
 * value or effect of the wrong type or not allowed by the schema is the
 * schema's error; the rest of that taint is still checked.
 */
export function taintListErrors(doc: LoadedDocument, taints: readonly TaintView[]): SiteError[] {
  const errors: SiteError[] = [];
  const seen = new Map<string, number>();
  const set = taints.filter((t) => t.key !== undefined && !t.key.startsWith('!'));
  for (const { index: i, key, value, effect } of taints) {
    const at = (field: string): PathSegment[] => ['data', 'metadata', 'taints', i, field];
    if (key === undefined) {
      for (const message of taintValueErrors(value)) errors.push(documentError(doc, at('value'), message));
      continue;
    }
    if (key.startsWith('!')) {
      const deleted = key.slice(1);
      for (const message of labelKeyErrors(deleted))
        errors.push(documentError(doc, at('key'), `deletion key ${quote(key)}: ${invalidValue(deleted, message)}`));
      if (effect !== 'invalid' && set.some((t) => t.key === deleted && (effect === undefined || t.effect === effect))) {
        const what = effect === undefined ? quote(deleted) : quote(taintId({ key: deleted, effect }));
        errors.push(documentError(doc, at('key'), `both ${what} and its deletion ${quote(key)} are given; set the taint or delete it, not both`));
      }
      continue;
    }
    for (const { target, message } of taintSyntaxErrors(key, value)) errors.push(documentError(doc, at(target), message));
    if (effect === undefined) {
      errors.push(documentError(doc, ['data', 'metadata', 'taints', i], `taint ${quote(key)} needs an effect (one of ${TAINT_EFFECTS.join(', ')})`));
      continue;
    }
    if (effect === 'invalid') continue;
    const id = taintId({ key, effect });
    const first = seen.get(id);
    if (first !== undefined) {
      errors.push(documentError(doc, at('key'), `taint ${quote(id)} is given twice (also at taints[${first}]); a node has one taint per key and effect`));
    } else seen.set(id, i);
  }
  return errors;
}

function hostErrors(doc: LoadedDocument, view: HostView): SiteError[] {
  const errors: SiteError[] = [];
  if (view.ownerData !== undefined) errors.push(...labelMapErrors(doc, ['data', 'metadata', 'owner_data'], view.ownerData, true));
  if (view.annotations !== undefined) {
    errors.push(...labelMapErrors(doc, ['data', 'metadata', 'annotations'], view.annotations, true, 'annotation'));
  }
  errors.push(...taintListErrors(doc, view.taints));
  const tags = new Set(view.tags.map(({ tag }) => tag));
  for (const { index, tag } of view.tags) {
    if (tag.startsWith('!') && tags.has(tag.slice(1))) {
      errors.push(
        documentError(doc, ['data', 'metadata', 'tags', index], `both ${quote(tag.slice(1))} and ${quote(tag)} are given; add the tag or remove it, not both`),
      );
    }
  }
  return errors;
}

/**
 * The checks of a node set: its name (a DNS subdomain, as it names the set
 * in targets and provenance), its selector (each problem at its field) and
 * what it declares, as a node's.
 */
function nodeSetErrors(doc: LoadedDocument): SiteError[] {
  const name = nameOf(doc.value);
  const errors = (name === undefined ? [] : dns1123SubdomainErrors(name)).map((message) =>
    documentError(doc, ['metadata', 'name'], `a node set name must be a DNS subdomain: ${invalidValue(name ?? '', message)}`),
  );
  const selector = valueAt(doc.value, ['data', 'selector']);
  if (selector === undefined)
    errors.push(documentError(doc, ['data'], 'missing required field "selector" (a label selector: matchLabels and/or matchExpressions)'));
  else for (const p of selectorProblems(selector)) errors.push(documentError(doc, ['data', 'selector', ...p.path], p.message, p.target));
  return [...errors, ...hostErrors(doc, hostView(doc.value))];
}

/**
 * The checks of what a node, host profile or rack declares, made on the raw
 * document (read leniently), so that they run whether or not its schema
 * passed.
 */
function declarationErrors(doc: LoadedDocument, kind: InterpretedKind): SiteError[] {
  switch (kind) {
    case 'node': {
      const name = nameOf(doc.value);
      const nameErrors = (name === undefined ? [] : dns1123SubdomainErrors(name)).map((message) =>
        documentError(doc, ['metadata', 'name'], `a Kubernetes Node name is required: ${invalidValue(name ?? '', message)}`),
      );
      return [...nameErrors, ...hostErrors(doc, hostView(doc.value))];
    }
    case 'profile':
      return hostErrors(doc, hostView(doc.value));
    case 'nodeSet':
      return nodeSetErrors(doc);
    case 'rack': {
      const labels = mapAt(doc.value, ['data', 'labels']);
      return labels === undefined ? [] : labelMapErrors(doc, ['data', 'labels'], labels, false);
    }
    default:
      return [];
  }
}

/**
 * The checks of a policy or plugin document, which relate its fields: made
 * on the parsed document, or, when it failed its schema, on a lenient view
 * of it (see `policyView`, `pluginView`); a finding at a place the schema
 * already refused (`refused`, paths as JSON) is the view's stand-in and is
 * left out.
 */
function relatedFieldErrors(doc: LoadedDocument, kind: InterpretedKind, parsed: unknown, refused: ReadonlySet<string>): SiteError[] {
  const kept = (path: readonly PathSegment[]) => !refused.has(JSON.stringify(path));
  switch (kind) {
    case 'policy': {
      const data = parsed === undefined ? policyView(doc.value) : (parsed as LabelPolicy).data;
      return policyProblems(data)
        .filter((p) => kept(p.path))
        .map((p) => documentError(doc, p.path, p.message, p.target));
    }
    case 'plugin': {
      const plugin = parsed === undefined ? pluginView(doc.value) : (parsed as LabelPlugin);
      const name = plugin.metadata.name;
      const nameErrors = (kept(['metadata', 'name']) ? dns1123SubdomainErrors(name) : []).map((message) =>
        documentError(doc, ['metadata', 'name'], `a plugin name must be a DNS subdomain: ${invalidValue(name, message)}`),
      );
      return [
        ...nameErrors,
        ...pluginProblems(plugin.data)
          .filter((p) => kept(p.path))
          .map((p) => documentError(doc, p.path, p.message)),
      ];
    }
    default:
      return [];
  }
}

function isAbstract(value: unknown): boolean {
  return valueAt(value, ['metadata', 'layeringDefinition', 'abstract']) === true;
}

/** Checks only the envelope of a document (a Deckhand document of some schema): what a layered document gets before it is rendered. */
export function checkEnvelope(doc: LoadedDocument): { checked: CheckedDocument; errors: SiteError[] } {
  const result = PassThroughDocument.safeParse(doc.value);
  return result.success
    ? { checked: { kind: 'passThrough', doc }, errors: [] }
    : { checked: { kind: 'invalid', doc }, errors: zodErrors(doc, result.error.issues) };
}

/**
 * Validates one loaded (not broken) document. Documents of the schemas
 * relabel interprets are checked strictly; `layeringDefinition.abstract`
 * documents are Deckhand layering templates and pass through, as do
 * documents of other schemas (only their envelope is checked). An unknown
 * schema in the `relabel/` namespace is an error.
 */
export function checkDocument(doc: LoadedDocument): { checked: CheckedDocument; errors: SiteError[] } {
  const schema = documentRef(doc.index, doc.value).schema;
  const strict = schema === undefined ? undefined : interpreted[schema];
  if (strict === undefined || isAbstract(doc.value)) {
    if (schema?.startsWith(RELABEL_SCHEMA_NAMESPACE) === true && strict === undefined) {
      const known = Object.values(SchemaName).filter((name) => name.startsWith(RELABEL_SCHEMA_NAMESPACE));
      const message = `unknown relabel schema ${quote(schema)} (known: ${known.join(', ')})`;
      return { checked: { kind: 'invalid', doc }, errors: [documentError(doc, ['schema'], message)] };
    }
    return checkEnvelope(doc);
  }
  const kind = KIND_OF_SCHEMA[schema as SchemaName];
  const result = strict.safeParse(doc.value);
  const issues = result.success ? [] : result.error.issues;
  const errors = [...zodErrors(doc, issues), ...declarationErrors(doc, kind)];
  const refused = new Set(issues.map((issue) => JSON.stringify(issue.path)));
  errors.push(...relatedFieldErrors(doc, kind, result.success ? result.data : undefined, refused));
  if (!result.success || errors.length > 0) return { checked: { kind: 'invalid', doc, schemaKind: kind }, errors };
  return { checked: classify(doc, schema as SchemaName, result.data), errors };
}

const KIND_OF_SCHEMA: Record<SchemaName, InterpretedKind> = {
  [SchemaName.BaremetalNode]: 'node',
  [SchemaName.HostProfile]: 'profile',
  [SchemaName.Rack]: 'rack',
  [SchemaName.Region]: 'region',
  [SchemaName.LabelPolicy]: 'policy',
  [SchemaName.LabelPlugin]: 'plugin',
  [SchemaName.NodeSet]: 'nodeSet',
};

function classify(doc: LoadedDocument, schema: SchemaName, value: unknown): CheckedDocument {
  switch (schema) {
    case SchemaName.BaremetalNode:
      return { kind: 'node', doc, value: value as BaremetalNode };
    case SchemaName.HostProfile:
      return { kind: 'profile', doc, value: value as HostProfile };
    case SchemaName.Rack:
      return { kind: 'rack', doc, value: value as Rack };
    case SchemaName.Region:
      return { kind: 'region', doc, value: value as Region };
    case SchemaName.LabelPolicy:
      return { kind: 'policy', doc, value: value as LabelPolicy };
    case SchemaName.LabelPlugin:
      return { kind: 'plugin', doc, value: value as LabelPlugin };
    case SchemaName.NodeSet:
      return { kind: 'nodeSet', doc, value: value as NodeSet };
  }
}
