/**
 * Drydock inheritance: resolves every node's effective owner_data,
 * annotations, taints, tags and rack through its host-profile chain. The
 * child wins; an owner_data or annotation key `!k` deletes the parent's `k`;
 * a taint with key `!k` removes the parent's taints with key `k` (with an
 * effect, only that one); tags merge and `!tag` removes the parent's
 * tag; rack `'!'` unsets the parent's rack. Cycles, dangling references and
 * duplicate names are errors. Everything is keyed by name, so the result does
 * not depend on the order of documents or files.
 */
import { quote } from '../plan/text.ts';
import type { CheckedDocument } from './document-check.ts';
import type { BaremetalNodeData, HostProfileData, NodeSetData } from './schema.ts';
import { SchemaName } from './schema.ts';
import type { PathSegment, SiteError } from '../plan/site-error.ts';
import { taintId, type Taint } from '../plan/taints.ts';
import { documentError } from './yaml-source.ts';
import type { LoadedDocument } from './yaml-source.ts';

/** Where a value was written: a document and a path in it. */
export type Origin = { doc: LoadedDocument; path: PathSegment[] };

/** A node or host profile document, by name. */
export type HostEntry = { name: string; doc: LoadedDocument; data: BaremetalNodeData | HostProfileData | NodeSetData };

/** A rack document, by name. */
export type RackEntry = { name: string; doc: LoadedDocument; labels: Record<string, string> };

/**
 * The valid documents of a site, keyed by name. `unresolvable` holds names
 * whose documents exist but failed validation or are duplicated: references
 * to them are not reported again as dangling.
 */
export type SiteIndex = {
  nodes: Map<string, HostEntry>;
  profiles: Map<string, HostEntry>;
  racks: Map<string, RackEntry>;
  unresolvable: { nodes: Set<string>; profiles: Set<string>; racks: Set<string> };
};

/** A node after inheritance, with where each effective value came from. */
export type ResolvedHost = {
  name: string;
  hostProfile: string | null;
  profileChain: string[];
  rack: { name: string; origin: Origin } | null;
  tags: string[];
  /** Effective owner_data, keys sorted; `depth` is the layer that gave it (0 the node, N its Nth host profile). */
  ownerData: Map<string, { value: string; origin: Origin; depth: number }>;
  /** Effective annotations, keys sorted. */
  annotations: Map<string, { value: string; origin: Origin; depth: number }>;
  /** Effective taints by `key:effect`, sorted. */
  taints: Map<string, { taint: Taint; origin: Origin }>;
};

function position(doc: LoadedDocument): string {
  const { line, column } = doc.position(['metadata', 'name'], 'value');
  return `${doc.source}:${line}:${column}`;
}

/**
 * Every occurrence of a name given to more than one of `entries` (documents
 * of one schema), each error naming where the others are. `duplicated`
 * holds those names.
 */
export function duplicateNameErrors(
  entries: readonly { name: string; doc: LoadedDocument }[],
  schema: string,
): { duplicated: Set<string>; errors: SiteError[] } {
  const groups = new Map<string, { name: string; doc: LoadedDocument }[]>();
  for (const entry of entries) groups.set(entry.name, [...(groups.get(entry.name) ?? []), entry]);
  const duplicated = new Set<string>();
  const errors: SiteError[] = [];
  for (const [name, group] of groups) {
    if (group.length < 2) continue;
    duplicated.add(name);
    for (const entry of group) {
      const elsewhere = group
        .filter((other) => other !== entry)
        .map((other) => position(other.doc))
        .sort();
      errors.push(documentError(entry.doc, ['metadata', 'name'], `duplicate ${schema} ${quote(name)}: also defined at ${elsewhere.join(', ')}`));
    }
  }
  return { duplicated, errors };
}

function byName<T extends { name: string; doc: LoadedDocument }>(
  entries: readonly T[],
  schema: string,
  unresolvable: Set<string>,
  errors: SiteError[],
): Map<string, T> {
  const duplicates = duplicateNameErrors(entries, schema);
  errors.push(...duplicates.errors);
  const unique = new Map<string, T>();
  for (const entry of entries) {
    if (duplicates.duplicated.has(entry.name)) unresolvable.add(entry.name);
    else unique.set(entry.name, entry);
  }
  return new Map([...unique].sort(([a], [b]) => (a < b ? -1 : 1)));
}

/**
 * Indexes checked documents by name, reporting every occurrence of a
 * duplicated node, host profile or rack name (each naming the others).
 * `failed` lists the schema and name of documents that did not validate.
 */
