/**
 * Node-set membership: which cluster nodes a design's node sets manage.
 * A node is a member of set S when S's selector matches its labels and no
 * BaremetalNode of the design names it (a named node wins over every set);
 * a node matched by two sets or more is a member of none and is reported
 * with every set's name: relabel never picks one silently. Pure: the
 * caller reads the nodes (one LIST) and passes their names and labels.
 */
import { selectorMatches, selectorString, type LabelSelector } from './label-selector.ts';
import { nodeSetSelectorWarnings } from './machine-labels.ts';
import { quote } from './text.ts';

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A set as the plan side reads it: a node's entry plus the selector (the site side's `DesignNodeSet` is one). */
export type SetEntry<N> = N & { selector: LabelSelector };

/** The part of a design membership reads: its named nodes and its sets, by name. */
export type SetDesign<N> = {
  nodes: Readonly<Record<string, N>>;
  nodeSets?: Readonly<Record<string, SetEntry<N>>>;
};

/** A node of the cluster as membership reads it. */
export type ClusterNode = { name: string; labels: Readonly<Record<string, string>> };

/**
 * What the design makes of one cluster node: `named` by a BaremetalNode
 * (`sets`: those that match it too, which it wins over), a `member` of one
 * set, in `conflict` between two sets or more (sorted), or `none`.
 */
export type Membership = { kind: 'named'; sets: string[] } | { kind: 'member'; set: string } | { kind: 'conflict'; sets: string[] } | { kind: 'none' };

/** The failure message of a node matched by two sets or more. */
export function conflictMessage(node: string, sets: readonly string[]): string {
  return `node ${node} is matched by ${sets.length} node sets (${sets.join(', ')}); a node may be in one set only, so none applies: narrow the selectors`;
}

/** Whether the design has any node set. */
export function hasNodeSets(design: SetDesign<unknown>): boolean {
  return design.nodeSets !== undefined && Object.keys(design.nodeSets).length > 0;
}

/** The names of the sets whose selectors match `labels`, sorted. */
export function matchingSets(design: SetDesign<unknown>, labels: Readonly<Record<string, string>>): string[] {
  const sets = design.nodeSets ?? {};
  return Object.keys(sets)
    .filter((name) => selectorMatches((sets[name] as SetEntry<unknown>).selector, labels))
    .sort();
}

/** What the design makes of `node` (see {@link Membership}). */
export function membershipOf(design: SetDesign<unknown>, node: ClusterNode): Membership {
  const sets = hasNodeSets(design) ? matchingSets(design, node.labels) : [];
  if (Object.hasOwn(design.nodes, node.name)) return { kind: 'named', sets };
  if (sets.length === 0) return { kind: 'none' };
  if (sets.length === 1) return { kind: 'member', set: sets[0] as string };
  return { kind: 'conflict', sets };
}

/**
 * Set `set`'s entry as the design entry of member `node`: the set's
 * labels, annotations and taints (shared, not copied), under the node's
 * name, without the selector.
 */
export function memberEntry<N extends { name: string }>(design: SetDesign<N>, set: string, node: string): N {
  const entry = design.nodeSets?.[set];
  if (entry === undefined) throw new Error(`no node set ${set} in the design`);
  const { selector: _selector, ...rest } = entry;
  return { ...(rest as unknown as N), name: node };
}

/** A design with its set members added as nodes, and what membership found. */
export type NodeSetExpansion<D> = {
  /** The design, each member node added under its own name as its set's entry. */
  design: D;
  /** Members of each set of the design, by set name (0 for a set matching nothing). */
  members: Record<string, number>;
  /** Nodes matched by two sets or more (none of them applies), sorted by node. */
  conflicts: { node: string; sets: string[] }[];
  /** Named nodes a set matches too (the BaremetalNode wins), sorted by node. */
  shadowed: { node: string; sets: string[] }[];
};

/**
 * Adds every node of `cluster` that is a member of exactly one set of
 * `design` to its nodes (see {@link memberEntry}). A design without sets
 * is returned as it is. Deterministic: the result does not depend on the
 * order of `cluster`.
 */
export function expandNodeSets<N extends { name: string }, D extends SetDesign<N>>(design: D, cluster: Iterable<ClusterNode>): NodeSetExpansion<D> {
  const members: Record<string, number> = Object.fromEntries(Object.keys(design.nodeSets ?? {}).map((name) => [name, 0]));
  const conflicts: { node: string; sets: string[] }[] = [];
  const shadowed: { node: string; sets: string[] }[] = [];
  if (!hasNodeSets(design)) return { design, members, conflicts, shadowed };
  const added: [string, N][] = [];
  for (const node of cluster) {
    const membership = membershipOf(design, node);
    if (membership.kind === 'member') {
      members[membership.set] = (members[membership.set] ?? 0) + 1;
      added.push([node.name, memberEntry(design, membership.set, node.name)]);
    } else if (membership.kind === 'conflict') conflicts.push({ node: node.name, sets: membership.sets });
    else if (membership.kind === 'named' && membership.sets.length > 0) shadowed.push({ node: node.name, sets: membership.sets });
  }
  const byNode = (a: { node: string }, b: { node: string }) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0);
  const nodes = Object.fromEntries([...Object.entries(design.nodes), ...added].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { design: { ...design, nodes }, members, conflicts: conflicts.sort(byNode), shadowed: shadowed.sort(byNode) };
}

/**
 * What a plan or run warns of its node sets, as text, by set name: each
 * selector field reading a label Cluster API keeps on Machines only (see
 * `machine-labels.ts`), and each set in `members` (the sets it targets or
 * counted) that matches no node. Neither is an error: a set may be empty
 * for a while (its fleet scaled to zero), but a set that is empty because
 * its selector can never match is a mistake the count alone hides.
 */
export function nodeSetWarnings(sets: Readonly<Record<string, { selector: LabelSelector }>> | undefined, members: Readonly<Record<string, number>>): string[] {
  const targeted = Object.fromEntries(Object.keys(members).flatMap((name) => (sets?.[name] ? [[name, sets[name]]] : [])));
  const empty = Object.keys(members)
    .filter((name) => members[name] === 0)
    .sort(byName)
    .map((name) => {
      const selector = sets?.[name]?.selector;
      return `node set ${quote(name)} matches no node${selector ? ` (no Node has labels matching ${selectorString(selector)})` : ''}: nothing of it is written`;
    });
  return [...empty, ...nodeSetSelectorWarnings(targeted)];
}
