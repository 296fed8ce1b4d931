/**
 * The desired labels of a node: its inherited owner_data together with the
 * labels generated from the design.
 *
 * Generated labels (each switched on by the label policy; `<domain>` is its
 * `label_domain`):
 * - `<domain>/rack` = the node's effective rack name;
 * - `<domain>/host-profile` = the node's own `host_profile` (not its ancestors);
 * - `tag.<domain>/<tag>` = `"true"`, one per effective tag;
 * - `<domain>/site` = the `drydock/Region/v1` document's name;
 * - the `data.labels` of the node's rack document, keys as written.
 *
 * Precedence: within owner_data, the child wins over its host profiles.
 * Between sources there is none: a key given by two sources (owner_data,
 * the domain generators, rack labels) must have the same value in both, and
 * a different value is an error naming both, never a silent override.
 */
import { generatedLabelKeys } from './label-policy.ts';
import { layeredSource } from './render-site.ts';
import { generatedSource, layerSource, LabelGenerator, LabelSourceKind, NODE_SOURCE, type LabelSource } from './label-provenance.ts';
import type { SitePolicy } from './label-policy.ts';
import type { Origin, RackEntry, ResolvedHost } from './design-resolve.ts';
import { SchemaName } from './schema.ts';
import { quote } from '../plan/text.ts';
import { type SiteError } from '../plan/site-error.ts';
import { documentError } from './yaml-source.ts';
import type { LoadedDocument } from './yaml-source.ts';

/** Value of every generated tag label. */
export const TAG_LABEL_VALUE = 'true';

/** The design-wide inputs of label generation. */
export type GenerationContext = {
  policy: SitePolicy;
  racks: ReadonlyMap<string, RackEntry>;
  site: { name: string; doc: LoadedDocument } | null;
  /**
   * Sources already made, shared between nodes (a host profile's labels on
   * 5,000 nodes point at one source object); filled as nodes are resolved.
   */
  sources?: Map<string, LabelSource>;
};

type Generated = { value: string; from: string; source: LabelSource };

/** The source `make` builds, once per `id` when the context shares sources. */
function shared(context: GenerationContext, id: string, make: () => LabelSource): LabelSource {
  const cache = context.sources;
  if (cache === undefined) return make();
  let source = cache.get(id);
  if (source === undefined) cache.set(id, (source = make()));
  return source;
}

/**
 * One disagreement between sources for one node. Conflicts are grouped
 * across nodes by {@link conflictErrors}, so a host profile used by 500
 * nodes yields one error, not 500.
 */
export type LabelConflict = { origin: Origin; node: string; head: string; tail: string };

function generatedFor(host: ResolvedHost, context: GenerationContext): { labels: Map<string, Generated>; conflicts: LabelConflict[] } {
  const { policy, racks, site } = context;
  const on = policy.generatedLabels;
  const keys = generatedLabelKeys(policy.labelDomain);
  const labels = new Map<string, Generated>();
  if (on.rack && host.rack !== null)
    labels.set(keys.rack, { value: host.rack.name, from: `rack ${quote(host.rack.name)}`, source: generatedSource(LabelGenerator.rack) });
  if (on.hostProfile && host.hostProfile !== null) {
    labels.set(keys.hostProfile, {
      value: host.hostProfile,
      from: `host profile ${quote(host.hostProfile)}`,
      source: generatedSource(LabelGenerator.hostProfile),
    });
  }
  if (on.tags) {
    for (const tag of host.tags)
      labels.set(`${keys.tagPrefix}${tag}`, { value: TAG_LABEL_VALUE, from: `tag ${quote(tag)}`, source: generatedSource(LabelGenerator.tag) });
  }
  if (on.site && site !== null) labels.set(keys.site, { value: site.name, from: `site ${quote(site.name)}`, source: generatedSource(LabelGenerator.site) });
  const conflicts: LabelConflict[] = [];
  const rack = host.rack === null ? undefined : racks.get(host.rack.name);
  if (on.rackLabels && rack !== undefined) {
    for (const [key, value] of Object.entries(rack.labels).sort(([a], [b]) => (a < b ? -1 : 1))) {
      const existing = labels.get(key);
      if (existing !== undefined && existing.value !== value) {
        conflicts.push({
          origin: { doc: rack.doc, path: ['data', 'labels', key] },
          node: host.name,
          head: `rack label ${quote(key)}=${quote(value)} conflicts with generated value ${quote(existing.value)} (from ${existing.from})`,
          tail: '',
        });
        continue;
      }
      const source = shared(context, `rack\u0000${rack.name}`, () => ({ kind: LabelSourceKind.rack, rack: rack.name }));
      labels.set(key, { value, from: `labels of ${SchemaName.Rack} ${quote(rack.name)}`, source });
    }
  }
  return { labels, conflicts };
}