export function indexSite(
  checked: readonly CheckedDocument[],
  failed: readonly { schema?: string; name?: string }[],
): { index: SiteIndex; errors: SiteError[] } {
  const errors: SiteError[] = [];
  const unresolvable = { nodes: new Set<string>(), profiles: new Set<string>(), racks: new Set<string>() };
  for (const { schema, name } of failed) {
    if (name === undefined) continue;
    if (schema === SchemaName.BaremetalNode) unresolvable.nodes.add(name);
    if (schema === SchemaName.HostProfile) unresolvable.profiles.add(name);
    if (schema === SchemaName.Rack) unresolvable.racks.add(name);
  }
  const nodes: HostEntry[] = [];
  const profiles: HostEntry[] = [];
  const racks: RackEntry[] = [];
  for (const c of checked) {
    if (c.kind === 'node') nodes.push({ name: c.value.metadata.name, doc: c.doc, data: c.value.data });
    if (c.kind === 'profile') profiles.push({ name: c.value.metadata.name, doc: c.doc, data: c.value.data });
    if (c.kind === 'rack') racks.push({ name: c.value.metadata.name, doc: c.doc, labels: c.value.data.labels ?? {} });
  }
  const index: SiteIndex = {
    nodes: byName(nodes, SchemaName.BaremetalNode, unresolvable.nodes, errors),
    profiles: byName(profiles, SchemaName.HostProfile, unresolvable.profiles, errors),
    racks: byName(racks, SchemaName.Rack, unresolvable.racks, errors),
    unresolvable,
  };
  for (const name of unresolvable.nodes) index.nodes.delete(name);
  for (const name of unresolvable.profiles) index.profiles.delete(name);
  for (const name of unresolvable.racks) index.racks.delete(name);
  return { index, errors };
}

/** The error of a node or host profile (`entry`) whose `host_profile` names a profile that does not exist. */
export function danglingProfile(entry: Pick<HostEntry, 'doc'>, parent: string): SiteError {
  return documentError(
    entry.doc,
    ['data', 'host_profile'],
    `host profile ${quote(parent)} is not defined (no ${SchemaName.HostProfile} document named ${quote(parent)})`,
  );
}

/**
 * Finds every host-profile cycle and every dangling parent reference among
 * profiles. Each cycle is reported once per member, listed from its
 * alphabetically first member: `a -> b -> a`.
 */
export function profileGraphErrors(index: SiteIndex): SiteError[] {
  const errors: SiteError[] = [];
  const reported = new Set<string>();
  for (const [name, entry] of index.profiles) {
    const parent = entry.data.host_profile;
    if (parent !== undefined && !index.profiles.has(parent) && !index.unresolvable.profiles.has(parent)) {
      errors.push(danglingProfile(entry, parent));
    }
    const walk: string[] = [];
    let current: string | undefined = name;
    while (current !== undefined && index.profiles.has(current) && !walk.includes(current)) {
      walk.push(current);
      current = index.profiles.get(current)?.data.host_profile;
    }
    if (current === undefined || !walk.includes(current)) continue;
    const members = walk.slice(walk.indexOf(current));
    const start = members.indexOf([...members].sort()[0] ?? current);
    const cycle = [...members.slice(start), ...members.slice(0, start)];
    const key = cycle.join('\u0000');
    if (reported.has(key)) continue;
    reported.add(key);
    const text = [...cycle, cycle[0]].join(' -> ');
    for (const member of cycle) {
      const memberEntry = index.profiles.get(member);
      if (memberEntry !== undefined) {
        errors.push(documentError(memberEntry.doc, ['data', 'host_profile'], `host profile inheritance cycle: ${text}`));
      }
    }
  }
  return errors;
}

// The node's chain, leaf first: [node, profile, parent, ...]. Undefined when
// it runs into a cycle or a profile that is missing or failed validation.
function chainOf(node: HostEntry, index: SiteIndex): HostEntry[] | undefined {
  const chain = [node];
  const seen = new Set<string>();
  let parent = node.data.host_profile;
  while (parent !== undefined) {
    const entry = index.profiles.get(parent);
    if (entry === undefined || seen.has(parent)) return undefined;
    seen.add(parent);
    chain.push(entry);
    parent = entry.data.host_profile;
  }
  return chain;
}

type Inherited = Map<string, { value: string; origin: Origin; depth: number }>;

