/**
 * A run's per-node outcomes as the facade reports them, read from the
 * store's rows (see `RunStore`), a page at a time.
 */
import { byText } from '../../core/plan/label-plan.ts';
import type { RunNodeRow, RunNodeStatus } from '../../store/runs/run-store.ts';

/** One node's outcome in a run, as the store records it. */
export interface NodeOutcome {
  node: string;
  /** `queued` / `pending` until the node is done. */
  status: RunNodeStatus;
  /** Labels set (created or changed), with their new values; in a dry run, what would be set. */
  set?: Record<string, string>;
  /** Values the keys of `set` had before, for those the node already carried. */
  was?: Record<string, string>;
  /** Labels removed (owned by relabel, no longer desired). */
  removed?: string[];
  /** Labels already right, now recorded as owned. */
  adopted?: string[];
  /** Number of desired labels already right and owned. */
  unchanged?: number;
  /** Whether a write landed on the node. */
  written: boolean;
  /** Whether the uninitialized taint was (in a dry run: would be) lifted. */
  taintLifted?: boolean;
  /** Annotation keys set and removed, when any. */
  annotations?: { set: string[]; removed: string[] };
  /** Taints added (or changed) and removed, as `key=value:effect`, when any. */
  taints?: { added: string[]; removed: string[] };
  /** Plugin labels not applied: the documents (or a plugin whose name sorts first) give the key another value; the first 20. */
  pluginConflicts?: { key: string; plugin: string; value: string; kept: string; keptFrom: string }[];
  /** How many plugin labels were not applied for that reason. */
  pluginConflictCount?: number;
  /** The node set the node is a member of (absent for a node a BaremetalNode names). */
  nodeSet?: string;
  /** Node sets whose selectors match the node, which its BaremetalNode wins over (absent when none). */
  matchedSets?: string[];
  error?: { type: string; message: string };
}

/** A page of a run's node outcomes, in target order. */
export interface NodePage {
  run: number;
  /** Nodes matching the query (all of the run's, or those with the asked statuses). */
  total: number;
  offset: number;
  items: NodeOutcome[];
}

/** Most node outcomes one page holds. */
export const MAX_NODE_PAGE = 5000;

/** The outcome a store row records. */
export function nodeOutcome(row: RunNodeRow): NodeOutcome {
  const d = row.detail ?? {};
  return {
    node: row.node,
    status: row.status,
    ...(d.set !== undefined ? { set: d.set } : {}),
    ...(d.was !== undefined ? { was: d.was } : {}),
    ...(d.removed !== undefined ? { removed: d.removed } : {}),
    ...(d.adopted !== undefined ? { adopted: d.adopted } : {}),
    ...(d.unchanged !== undefined ? { unchanged: d.unchanged } : {}),
    written: row.written,
    ...(d.taintLifted ? { taintLifted: true } : {}),
    ...(d.annotations !== undefined ? { annotations: d.annotations } : {}),
    ...(d.taints !== undefined ? { taints: d.taints } : {}),
    ...(d.pluginConflicts !== undefined ? { pluginConflicts: d.pluginConflicts, pluginConflictCount: d.pluginConflictCount ?? d.pluginConflicts.length } : {}),
    ...(d.nodeSet !== undefined ? { nodeSet: d.nodeSet } : {}),
    ...(d.matchedSets !== undefined ? { matchedSets: d.matchedSets } : {}),
    ...(d.error !== undefined ? { error: d.error } : {}),
  };
}

/** Per label key, how many nodes gain it, change its value, lose it, or have it adopted. */
export type LabelKeyCounts = { gain: number; change: number; lose: number; adopt: number };

/** A whole run's outcomes aggregated: nodes by status, failures by type, changes by label key. */
export interface RunSummary {
  run: number;
  /** Nodes by status (queued, pending, success, failure). */
  statuses: Record<string, number>;
  /** Failed nodes by failure type. */
  failureTypes: Record<string, number>;
  /** Nodes written (in a dry run: none). */
  written: number;
  /** Per label key, sorted by key; at most {@link MAX_SUMMARY_LABEL_KEYS} keys. */
  labels: Record<string, LabelKeyCounts>;
  /** Label keys changed beyond those listed in `labels`. */
  moreLabelKeys: number;
  /** Plugin labels not applied because another source gave the key another value: nodes and labels; absent when none. */
  pluginConflicts?: { nodes: number; labels: number };
  /** Nodes of the run planned as members of each node set, by set name; absent when none was. */
  nodeSets?: Record<string, number>;
}

/** Label keys a run summary lists at most. */
export const MAX_SUMMARY_LABEL_KEYS = 1000;

/** Aggregates outcomes page after page into one summary; memory grows with the number of label keys, not of nodes. */
export function createSummary(run: number) {
  const statuses: Record<string, number> = {};
  const failureTypes: Record<string, number> = {};
  const labels = new Map<string, LabelKeyCounts>();
  let written = 0;
  const conflicts = { nodes: 0, labels: 0 };
  const members: Record<string, number> = {};
  const entry = (key: string) => {
    let e = labels.get(key);
    if (!e) labels.set(key, (e = { gain: 0, change: 0, lose: 0, adopt: 0 }));
    return e;
  };
  return {
    add(n: NodeOutcome): void {
      statuses[n.status] = (statuses[n.status] ?? 0) + 1;
      if (n.written) written++;
      if (n.error) failureTypes[n.error.type] = (failureTypes[n.error.type] ?? 0) + 1;
      for (const key of Object.keys(n.set ?? {})) entry(key)[n.was && Object.hasOwn(n.was, key) ? 'change' : 'gain']++;
      for (const key of n.removed ?? []) entry(key).lose++;
      for (const key of n.adopted ?? []) entry(key).adopt++;
      if (n.nodeSet !== undefined) members[n.nodeSet] = (members[n.nodeSet] ?? 0) + 1;
      if (n.pluginConflictCount) {
        conflicts.nodes++;
        conflicts.labels += n.pluginConflictCount;
      }
    },
    result(): RunSummary {
      const keys = [...labels.keys()].sort(byText);
      const listed = keys.slice(0, MAX_SUMMARY_LABEL_KEYS);
      return {
        run,
        statuses,
        failureTypes,
        written,
        labels: Object.fromEntries(listed.map((k) => [k, labels.get(k) as LabelKeyCounts])),
        moreLabelKeys: keys.length - listed.length,
        ...(conflicts.nodes > 0 ? { pluginConflicts: conflicts } : {}),
        ...(Object.keys(members).length > 0 ? { nodeSets: Object.fromEntries(Object.entries(members).sort(([a], [b]) => byText(a, b))) } : {}),
      };
    },
  };
}