/**
 * Computes a resolved node's desired labels, keys sorted, with the source
 * of each (`sources` has exactly the keys of `labels`; see
 * `label-provenance.ts`; the host's own owner_data is credited to `own`,
 * the node, or the node set being resolved). Disagreements between owner_data and generated
 * labels (or between rack labels and the domain generators) are returned as
 * conflicts; the disagreeing key is left out of `labels`.
 */
export function desiredLabels(
  host: ResolvedHost,
  context: GenerationContext,
  own: LabelSource = NODE_SOURCE,
): { labels: Record<string, string>; sources: Record<string, LabelSource>; conflicts: LabelConflict[] } {
  const { labels: generated, conflicts } = generatedFor(host, context);
  const desired = new Map<string, string>();
  const sources = new Map<string, LabelSource>();
  for (const [key, { value, source }] of generated) {
    desired.set(key, value);
    sources.set(key, source);
  }
  for (const [key, { value, origin, depth }] of host.ownerData) {
    const other = generated.get(key);
    if (other !== undefined && other.value !== value) {
      conflicts.push({
        origin,
        node: host.name,
        head: `label ${quote(key)}=${quote(value)} conflicts with generated value ${quote(other.value)} (from ${other.from})`,
        tail: '; a document may not override a generated label',
      });
      continue;
    }
    desired.set(key, value);
    const profile = host.profileChain[depth - 1] ?? '';
    // A value the document has from a Deckhand parent is credited to that parent too.
    const from = origin.doc.layeredFrom === undefined ? undefined : layeredSource(origin.doc, origin.path);
    if (from !== undefined) {
      const layered = { name: from.name, layer: from.layer };
      sources.set(
        key,
        depth === 0
          ? own.kind === 'node'
            ? layerSource(0, '', layered)
            : own
          : shared(context, `profile\u0000${profile}\u0000${depth}\u0000${from.name}\u0000${from.layer}`, () => layerSource(depth, profile, layered)),
      );
    } else {
      sources.set(key, depth === 0 ? own : shared(context, `profile\u0000${profile}\u0000${depth}`, () => layerSource(depth, profile)));
    }
  }
  const keys = [...desired.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    labels: Object.fromEntries(keys.map((key) => [key, desired.get(key) ?? ''])),
    sources: Object.fromEntries(keys.map((key) => [key, sources.get(key) as LabelSource])),
    conflicts,
  };
}

/** How many node names a grouped conflict lists before "and N more". */
const LISTED_NODES = 5;

/**
 * Turns conflicts into errors at the disagreeing document key, one per
 * location and disagreement, naming the nodes affected (sorted; the first
 * five, then how many more).
 */
export function conflictErrors(conflicts: readonly LabelConflict[]): SiteError[] {
  const groups = new Map<string, { conflict: LabelConflict; nodes: string[] }>();
  for (const conflict of conflicts) {
    const { doc, path } = conflict.origin;
    const id = JSON.stringify([doc.source, doc.index, path, conflict.head]);
    const group = groups.get(id) ?? { conflict, nodes: [] };
    group.nodes.push(conflict.node);
    groups.set(id, group);
  }
  return [...groups.values()].map(({ conflict, nodes }) => {
    const sorted = [...nodes].sort();
    const listed = sorted.slice(0, LISTED_NODES).map(quote).join(', ');
    const more = sorted.length > LISTED_NODES ? ` and ${sorted.length - LISTED_NODES} more` : '';
    const on = sorted.length === 1 ? `node ${listed}` : `nodes ${listed}${more}`;
    return documentError(conflict.origin.doc, conflict.origin.path, `${conflict.head} on ${on}${conflict.tail}`, 'key');
  });
}
