/**
 * What a document change does to one site: its rendered documents added,
 * changed and removed, and its nodes' desired labels, annotations and
 * taints gained, changed and lost, between two validated renderings of the
 * site (a base and a head). Also which source documents differ between two
 * versions of a repository's files, so a node's change can name the changed
 * document it comes from. Pure: the caller reads the files and validates.
 */
import type { Taint } from '../plan/taints.ts';
import { valueAt } from './document-view.ts';
import type { LabelSource } from './label-provenance.ts';
import { SchemaName } from './schema.ts';
import type { Design, DesignNode, SiteDocument, SiteValidation } from './validate-site.ts';
import { documentRef, loadSources, type SiteSource } from './yaml-source.ts';

/** How a document, a node or a key differs from the base to the head. */
export const Change = { added: 'added', changed: 'changed', removed: 'removed' } as const;
/** One of the {@link Change} names. */
export type Change = (typeof Change)[keyof typeof Change];

/** A document by schema and name (a nameless one by its place: `#<index>` of its file). */
export type DocumentKey = { schema: string; name: string };

/** A source document that differs between the base and the head: its file, schema, name and Deckhand layer. */
export type ChangedSourceDocument = DocumentKey & { source: string; layer: string; change: Change };

/** The keys of one kind (labels, annotations or taints) gained, changed and lost by one node. */
export type KeyChanges = {
  gained: Record<string, string>;
  changed: Record<string, { from: string; to: string }>;
  lost: Record<string, string>;
};

/** One node (or node set) whose desired labels, annotations or taints differ, and the changed source documents it reads. */
export type NodeChange = {
  name: string;
  kind: 'node' | 'node_set';
  change: Change;
  labels: KeyChanges;
  annotations: KeyChanges;
  /** Taints keyed `key:effect`, valued by their value (`''` when none). */
  taints: KeyChanges;
  /** The changed source documents the change comes from: those its changed labels are read from, or, for other changes, any its design reads. */
  causes: ChangedSourceDocument[];
};

/** Counts of keys gained, changed and lost, over every node of a site. */
export type KeyCounts = { gained: number; changed: number; lost: number };

/** One site's reach, compared from a valid base to a valid head. */
export type SiteDiff = {
  /** Whether any rendered document or any node's desired keys differ. */
  reached: boolean;
  documents: Record<Change, DocumentKey[]>;
  /** Nodes and node sets whose desired keys differ, by name. */
  nodes: NodeChange[];
  keys: { labels: KeyCounts; annotations: KeyCounts; taints: KeyCounts };
};

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const keyText = (k: DocumentKey) => `${k.schema}\u0000${k.name}`;
const compareKeys = (a: DocumentKey, b: DocumentKey) => byText(a.schema, b.schema) || byText(a.name, b.name);

/** JSON text with every mapping's keys sorted: two values are equal exactly when their texts are. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => byText(a, b));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  if (value instanceof Date) return JSON.stringify(value.toISOString());
  return JSON.stringify(value) ?? 'null';
}

/** Documents keyed by schema and name; a second of one key gets its place appended so none is lost. */
function keyed<T>(items: readonly T[], keyOf: (item: T) => DocumentKey): Map<string, { key: DocumentKey; item: T }> {
  const map = new Map<string, { key: DocumentKey; item: T }>();
  for (const item of items) {
    let key = keyOf(item);
    for (let n = 2; map.has(keyText(key)); n++) key = { schema: key.schema, name: `${keyOf(item).name} (${n})` };
    map.set(keyText(key), { key, item });
  }
  return map;
}

/** The rendered documents added, changed (data differs) and removed from `base` to `head`, each sorted by schema and name. */
export function documentChanges(base: readonly SiteDocument[], head: readonly SiteDocument[]): Record<Change, DocumentKey[]> {
  const keyOf = (d: SiteDocument): DocumentKey => ({ schema: d.schema, name: d.name || `#${d.index} of ${d.source}` });
  const before = keyed(base, keyOf);
  const after = keyed(head, keyOf);
  const out: Record<Change, DocumentKey[]> = { added: [], changed: [], removed: [] };
  for (const [text, { key, item }] of after) {
    const was = before.get(text);
    if (was === undefined) out.added.push(key);
    else if (canonicalJson(was.item.data) !== canonicalJson(item.data)) out.changed.push(key);
  }
  for (const [text, { key }] of before) if (!after.has(text)) out.removed.push(key);
  for (const list of Object.values(out)) list.sort(compareKeys);
  return out;
}

