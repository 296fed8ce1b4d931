/**
 * What one node wants: the design's labels for it with its plugin labels
 * joined in, its annotations and taints, and the policy a plan applies.
 * The one place that join is made, for runs, drift and dry-run plans alike.
 * Schema-free: a design is read through {@link PlannedDesign}, the part of
 * the site side's `Design` the plan side needs.
 */
import type { NodeWants } from './drift.ts';
import type { PlanPolicy } from './label-plan.ts';
import type { Taint } from './taints.ts';

/** What the design wants of one of its nodes (the site side's `DesignNode` is one). */
export type PlannedNode = {
  labels: Readonly<Record<string, string>>;
  annotations: Readonly<Record<string, string>>;
  taints: readonly Taint[];
};

/**
 * The part of a resolved design the plan side reads (the site side's
 * `Design` is one): the site's name (always set: `default` for a site
 * without a region), the policy and the nodes.
 */
export type PlannedDesign<P extends PlanPolicy = PlanPolicy> = {
  site: string;
  policy: P;
  nodes: Readonly<Record<string, PlannedNode>>;
};

/** One plugin's labels for one node. */
export type PluginEntry = { plugin: string; labels: Record<string, string> };

/**
 * A plugin label not applied because another source gives the node the
 * same key with another value: the document's label, or a plugin whose name
 * sorts first.
 */
export type PluginConflict = { key: string; plugin: string; value: string; kept: string; keptFrom: string };

/** A node's labels joined from its document labels and plugin labels (see {@link withPluginLabels}). */
export type JoinedLabels = { labels: Record<string, string>; conflicts: PluginConflict[]; plugins: Record<string, string> };

const byKey = ([a]: [string, unknown], [b]: [string, unknown]) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * A node's desired labels with its plugin labels joined in: the document's
 * labels win; among plugins, the one whose name sorts first wins. Every
 * label not applied because of that is returned as a conflict (none is
 * dropped silently). Keys sorted. `plugins` names, for each key a plugin
 * gave (one the documents do not give), the plugin it came from: a key the
 * documents give with the same value stays the documents'.
 */
export function withPluginLabels(documentLabels: Readonly<Record<string, string>>, entries: readonly PluginEntry[]): JoinedLabels {
  if (entries.length === 0) return { labels: { ...documentLabels }, conflicts: [], plugins: {} };
  const labels = new Map(Object.entries(documentLabels));
  const from = new Map<string, string>();
  const conflicts: PluginConflict[] = [];
  for (const { plugin, labels: own } of [...entries].sort((a, b) => (a.plugin < b.plugin ? -1 : a.plugin > b.plugin ? 1 : 0))) {
    for (const [key, value] of Object.entries(own)) {
      const kept = labels.get(key);
      if (kept === undefined) {
        labels.set(key, value);
        from.set(key, plugin);
      } else if (kept !== value) {
        const owner = from.get(key);
        conflicts.push({ key, plugin, value, kept, keptFrom: owner === undefined ? 'document' : `plugin ${owner}` });
      }
    }
  }
  return { labels: Object.fromEntries([...labels].sort(byKey)), conflicts, plugins: Object.fromEntries([...from].sort(byKey)) };
}

/** What one node wants (see {@link nodeWants}): {@link NodeWants} with how its plugin labels were joined. */
export type JoinedWants<P extends PlanPolicy = PlanPolicy> = NodeWants & {
  policy: P;
  /** Plugin labels not applied because another source gives the key another value. */
  conflicts: PluginConflict[];
  /** For each label a plugin gave (and the documents do not), the plugin. */
  plugins: Record<string, string>;
};

/**
 * What `design` wants of `node`, its plugin labels (`plugins`, the node's
 * entries of the run's plugin set) joined in as runs join them (see
 * {@link withPluginLabels}); undefined for a node the design does not hold.
 * Pure; the result shares the design's annotation and taint values.
 */
export function nodeWants<P extends PlanPolicy>(design: PlannedDesign<P>, node: string, plugins: readonly PluginEntry[] = []): JoinedWants<P> | undefined {
  const target = Object.hasOwn(design.nodes, node) ? design.nodes[node] : undefined;
  if (target === undefined) return undefined;
  const joined = withPluginLabels(target.labels, plugins);
  return {
    labels: joined.labels,
    annotations: target.annotations,
    taints: target.taints,
    policy: design.policy,
    conflicts: joined.conflicts,
    plugins: joined.plugins,
  };
}
