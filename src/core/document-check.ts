/**
 * Validation of one document on its own: its envelope and schema (zod), then
 * the label syntax of what it declares. Checks that need other documents
 * happen later: names given twice among a set of documents in
 * `validate-documents.ts`, references, the policy and site-wide uniqueness
 * in site validation.
 */
import { quote } from './site-error.ts';
import type { z } from 'zod';
import { LabelPolicy, policyProblems } from './label-policy.ts';
import { LabelPlugin, pluginProblems } from './label-plugin.ts';
import { RECORD_ANNOTATIONS } from './constants.ts';
import { isKubeletLabelKey } from './label-keys.ts';
import { dns1123SubdomainErrors, invalidValue, labelKeyErrors, labelValueErrors } from './label-syntax.ts';
import {
  BaremetalNode,
  HostProfile,
  PassThroughDocument,
  Rack,
  RELABEL_SCHEMA_NAMESPACE,
  Region,
  SchemaName,
  TAINT_EFFECTS,
  type TaintEntry,
} from './schema.ts';
import { taintId, taintSyntaxErrors } from './taints.ts';
import type { PathSegment, SiteError } from './site-error.ts';
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
  | { kind: 'passThrough'; doc: LoadedDocument }
  | { kind: 'invalid'; doc: LoadedDocument };