/** Keys gained, changed and lost from `base` to `head`. */
export function keyChanges(base: Readonly<Record<string, string>>, head: Readonly<Record<string, string>>): KeyChanges {
  const out: KeyChanges = { gained: {}, changed: {}, lost: {} };
  for (const key of Object.keys(head).sort(byText)) {
    const to = head[key] as string;
    const from = base[key];
    if (from === undefined) out.gained[key] = to;
    else if (from !== to) out.changed[key] = { from, to };
  }
  for (const key of Object.keys(base).sort(byText)) if (!(key in head)) out.lost[key] = base[key] as string;
  return out;
}

function taintRecord(taints: readonly Taint[]): Record<string, string> {
  return Object.fromEntries(taints.map((t) => [`${t.key}:${t.effect}`, t.value ?? '']));
}

const isEmpty = (k: KeyChanges) => Object.keys(k.gained).length + Object.keys(k.changed).length + Object.keys(k.lost).length === 0;

/** The source document a desired label's value was read from, when its source is a document. */
function documentOf(source: LabelSource | undefined, node: DesignNode, kind: NodeChange['kind']): DocumentKey | undefined {
  switch (source?.kind) {
    case 'node':
      return { schema: kind === 'node' ? SchemaName.BaremetalNode : SchemaName.NodeSet, name: source.from?.name ?? node.name };
    case 'host_profile':
      return { schema: SchemaName.HostProfile, name: source.from?.name ?? source.profile };
    case 'rack':
      return { schema: SchemaName.Rack, name: source.rack };
    case 'node_set':
      return { schema: SchemaName.NodeSet, name: source.set };
    default:
      return undefined;
  }
}

/** Every source document a node's design reads: its own, its host profiles, its rack, and the layered parents its labels came from. */
function readsOf(node: DesignNode, kind: NodeChange['kind']): DocumentKey[] {
  const reads: DocumentKey[] = [{ schema: kind === 'node' ? SchemaName.BaremetalNode : SchemaName.NodeSet, name: node.name }];
  for (const profile of node.profileChain) reads.push({ schema: SchemaName.HostProfile, name: profile });
  if (node.rack !== null) reads.push({ schema: SchemaName.Rack, name: node.rack });
  for (const source of Object.values(node.labelSources)) {
    const doc = documentOf(source, node, kind);
    if (doc !== undefined) reads.push(doc);
  }
  return reads;
}

/**
 * The documents a node's change can come from: for a changed label, the
 * document its value is read from at either side (provenance says which);
 * for changed annotations or taints, or a node added or removed, which
 * have no provenance, every document its design reads.
 */
function changeReads(was: Host | undefined, is: Host | undefined, labels: KeyChanges, others: boolean): DocumentKey[] {
  const sides = [was, is].filter((h) => h !== undefined);
  if (others || sides.length < 2) return sides.flatMap((h) => readsOf(h.node, h.kind));
  const keys = [...Object.keys(labels.gained), ...Object.keys(labels.changed), ...Object.keys(labels.lost)];
  return keys.flatMap((key) => sides.flatMap((h) => documentOf(h.node.labelSources[key], h.node, h.kind) ?? []));
}

type Host = { node: DesignNode; kind: NodeChange['kind'] };

function hostsOf(design: Design | undefined): Map<string, Host> {
  const hosts = new Map<string, Host>();
  if (design === undefined) return hosts;
  for (const node of Object.values(design.nodes)) hosts.set(`node\u0000${node.name}`, { node, kind: 'node' });
  for (const set of Object.values(design.nodeSets ?? {})) hosts.set(`node_set\u0000${set.name}`, { node: set, kind: 'node_set' });
  return hosts;
}

const NO_KEYS: Pick<DesignNode, 'labels' | 'annotations' | 'taints'> = { labels: {}, annotations: {}, taints: [] };

/**
 * The nodes and node sets whose desired labels, annotations or taints
 * differ from `base` to `head` (an absent side has none), sorted by name
 * (nodes before node sets of one name), each with the documents of
 * `changedSources` it reads at either side.
 */
