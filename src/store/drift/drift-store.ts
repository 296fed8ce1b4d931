/**
 * Drift reports, kept beside the runs: each drift detection is a numbered
 * report with its counts and one row per node that is not in sync (drifted,
 * moved, pending, unmanaged, missing, orphaned), so a report over 50,000 nodes never travels
 * in a Temporal payload. Old reports of a site are pruned as new ones come.
 */
import type { DriftCounts, DriftKeys, DriftState } from '../../core/plan/drift.ts';

/** Reports kept per site: creating one deletes the site's reports older than the newest this many. */
export const DRIFT_REPORTS_KEPT = 24;

/** Most rows one {@link DriftStore.nodes} page returns. */
export const MAX_DRIFT_PAGE = 5000;

/** What a report row says of one node beyond its state and revision. JSON-serialisable. */
export interface DriftNodeDetail {
  /** The run its applied-run record names. */
  run?: number;
  /** For a drifted node: what differs. */
  keys?: DriftKeys;
  /** For a pending node: how many owned keys the latest revision would change. */
  changes?: number;
  /** Why a node with a record is unmanaged. */
  note?: string;
  /** For a moved or orphaned node: the node set its record says it was written as a member of (absent: as a named node, or a record that predates sets in records). */
  lastSet?: string;
}

/** One node of a report. */
export interface DriftNodeRow {
  /** Position in the report, from 0. */
  seq: number;
  node: string;
  state: DriftState;
  /** The revision the node's applied-run record names, or null. */
  revision: number | null;
  /** The node set the node is a member of (relabel/NodeSet/v1); absent for a node the design names. */
  nodeSet?: string;
  detail: DriftNodeDetail;
}

/** A drift report. */
export interface DriftReportRecord {
  /** Report number: 1, 2, 3 … across the store. */
  id: number;
  key: string | null;
  createdAt: Date;
  /** When its counts were recorded; null while the detection runs. */
  finishedAt: Date | null;
  site: string;
  /** The latest committed revision when it was made. */
  revision: number;
  workflowId: string | null;
  /** The policy's action: report or heal. */
  action: string;
  counts: DriftCounts | null;
  /** What healing did (any JSON value), when it was tried. */
  heal: unknown;
}

/** What {@link DriftStore.createReport} takes. */
export interface CreateDriftReportInput {
  /** Idempotency key (the detection's workflow and run). */
  key?: string;
  site: string;
  revision: number;
  workflowId?: string;
  action: string;
}

/** Which rows {@link DriftStore.nodes} returns. */
export interface DriftNodesQuery {
  /** Only rows in one of these states (an empty list matches nothing). */
  states?: readonly DriftState[];
  /** Only rows carrying this revision. */
  revision?: number;
  /** Only the rows of this node set's members. */
  nodeSet?: string;
  /** Keyset paging: only rows with a greater `seq`. */
  afterSeq?: number;
  /** Rows of the filtered result to skip. */
  offset?: number;
  /** 1 to {@link MAX_DRIFT_PAGE}. */
  limit: number;
}

/**
 * The drift part of the store. Atomic methods; StoreError InvalidArgument
 * for bad input and NotFound for an absent report.
 */
export interface DriftStore {
  /**
   * Creates a report (counts null), pruning the site's reports beyond the
   * newest {@link DRIFT_REPORTS_KEPT}. With `key`, idempotent: the report
   * with that key is returned emptied of its rows, counts and heal outcome
   * (a retried detection writes them again).
   */
  createReport(input: CreateDriftReportInput): Promise<DriftReportRecord>;
  /** Appends node rows (seq given by the caller, unique in the report). */
  addNodes(id: number, rows: readonly DriftNodeRow[]): Promise<void>;
  /** Records the counts and marks the report finished. */
  finishReport(id: number, counts: DriftCounts): Promise<void>;
  /** Records what healing did. */
  setHeal(id: number, heal: unknown): Promise<void>;
  /** One report; NotFound when absent. */
  getReport(id: number): Promise<DriftReportRecord>;
  /** The newest finished report (of `site`, when given), or null. */
  latestReport(site?: string): Promise<DriftReportRecord | null>;
  /** A page of a report's rows in seq order; an absent report has none. */
  nodes(id: number, query: DriftNodesQuery): Promise<DriftNodeRow[]>;
  /** A report's rows by state (of the members of `nodeSet`, when given); each stored state counted, 0 when none. */
  countNodes(id: number, query?: { nodeSet?: string }): Promise<Record<StoredDriftState, number>>;
}

/** The states a report keeps rows of (in_sync nodes are only counted). */
export type StoredDriftState = Exclude<DriftState, 'in_sync'>;