const interpreted: Record<string, z.ZodType> = {
  [SchemaName.BaremetalNode]: BaremetalNode,
  [SchemaName.HostProfile]: HostProfile,
  [SchemaName.Rack]: Rack,
  [SchemaName.Region]: Region,
  [SchemaName.LabelPolicy]: LabelPolicy,
  [SchemaName.LabelPlugin]: LabelPlugin,
};

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const segment of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

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
 * (label-key syntax, relabel's own records refused) and values are not
 * checked (only a node's total size is, once inherited). At most {@link MAX_ERRORS_PER_LABEL_MAP} errors are
 * listed; one more error says how many were left out.
 */
export function labelMapErrors(
  doc: LoadedDocument,
  path: readonly PathSegment[],
  labels: Readonly<Record<string, string>>,
  deletions: boolean,
  kind: 'label' | 'annotation' = 'label',
): SiteError[] {
  const errors: SiteError[] = [];
  let unlisted = 0;
  const add = (key: string, message: string, target: 'key' | 'value') => {
    if (errors.length < MAX_ERRORS_PER_LABEL_MAP) errors.push(documentError(doc, [...path, key], message, target));
    else unlisted++;
  };
  for (const [key, value] of Object.entries(labels)) {
    if (deletions && key.startsWith('!')) {
      const deleted = key.slice(1);
      for (const message of labelKeyErrors(deleted)) add(key, `deletion key ${quote(key)}: ${invalidValue(deleted, message)}`, 'key');
      if (Object.hasOwn(labels, deleted)) add(key, `both ${quote(deleted)} and ${quote(key)} are given; set the key or delete it, not both`, 'key');
      continue;
    }
    for (const message of labelKeyErrors(key)) add(key, invalidValue(key, message), 'key');
    if (kind === 'annotation') {
      if (RECORD_ANNOTATIONS.includes(key)) add(key, `annotation ${quote(key)} is relabel's own record; documents may not set it`, 'key');
      continue;
    }
    if (isKubeletLabelKey(key)) add(key, `label ${quote(key)} is owned by the kubelet; documents may not set it (relabel never writes or removes it)`, 'key');
    for (const message of labelValueErrors(value)) add(key, invalidValue(value, message), 'value');
  }
  if (unlisted > 0) {
    errors.push(documentError(doc, path, `${unlisted} more error(s) in this map are not listed (at most ${MAX_ERRORS_PER_LABEL_MAP} are)`));
  }
  return errors;
}

/**
 * Checks a taint list as written in a document: each taint's syntax (see
 * `taintSyntaxErrors`), an effect on every taint but a deletion, a key and
 * effect given at most once, and no taint both set and deleted.
 */
export function taintListErrors(doc: LoadedDocument, taints: readonly TaintEntry[]): SiteError[] {
  const errors: SiteError[] = [];
  const seen = new Map<string, number>();
  const set = taints.filter((t) => !t.key.startsWith('!'));
  taints.forEach((taint, i) => {
    const at = (field: string): PathSegment[] => ['data', 'metadata', 'taints', i, field];
    if (taint.key.startsWith('!')) {
      const deleted = taint.key.slice(1);
      for (const message of labelKeyErrors(deleted)) errors.push(documentError(doc, at('key'), `deletion key ${quote(taint.key)}: ${invalidValue(deleted, message)}`));
      if (set.some((t) => t.key === deleted && (taint.effect === undefined || t.effect === taint.effect))) {
        const what = taint.effect === undefined ? quote(deleted) : quote(taintId({ key: deleted, effect: taint.effect }));
        errors.push(documentError(doc, at('key'), `both ${what} and its deletion ${quote(taint.key)} are given; set the taint or delete it, not both`));
      }
      return;
    }
    for (const { target, message } of taintSyntaxErrors(taint.key, taint.value)) errors.push(documentError(doc, at(target), message));
    if (taint.effect === undefined) {
      errors.push(documentError(doc, ['data', 'metadata', 'taints', i], `taint ${quote(taint.key)} needs an effect (one of ${TAINT_EFFECTS.join(', ')})`));
      return;
    }
    const id = taintId({ key: taint.key, effect: taint.effect });
    const first = seen.get(id);
    if (first !== undefined) {
      errors.push(documentError(doc, at('key'), `taint ${quote(id)} is given twice (also at taints[${first}]); a node has one taint per key and effect`));
    } else seen.set(id, i);
  });
  return errors;
}

function hostErrors(doc: LoadedDocument, value: BaremetalNode | HostProfile): SiteError[] {
  const errors: SiteError[] = [];
  const metadata = value.data.metadata;
  if (metadata?.owner_data !== undefined) {
    errors.push(...labelMapErrors(doc, ['data', 'metadata', 'owner_data'], metadata.owner_data, true));
  }
  if (metadata?.annotations !== undefined) {
    errors.push(...labelMapErrors(doc, ['data', 'metadata', 'annotations'], metadata.annotations, true, 'annotation'));
  }
  errors.push(...taintListErrors(doc, metadata?.taints ?? []));
  const tags = new Set(metadata?.tags ?? []);
  (metadata?.tags ?? []).forEach((tag, i) => {
    if (tag.startsWith('!') && tags.has(tag.slice(1))) {
      errors.push(
        documentError(doc, ['data', 'metadata', 'tags', i], `both ${quote(tag.slice(1))} and ${quote(tag)} are given; add the tag or remove it, not both`),
      );
    }
  });
  return errors;
}

function semanticErrors(checked: CheckedDocument): SiteError[] {
  const { doc } = checked;
  switch (checked.kind) {
    case 'node': {
      const name = checked.value.metadata.name;
      const nameErrors = dns1123SubdomainErrors(name).map((message) =>
        documentError(doc, ['metadata', 'name'], `a Kubernetes Node name is required: ${invalidValue(name, message)}`),
      );
      return [...nameErrors, ...hostErrors(doc, checked.value)];
    }
    case 'profile':
      return hostErrors(doc, checked.value);
    case 'rack':
      return checked.value.data.labels === undefined
        ? []
        : labelMapErrors(doc, ['data', 'labels'], checked.value.data.labels, false);
    case 'policy':
      return policyProblems(checked.value.data).map((p) => documentError(doc, p.path, p.message, p.target));
    case 'plugin': {
      const name = checked.value.metadata.name;
      const nameErrors = dns1123SubdomainErrors(name).map((message) =>
        documentError(doc, ['metadata', 'name'], `a plugin name must be a DNS subdomain: ${invalidValue(name, message)}`),
      );
      return [...nameErrors, ...pluginProblems(checked.value.data).map((p) => documentError(doc, p.path, p.message))];
    }
    default:
      return [];
  }
}

function isAbstract(value: unknown): boolean {
  return valueAt(value, ['metadata', 'layeringDefinition', 'abstract']) === true;
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
    const result = PassThroughDocument.safeParse(doc.value);
    return result.success
      ? { checked: { kind: 'passThrough', doc }, errors: [] }
      : { checked: { kind: 'invalid', doc }, errors: zodErrors(doc, result.error.issues) };
  }
  const result = strict.safeParse(doc.value);
  if (!result.success) return { checked: { kind: 'invalid', doc }, errors: zodErrors(doc, result.error.issues) };
  const checked = classify(doc, schema as SchemaName, result.data);
  const errors = semanticErrors(checked);
  return { checked: errors.length === 0 ? checked : { kind: 'invalid', doc }, errors };
}

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
  }
}