export function nodeChanges(base: Design | undefined, head: Design | undefined, changedSources: readonly ChangedSourceDocument[] = []): NodeChange[] {
  const before = hostsOf(base);
  const after = hostsOf(head);
  const changedByKey = new Map<string, ChangedSourceDocument[]>();
  for (const doc of changedSources) changedByKey.set(keyText(doc), [...(changedByKey.get(keyText(doc)) ?? []), doc]);
  const out: NodeChange[] = [];
  for (const id of [...new Set([...before.keys(), ...after.keys()])].sort(byText)) {
    const was = before.get(id);
    const is = after.get(id);
    const host = (is ?? was) as Host;
    const from = was?.node ?? NO_KEYS;
    const to = is?.node ?? NO_KEYS;
    const labels = keyChanges(from.labels, to.labels);
    const annotations = keyChanges(from.annotations, to.annotations);
    const taints = keyChanges(taintRecord(from.taints), taintRecord(to.taints));
    if (isEmpty(labels) && isEmpty(annotations) && isEmpty(taints) && was !== undefined && is !== undefined) continue;
    const reads = changeReads(was, is, labels, !isEmpty(annotations) || !isEmpty(taints));
    const causes = new Map<string, ChangedSourceDocument>();
    for (const read of reads) for (const doc of changedByKey.get(keyText(read)) ?? []) causes.set(`${doc.source}\u0000${keyText(doc)}`, doc);
    out.push({
      name: host.node.name,
      kind: host.kind,
      change: was === undefined ? Change.added : is === undefined ? Change.removed : Change.changed,
      labels,
      annotations,
      taints,
      causes: [...causes.values()].sort((a, b) => byText(a.source, b.source) || compareKeys(a, b)),
    });
  }
  return out;
}

function counts(changes: readonly KeyChanges[]): KeyCounts {
  const sum = (pick: (k: KeyChanges) => object) => changes.reduce((n, k) => n + Object.keys(pick(k)).length, 0);
  return { gained: sum((k) => k.gained), changed: sum((k) => k.changed), lost: sum((k) => k.lost) };
}

/** A site that validated: its design and rendered documents. */
export type ValidSite = Pick<Extract<SiteValidation, { ok: true }>, 'design' | 'documents'>;

/**
 * One site compared from a valid base to a valid head: what its documents
 * and nodes gain, change and lose. An absent side (a site only one version
 * of the repository has) has no documents and no nodes.
 */
export function siteDiff(base: ValidSite | undefined, head: ValidSite | undefined, changedSources: readonly ChangedSourceDocument[] = []): SiteDiff {
  const documents = documentChanges(base?.documents ?? [], head?.documents ?? []);
  const nodes = nodeChanges(base?.design, head?.design, changedSources);
  const docCount = documents.added.length + documents.changed.length + documents.removed.length;
  return {
    reached: docCount > 0 || nodes.length > 0,
    documents,
    nodes,
    keys: { labels: counts(nodes.map((n) => n.labels)), annotations: counts(nodes.map((n) => n.annotations)), taints: counts(nodes.map((n) => n.taints)) },
  };
}

/** The documents of one file, keyed, each as its canonical text and layer; a file that does not read as YAML is one document keyed by the file. */
function sourceDocuments(file: SiteSource | undefined): Map<string, { key: DocumentKey; layer: string; text: string }> {
  if (file === undefined) return new Map();
  const loaded = loadSources([file]);
  const docs = loaded.documents.map((d) => {
    const ref = documentRef(d.index, d.value);
    const layer = valueAt(d.value, ['metadata', 'layeringDefinition', 'layer']);
    return { key: { schema: ref.schema ?? '', name: ref.name ?? `#${d.index}` }, layer: typeof layer === 'string' ? layer : '', text: canonicalJson(d.value) };
  });
  const map = keyed(docs, (d) => d.key);
  return new Map([...map].map(([k, { key, item }]) => [k, { ...item, key }]));
}

/**
 * The source documents added, changed and removed between two versions of
 * a set of files (`base` and `head`, each file named by its path): files of
 * equal text are not read; in the others, documents are matched by schema
 * and name and compared as read. Sorted by file, schema and name.
 */
export function changedSourceDocuments(base: readonly SiteSource[], head: readonly SiteSource[]): ChangedSourceDocument[] {
  const before = new Map(base.map((f) => [f.source, f]));
  const after = new Map(head.map((f) => [f.source, f]));
  const out: ChangedSourceDocument[] = [];
  for (const source of [...new Set([...before.keys(), ...after.keys()])].sort(byText)) {
    const was = before.get(source);
    const is = after.get(source);
    if (was !== undefined && is !== undefined && was.text === is.text) continue;
    const old = sourceDocuments(was);
    const now = sourceDocuments(is);
    const changes: ChangedSourceDocument[] = [];
    for (const [k, doc] of now) {
      const prior = old.get(k);
      if (prior === undefined || prior.text !== doc.text)
        changes.push({ source, ...doc.key, layer: doc.layer, change: prior === undefined ? Change.added : Change.changed });
    }
    for (const [k, doc] of old) if (!now.has(k)) changes.push({ source, ...doc.key, layer: doc.layer, change: Change.removed });
    out.push(...changes.sort(compareKeys));
  }
  return out;
}
