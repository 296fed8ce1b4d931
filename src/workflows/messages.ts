/**
 * Inputs, results and query definitions of relabel's workflows: the contract
 * shared by the worker, the CLI and the HTTP API. One input object and one
 * result object per workflow, so fields can be added without breaking
 * running histories.
 */
import { defineQuery } from '@temporalio/workflow';

/** How an update run ended. */
export const RunStatus = {
  success: 'success',
  partialSuccess: 'partial_success',
  failure: 'failure',
} as const;
export type RunStatus = (typeof RunStatus)[keyof typeof RunStatus];

/** Where an update run is. */
export const RunPhase = {
  resolving: 'resolving',
  validating: 'validating',
  applying: 'applying',
  done: 'done',
} as const;
export type RunPhase = (typeof RunPhase)[keyof typeof RunPhase];

/** A failure reason: a public failure type and a message. */
export interface NodeError {
  type: string;
  message: string;
}

/** Input of the `relabelNode` child workflow. */
export interface RelabelNodeInput {
  node: string;
  revision: number;
  /** Plan only; write nothing. */
  dryRun: boolean;
  /** Set relabel's custom search attributes (default true). */
  searchAttributes?: boolean;
}

/** Result of `relabelNode`: what was (or, in a dry run, would be) done to one node. */
export interface RelabelNodeResult {
  node: string;
  status: 'success';
  /** Labels set (created or changed), with their new values. */
  set: Record<string, string>;
  /** Labels removed (owned by relabel, no longer desired). */
  removed: string[];
  /** Labels already right, now recorded as owned. */
  adopted: string[];
  /** Number of desired labels already right and owned. */
  unchanged: number;
  /** Whether a write request was sent. */
  written: boolean;
  /** Whether relabel's uninitialized taint was (in a dry run: would be) removed, in the same write. */
  taintLifted: boolean;
  /** Reads of the node (more than one after a resourceVersion conflict). */
  attempts: number;
}

/** One node's outcome as the parent records it. */
export interface NodeOutcome {
  node: string;
  status: 'success' | 'failure';
  set?: Record<string, string>;
  removed?: string[];
  adopted?: string[];
  unchanged?: number;
  written?: boolean;
  taintLifted?: boolean;
  error?: NodeError;
}

/** Progress carried across continue-as-new. */
export interface CarriedProgress {
  revision: number;
  site: string;
  concurrency: number;
  outcomes: NodeOutcome[];
  /** All targets of the run, in order (the remaining ones are those without an outcome). */
  targets: string[];
  startedAt: string;
}

/** Input of the `updateLabels` workflow. */
export interface UpdateLabelsInput {
  /** Node names to relabel: non-empty, unique strings. */
  targets: string[];
  /** Revision to apply; the latest committed one when absent. */
  revision?: number;
  /** Nodes relabelled at once; the policy's default when absent. */
  concurrency?: number;
  /** Plan every node; write nothing. */
  dryRun?: boolean;
  /** The run this one retries (its failed nodes, against its revision). */
  retryOf?: { workflowId: string; runId: string };
  /** Continue-as-new after this many nodes in one run (keeps history bounded). */
  continueAsNewAfter?: number;
  /** Set relabel's custom search attributes (they must be registered on the server). */
  searchAttributes?: boolean;
  /** Set only by continue-as-new. */
  carried?: CarriedProgress;
}

/** Result of `updateLabels`. */
export interface UpdateLabelsResult {
  status: RunStatus;
  revision: number;
  site: string;
  dryRun: boolean;
  counts: { total: number; success: number; failure: number; written: number };
  /** Every node's outcome, in target order. */
  nodes: NodeOutcome[];
  retryOf?: { workflowId: string; runId: string };
}

/** What the `progress` query answers: bounded in size whatever the run's size. */
export interface Progress {
  phase: RunPhase;
  revision?: number;
  site?: string;
  dryRun: boolean;
  total: number;
  counts: { pending: number; running: number; success: number; failure: number };
  /** Up to {@link PROGRESS_FAILURE_LIMIT} failures with reasons. */
  failures: { node: string; error: NodeError }[];
  status?: RunStatus;
  retryOf?: { workflowId: string; runId: string };
}

/** Most failures listed in one progress answer; all are in `nodeResultsQuery`. */
export const PROGRESS_FAILURE_LIMIT = 50;

/** Phase, counts and recent failures of an update run. */
export const progressQuery = defineQuery<Progress>('progress');

/** A page of per-node outcomes, in target order. */
export const nodeResultsQuery = defineQuery<{ total: number; items: NodeOutcome[] }, [{ offset?: number; limit?: number }?]>(
  'nodeResults',
);
