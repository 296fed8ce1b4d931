/**
 * Provenance of desired labels: for each desired label of a node, the one
 * source it came from. Computed alongside resolution (inheritance records
 * the layer of each owner_data key, generation records its generator), so
 * asking where a label comes from never resolves the site again.
 *
 * A key several sources give with the same value (a node's owner_data
 * repeating a generated label, a rack label equal to a generated one) is
 * attributed to the most explicit source: owner_data (node or host
 * profile), then the rack document's labels, then the generator.
 */

/** Which generator of the label policy made a generated label. */
export const LabelGenerator = {
  rack: 'rack',
  site: 'site',
  hostProfile: 'host_profile',
  tag: 'tag',
} as const;
/** One of the {@link LabelGenerator} names. */
export type LabelGenerator = (typeof LabelGenerator)[keyof typeof LabelGenerator];

/** The kinds of label source. */
export const LabelSourceKind = {
  /** The node's own `drydock/BaremetalNode/v1` `owner_data`. */
  node: 'node',
  /** A host profile's `owner_data`, inherited. */
  hostProfile: 'host_profile',
  /** The `data.labels` of the node's rack document. */
  rack: 'rack',
  /** A label the policy generates from the design. */
  generated: 'generated',
  /** A label plugin. */
  plugin: 'plugin',
  /** The `owner_data` of the `relabel/NodeSet/v1` whose selector matches the node. */
  nodeSet: 'node_set',
} as const;
/** One of the {@link LabelSourceKind} names. */
export type LabelSourceKind = (typeof LabelSourceKind)[keyof typeof LabelSourceKind];

/**
 * Where one desired label came from: a closed union.
 * - `node`: the node's own owner_data (an override of anything inherited);
 * - `host_profile`: the owner_data of `profile`, `depth` steps up the chain
 *   (1 is the node's own host_profile, 2 its parent, …);
 * - `rack`: the labels of rack document `rack`;
 * - `generated`: made by the policy's generator `generator`;
 * - `plugin`: given by the label plugin `plugin`;
 * - `node_set`: the owner_data of node set `set`, which the node is a member of.
 */
export type LabelSource =
  | { kind: 'node'; from?: LayeredParent }
  | { kind: 'host_profile'; profile: string; depth: number; from?: LayeredParent }
  | { kind: 'rack'; rack: string }
  | { kind: 'generated'; generator: LabelGenerator }
  | { kind: 'plugin'; plugin: string }
  | { kind: 'node_set'; set: string };

/**
 * The Deckhand parent a node's or host profile's value was layered from
 * (`parentSelector`), when the document did not write it itself: its name
 * and layer. A node set's values never have one (it is relabel's own).
 */
export type LayeredParent = { name: string; layer: string };

/** The one `node` source (shared: sources are compared by value, never mutated). */
export const NODE_SOURCE: LabelSource = Object.freeze({ kind: LabelSourceKind.node });

const generatedSources = Object.fromEntries(
  Object.values(LabelGenerator).map((generator) => [generator, Object.freeze({ kind: LabelSourceKind.generated, generator })]),
) as Record<LabelGenerator, LabelSource>;

/** The shared source of labels made by `generator`. */
export function generatedSource(generator: LabelGenerator): LabelSource {
  return generatedSources[generator];
}

/**
 * The source of an owner_data key found at `depth` of a node's chain
 * (0 the node itself, N its Nth host profile), `profile` that layer's name.
 */
export function layerSource(depth: number, profile: string, from?: LayeredParent): LabelSource {
  if (depth === 0) return from === undefined ? NODE_SOURCE : { kind: LabelSourceKind.node, from };
  return { kind: LabelSourceKind.hostProfile, profile, depth, ...(from === undefined ? {} : { from }) };
}

/** The source of a label node set `set` gives its members (in its own owner_data). */
export function nodeSetSource(set: string): LabelSource {
  return { kind: LabelSourceKind.nodeSet, set };
}

/** The source of a label the label plugin `plugin` gives. */
export function pluginSource(plugin: string): LabelSource {
  return { kind: LabelSourceKind.plugin, plugin };
}

/**
 * A source in words: `node`, `host profile compute (depth 1)`, `host profile
 * cp_r720-primary ← cp-global (global) (depth 1)` for a value layered from a
 * Deckhand parent, `rack cab23`, `generated (rack)`, `plugin nfd`, `node set md-0`.
 */
export function formatLabelSource(source: LabelSource): string {
  const parent = (from: LayeredParent | undefined) => (from === undefined ? '' : ` ← ${from.name} (${from.layer})`);
  switch (source.kind) {
    case 'node':
      return `node${parent(source.from)}`;
    case 'host_profile':
      return `host profile ${source.profile}${parent(source.from)} (depth ${source.depth})`;
    case 'rack':
      return `rack ${source.rack}`;
    case 'generated':
      return `generated (${source.generator})`;
    case 'plugin':
      return `plugin ${source.plugin}`;
    case 'node_set':
      return `node set ${source.set}`;
  }
}