// One layer's map over its parent's: deletions first, since they address the
// parent's keys, never the layer's own (a layer giving both `k` and `!k` was
// rejected when it was checked).
function layerMap(into: Inherited, layer: HostEntry, field: 'owner_data' | 'annotations', depth: number): void {
  const entries = Object.entries(layer.data.metadata?.[field] ?? {});
  for (const [key] of entries) if (key.startsWith('!')) into.delete(key.slice(1));
  for (const [key, value] of entries) {
    if (!key.startsWith('!')) into.set(key, { value, origin: { doc: layer.doc, path: ['data', 'metadata', field, key] }, depth });
  }
}

// One layer's taints over its parent's: `!k` removes the parent's taints with
// key `k` (only the one with the effect given, if any); a taint replaces the
// parent's taint of the same key and effect.
function layerTaints(into: Map<string, { taint: Taint; origin: Origin }>, layer: HostEntry): void {
  const taints = layer.data.metadata?.taints ?? [];
  for (const { key, effect } of taints) {
    if (!key.startsWith('!')) continue;
    for (const [id, { taint }] of into) if (taint.key === key.slice(1) && (effect === undefined || taint.effect === effect)) into.delete(id);
  }
  taints.forEach(({ key, value, effect }, i) => {
    if (key.startsWith('!') || effect === undefined) return;
    const taint: Taint = value === undefined ? { key, effect } : { key, value, effect };
    into.set(taintId(taint), { taint, origin: { doc: layer.doc, path: ['data', 'metadata', 'taints', i] } });
  });
}

const sortedMap = <T>(map: Map<string, T>) => new Map([...map].sort(([a], [b]) => (a < b ? -1 : 1)));

function inherit(chain: readonly HostEntry[], name: string): ResolvedHost {
  const ownerData: Inherited = new Map();
  const annotations: Inherited = new Map();
  const taints = new Map<string, { taint: Taint; origin: Origin }>();
  const tags = new Set<string>();
  let rack: ResolvedHost['rack'] = null;
  for (let depth = chain.length - 1; depth >= 0; depth--) {
    const layer = chain[depth] as HostEntry;
    const metadata = layer.data.metadata;
    layerMap(ownerData, layer, 'owner_data', depth);
    layerMap(annotations, layer, 'annotations', depth);
    layerTaints(taints, layer);
    for (const tag of metadata?.tags ?? []) if (tag.startsWith('!')) tags.delete(tag.slice(1));
    for (const tag of metadata?.tags ?? []) if (!tag.startsWith('!')) tags.add(tag);
    const layerRack = metadata?.rack;
    if (layerRack === '!') rack = null;
    else if (layerRack !== undefined) rack = { name: layerRack, origin: { doc: layer.doc, path: ['data', 'metadata', 'rack'] } };
  }
  return {
    name,
    hostProfile: chain[0]?.data.host_profile ?? null,
    profileChain: chain.slice(1).map((entry) => entry.name),
    rack,
    tags: [...tags].sort(),
    ownerData: sortedMap(ownerData),
    annotations: sortedMap(annotations),
    taints: sortedMap(taints),
  };
}

/**
 * Resolves every uniquely named, valid node through its host-profile chain.
 * Reports nodes naming an undefined host profile; a rack with no
 * `drydock/Rack/v1` document is no error (Drydock needs none). A node whose chain hits a cycle or a profile
 * that failed validation is left out silently: that cause is reported once,
 * at the profile.
 */
export function resolveHosts(index: SiteIndex): { hosts: Map<string, ResolvedHost>; errors: SiteError[] } {
  return resolveEntries(index.nodes, index);
}

/**
 * Resolves `entries` (nodes, or node sets, which inherit as nodes do)
 * through their host-profile chains in `index`, as {@link resolveHosts}.
 */
export function resolveEntries(entries: ReadonlyMap<string, HostEntry>, index: SiteIndex): { hosts: Map<string, ResolvedHost>; errors: SiteError[] } {
  const errors: SiteError[] = [];
  const hosts = new Map<string, ResolvedHost>();
  for (const [name, node] of entries) {
    const parent = node.data.host_profile;
    if (parent !== undefined && !index.profiles.has(parent) && !index.unresolvable.profiles.has(parent)) {
      errors.push(danglingProfile(node, parent));
      continue;
    }
    const chain = chainOf(node, index);
    if (chain === undefined) continue;
    const host = inherit(chain, name);
    // A rack with no Rack document is a rack all the same, as Drydock reads it (with no rack labels);
    // one whose document failed its checks is reported there.
    if (host.rack !== null && index.unresolvable.racks.has(host.rack.name)) continue;
    hosts.set(name, host);
  }
  return { hosts, errors };
}
