/**
 * Validation of documents each on its own, without the rest of the site: what
 * staging a bucket checks. YAML syntax, the envelope and schema of every
 * document, the label syntax of what it declares, and names given twice
 * among these documents. Nothing that needs other documents (host profiles,
 * racks, the label policy, inheritance, conflicts, site-wide uniqueness):
 * those may be in another bucket, and are checked when the site is
 * validated whole (`validate-site.ts`), as a commit does.
 */
import { checkDocument, checkEnvelope } from './document-check.ts';
import { layeredOntoOthers, layeringErrors } from './render-site.ts';
import { renderSite } from './render-site.ts';
import type { CheckedDocument, InterpretedKind } from './document-check.ts';
import { nameOf } from './document-view.ts';
import { duplicateNameErrors } from './design-resolve.ts';
import { SchemaName } from './schema.ts';
import type { SiteError } from '../plan/site-error.ts';
import { sortErrors } from '../plan/site-error.ts';
import { loadSources } from './yaml-source.ts';
import { machineOnlyLabelWarnings } from './node-set-resolve.ts';
import type { LoadedDocument, SiteSource } from './yaml-source.ts';

/** Every document of some sources after its own validation, and the errors found. */
export type CheckedDocuments = {
  /** Documents that were readable YAML, validated on their own. */
  checked: CheckedDocument[];
  /** Documents whose YAML had errors (not validated further). */
  broken: LoadedDocument[];
  /** YAML and per-document errors, in no particular order. */
  errors: SiteError[];
  /** Whether the site was to be rendered and could not be (then `checked` is empty). */
  unrendered?: boolean;
};

/**
 * Loads `sources` and validates each document on its own (the first phase
 * of every validation). With `render`, the site is rendered first (as
 * Deckhand renders it) and the rendered documents are validated; a site
 * that does not render returns its rendering errors and no documents.
 * Without it (a bucket staged on its own), a document layered onto a
 * parent or substituted into is checked for its envelope and layering
 * only: its fields mean something only once rendered with the rest.
 */
export function checkEachDocument(sources: readonly SiteSource[], options: { render?: boolean } = {}): CheckedDocuments {
  const loaded = loadSources(sources);
  const errors: SiteError[] = [...loaded.errors];
  const checked: CheckedDocument[] = [];
  const broken: LoadedDocument[] = loaded.documents.filter((doc) => doc.broken);
  let documents = loaded.documents.filter((doc) => !doc.broken);
  if (options.render === true) {
    const rendered = renderSite(documents);
    errors.push(...rendered.errors);
    documents = rendered.documents;
    if (rendered.errors.length > 0) return { checked, broken, errors, unrendered: true };
  } else {
    errors.push(...layeringErrors(documents));
  }
  for (const doc of documents) {
    const result = options.render === true || !layeredOntoOthers(doc.value) ? checkDocument(doc) : checkEnvelope(doc);
    checked.push(result.checked);
    errors.push(...result.errors);
  }
  return { checked, broken, errors };
}

const SCHEMA_OF_KIND: Partial<Record<CheckedDocument['kind'], SchemaName>> = {
  node: SchemaName.BaremetalNode,
  profile: SchemaName.HostProfile,
  rack: SchemaName.Rack,
  region: SchemaName.Region,
  policy: SchemaName.LabelPolicy,
  plugin: SchemaName.LabelPlugin,
  nodeSet: SchemaName.NodeSet,
};

/**
 * Names given to more than one document of the same interpreted schema
 * among `checked`, whether or not they passed their own checks, every
 * occurrence reported (as site validation reports them). With `kinds`, only
 * those kinds; with `withFailed`, only the names one of whose documents
 * failed its own checks (site validation reports the others as it indexes
 * the valid ones).
 */
export function duplicateErrors(checked: readonly CheckedDocument[], options: { kinds?: readonly InterpretedKind[]; withFailed?: boolean } = {}): SiteError[] {
  const bySchema = new Map<SchemaName, { name: string; doc: LoadedDocument; failed: boolean }[]>();
  for (const c of checked) {
    const kind = c.kind === 'invalid' ? c.schemaKind : c.kind === 'passThrough' ? undefined : c.kind;
    const schema = kind === undefined ? undefined : SCHEMA_OF_KIND[kind];
    const name = nameOf(c.doc.value);
    if (schema === undefined || kind === undefined || name === undefined || (options.kinds !== undefined && !options.kinds.includes(kind))) continue;
    bySchema.set(schema, [...(bySchema.get(schema) ?? []), { name, doc: c.doc, failed: c.kind === 'invalid' }]);
  }
  return [...bySchema].flatMap(([schema, entries]) => {
    const failedNames = new Set(entries.filter((e) => e.failed).map((e) => e.name));
    const kept = options.withFailed === true ? entries.filter((e) => failedNames.has(e.name)) : entries;
    return duplicateNameErrors(kept, schema).errors;
  });
}

/**
 * Either every document is valid on its own (with how many there are, and
 * the warnings found, when any), or every error found; never both.
 */
export type DocumentsValidation = { ok: true; documents: number; warnings?: SiteError[] } | { ok: false; errors: SiteError[] };

/**
 * Validates the documents of `sources` each on its own, plus names given
 * twice among them: the checks a bucket must pass to be staged. Pure; every
 * error collected, sorted by file, line and column. A valid bucket's
 * warnings (a node-set selector reading a label Cluster API keeps on
 * Machines only) are returned beside it: they refuse nothing.
 */
export function validateDocumentsAlone(sources: readonly SiteSource[]): DocumentsValidation {
  const { checked, broken, errors } = checkEachDocument(sources);
  errors.push(...duplicateErrors(checked));
  if (errors.length > 0 || broken.length > 0) return { ok: false, errors: sortErrors(errors) };
  const warnings = machineOnlyLabelWarnings(checked);
  return { ok: true, documents: checked.length, ...(warnings.length > 0 ? { warnings: sortErrors(warnings) } : {}) };
}
