/**
 * The render step of site validation: the loaded documents rendered as
 * Deckhand renders them (`core/render`), each rendered document keeping
 * its own file and positions (a field it inherited points at the nearest
 * field the document writes itself), and the documents it was layered from,
 * so a label can say which layered document gave it.
 */
import { renderDocuments, type ReadFields, type RenderProblem } from '../render/render.ts';
import { isLayered, readMeta } from '../render/document-meta.ts';
import { sortErrors, type PathSegment, type SiteError } from '../plan/site-error.ts';
import { SchemaName } from './schema.ts';
import { documentError, loadSources, type LayeredFrom, type LoadedDocument, type SiteSource } from './yaml-source.ts';
import { nameOf, valueAt } from './document-view.ts';

/** The host fields relabel reads of a node, host profile or node set. */
const HOST_FIELDS: readonly (readonly PathSegment[])[] = [
  ['data', 'host_profile'],
  ['data', 'metadata', 'owner_data'],
  ['data', 'metadata', 'annotations'],
  ['data', 'metadata', 'taints'],
  ['data', 'metadata', 'tags'],
  ['data', 'metadata', 'rack'],
  ['data', 'selector'],
];

const READ_FIELDS: Record<string, readonly (readonly PathSegment[])[]> = {
  [SchemaName.BaremetalNode]: HOST_FIELDS,
  [SchemaName.HostProfile]: HOST_FIELDS,
  [SchemaName.NodeSet]: HOST_FIELDS,
  [SchemaName.Rack]: [['data', 'labels']],
  [SchemaName.LabelPolicy]: [['data']],
  [SchemaName.LabelPlugin]: [['data']],
};

/** The fields of a schema's documents relabel reads: where a substitution may not lack its source. */
export const readFields: ReadFields = (schema) => READ_FIELDS[schema] ?? [];

export type { LayeredFrom } from './yaml-source.ts';

// What each rendered document's paths were layered from, found once: a profile's keys are asked of
// for every node using it. A tree by path segment, so a lookup builds no key.
type Found = { found?: LayeredFrom | null; next?: Map<PathSegment, Found> };
const layeredSources = new WeakMap<LoadedDocument, Found>();

/** Which layered document wrote the value at `path` of a rendered `doc`: the nearest in its chain holding that value, or undefined when `doc` itself does (or it was not layered). */
export function layeredSource(doc: LoadedDocument, path: readonly PathSegment[]): LayeredFrom | undefined {
  const chain = doc.layeredFrom;
  if (chain === undefined) return undefined;
  let here = layeredSources.get(doc);
  if (here === undefined) layeredSources.set(doc, (here = {}));
  for (const segment of path) {
    here.next ??= new Map();
    let next = here.next.get(segment);
    if (next === undefined) here.next.set(segment, (next = {}));
    here = next;
  }
  if (here.found !== undefined) return here.found ?? undefined;
  const value = valueAt(doc.value, path);
  const own = chain.find((entry) => valueAt(entry.value, path) === value && value !== undefined);
  const found = own === undefined || own === chain[0] ? undefined : own;
  here.found = found ?? null;
  return found;
}

function layerOf(value: unknown): string {
  const layer = valueAt(value, ['metadata', 'layeringDefinition', 'layer']);
  return typeof layer === 'string' ? layer : '';
}

/** The rendered site, or the errors that kept it from rendering (then no documents). */
export type RenderedSite = { documents: LoadedDocument[]; errors: SiteError[] };

/** Renders `documents` (readable YAML, each a mapping) as Deckhand does; errors name the file, document and field. */
export function renderSite(documents: readonly LoadedDocument[], redact?: (path: string) => string): RenderedSite {
  const result = renderDocuments(
    documents.map((d) => d.value as Record<string, unknown>),
    { readFields, ...(redact === undefined ? {} : { redact }) },
  );
  const errors = result.problems.map((p) => documentError(documents[p.document] as LoadedDocument, p.path, p.message));
  if (errors.length > 0) return { documents: [], errors };
  if (!result.layered) return { documents: [...documents], errors };
  const rendered = result.documents.map((r) => {
    const doc = documents[r.document] as LoadedDocument;
    if (r.chain.length === 1) return r.value === doc.value ? doc : { ...doc, value: r.value };
    const chain = r.chain.map((i): LayeredFrom => {
      const input = (documents[i] as LoadedDocument).value;
      return { name: nameOf(input) ?? '', layer: layerOf(input), value: input };
    });
    return { ...doc, value: r.value, layeredFrom: chain };
  });
  return { documents: rendered, errors };
}

/** Whether a document's fields mean something only once rendered: it has a parent, substitutions, or replaces another. */
export function layeredOntoOthers(value: unknown): boolean {
  const metadata = valueAt(value, ['metadata']);
  return (
    isLayered(readMeta((typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>, 0, [])) &&
    valueAt(metadata, ['layeringDefinition', 'abstract']) !== true
  );
}

/** The layering fields of each document checked on its own (as a bucket is staged): malformed actions, selectors, substitutions. */
export function layeringErrors(documents: readonly LoadedDocument[]): SiteError[] {
  const errors: SiteError[] = [];
  for (const doc of documents) {
    const problems: RenderProblem[] = [];
    readMeta(doc.value as Record<string, unknown>, 0, problems);
    for (const p of problems) errors.push(documentError(doc, p.path, p.message));
  }
  return errors;
}

/**
 * A site's rendered documents as Deckhand answers them (abstract and replaced
 * documents left out), or the errors that keep it from rendering. With
 * `redact`, the paths of each substitution from an encrypted document are
 * replaced by `redact(path)`, as Deckhand hides which fields hold secrets
 * (it answers the SHA-256 of the path's JSON text).
 */
export function renderedDocuments(
  sources: readonly SiteSource[],
  redact?: (path: string) => string,
): { ok: true; documents: Record<string, unknown>[] } | { ok: false; errors: SiteError[] } {
  const loaded = loadSources(sources);
  if (loaded.errors.length > 0) return { ok: false, errors: sortErrors(loaded.errors) };
  const rendered = renderSite(loaded.documents, redact);
  if (rendered.errors.length > 0) return { ok: false, errors: sortErrors(rendered.errors) };
  return { ok: true, documents: rendered.documents.map((d) => d.value as Record<string, unknown>) };
}
