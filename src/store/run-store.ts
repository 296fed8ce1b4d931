/**
 * Per-run node results, kept beside the revisions so that a run over 50,000
 * nodes never carries its targets or outcomes in a Temporal payload. A run
 * is numbered like revisions (1, 2, 3 …, no gaps); each target is a row in
 * target order (`seq`) with its status and outcome.
 */

/** Where a target node of a run stands. */
export const RunNodeStatus = {
  /** Registered, not yet planned. */
  queued: 'queued',
  /** Planned: a change is to be applied by a child. */
  pending: 'pending',
  success: 'success',
  failure: 'failure',
} as const;
/** One of the {@link RunNodeStatus} strings. */
export type RunNodeStatus = (typeof RunNodeStatus)[keyof typeof RunNodeStatus];

/** What was (or in a dry run would be) done to a node, or why it failed. JSON-serialisable. */
export interface NodeResultDetail {
  set?: Record<string, string>;
  removed?: string[];
  adopted?: string[];
  unchanged?: number;
  taintLifted?: boolean;
  attempts?: number;
  error?: { type: string; message: string };
}

/** A run's record. */
export interface RunRecord {
  /** Run number: 1, 2, 3 … across the store. */
  id: number;
  /** Idempotency key given at creation, if any. */
  key: string | null;
  createdAt: Date;
  workflowId: string | null;
  revision: number | null;
  dryRun: boolean;
  /** Run number this run retries. */
  retryOf: number | null;
  targetCount: number;
}

/** One target of a run. */
export interface RunNodeRow {
  seq: number;
  node: string;
  status: RunNodeStatus;
  written: boolean;
  detail: NodeResultDetail | null;
}

/** A result to record for one node of a run. */
export interface NodeResultUpdate {
  node: string;
  status: RunNodeStatus;
  /** Whether a write landed; once true it stays true. */
  written?: boolean;
  /** Undefined leaves it as is; null clears it. */
  detail?: NodeResultDetail | null;
  /** The node as the bulk plan observed it (JSON); undefined leaves it, null clears it. */
  observed?: unknown;
}

/** Counts of a run's rows by status. */
export interface RunNodeCounts {
  total: number;
  queued: number;
  pending: number;
  success: number;
  failure: number;
  written: number;
}

/** Most rows one page returns. */
export const MAX_RUN_PAGE = 5000;

/** The run half of the store. Every method is atomic. */
export interface RunStore {
  /**
   * Creates a run with its targets (seq 0…n-1, status queued). With `key`,
   * idempotent: an existing run with that key is returned unchanged.
   * InvalidArgument for an empty list, an empty or over-long name, or a
   * duplicate (named).
   */
  createRun(input: { key?: string; workflowId?: string; revision?: number; dryRun?: boolean; retryOf?: number; targets: readonly string[] }): Promise<RunRecord>;
  /** One run; NotFound when absent. */
  getRun(id: number): Promise<RunRecord>;
  /** Deletes a run and its rows (its workflow could not be started). Idempotent. */
  discardRun(id: number): Promise<void>;
  /**
   * Records results, matched by node name, in one transaction. A name the
   * run does not have is InvalidArgument and nothing is written.
   */
  setNodeResults(id: number, updates: readonly NodeResultUpdate[]): Promise<void>;
  /** A page of rows in target order, optionally only some statuses; keyset (`afterSeq`) or `offset` paging. */
  runNodes(id: number, query: { status?: RunNodeStatus | readonly RunNodeStatus[]; afterSeq?: number; offset?: number; limit: number }): Promise<RunNodeRow[]>;
  /** The observed node state recorded for one node, or null. */
  observedState(id: number, node: string): Promise<unknown>;
  /** Rows by status, and how many were written. NotFound when the run is absent. */
  runCounts(id: number): Promise<RunNodeCounts>;
}
