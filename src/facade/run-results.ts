/**
 * A run's per-node outcomes as the facade reports them, read from the
 * store's rows (see `RunStore`), a page at a time.
 */
import type { RunNodeRow, RunNodeStatus } from '../store/run-store.ts';

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
    ...(d.error !== undefined ? { error: d.error } : {}),
  };
}

