/**
 * The join watcher's contract: its workflow ID, input, and what its
 * watching activity reports (as heartbeat details, read by `relabel join
 * status`). Bounded by design: counts, a few names and one short reason,
 * whatever the number of nodes that join.
 */

/** Prefix of join watchers' workflow IDs: `relabel-join/<site>`, one per site. */
export const JOIN_ID_PREFIX = 'relabel-join';

/** The workflow ID of `site`'s join watcher. */
export function joinWorkflowId(site: string): string {
  return `${JOIN_ID_PREFIX}/${site}`;
}

/** The action name join runs carry in their memo (as Shipyard's action list shows it). */
export const JOIN_ACTION = 'join_nodes';

/** Input of the `watchJoins` workflow. */
export interface WatchJoinsInput {
  /** The site watched: the store's latest revision must be of it (else InvalidArgument, not retried). */
  site: string;
  /** Who enabled the watcher (an OS user, an API token's name): join runs record `join:<workflow ID>` as their starter. */
  enabledBy?: string;
  /** Most nodes one join run takes (default {@link DEFAULT_JOIN_BATCH}). */
  maxBatch?: number;
  /** How long the watcher waits after a node joins for others to join with it, in ms (default {@link DEFAULT_JOIN_DELAY_MS}). */
  batchDelayMs?: number;
  /** Nodes a join run relabels at once (default {@link DEFAULT_JOIN_CONCURRENCY}). */
  concurrency?: number;
  /** Seconds one watching activity runs before it hands over to the next (keeps each attempt's life bounded). */
  watchSeconds?: number;
  /** Watching activities one execution runs before continuing as new (keeps history bounded). */
  continueAsNewAfter?: number;
}

/** Most nodes one join run takes, unless told. */
export const DEFAULT_JOIN_BATCH = 1000;

/** How long the watcher waits for more joins before it starts a run, unless told: short, as a person is waiting. */
export const DEFAULT_JOIN_DELAY_MS = 25;

/**
 * Nodes a join run relabels at once, unless told. Higher than a site's
 * default for operator runs: that default bounds how many nodes with
 * running workloads change at once, and a joining node has none yet (its
 * uninitialized taint keeps pods off until its labels are there). The
 * worker's rate limit still bounds its requests.
 */
export const DEFAULT_JOIN_CONCURRENCY = 50;

/** Seconds one watching activity runs, unless told. */
export const DEFAULT_WATCH_SECONDS = 3600;

/** Watching activities per execution, unless told. */
export const DEFAULT_WATCHES_PER_EXECUTION = 24;

/** A join run the watcher started. */
export interface JoinRunRef {
  run: number;
  workflowId: string;
  runId: string;
  nodes: number;
  /** How it ended (`success`, `partial_success`, `failure`, or `rejected: …`); absent while it runs. */
  status?: string;
}

/**
 * What the watching activity reports while it runs (its heartbeat
 * details) and when it hands over (its result). Bounded.
 */
export interface JoinWatchReport {
  site: string;
  /** The resourceVersion the watch has reached. */
  resourceVersion: string;
  /** The latest committed revision the watcher labels joining nodes with; absent before one is read. */
  revision?: number;
  /** Nodes that joined and wait for a run. */
  pending: number;
  /** Seconds the oldest of them has waited (0 when none). */
  oldestPendingSeconds: number;
  /** Nodes handed to join runs since the activity started. */
  dispatched: number;
  /** Of those, nodes seen labelled afterwards. */
  labelled: number;
  /**
   * Nodes join runs ended with failed (a node two node sets match fails
   * NodeInTwoSets; the run's results say why); absent from reports of
   * earlier versions.
   */
  failed?: number;
  /** Joining nodes the design does not manage (no BaremetalNode names them, no node set matches them): left alone, counted once each. */
  unmanaged: number;
  /** Join runs started since the activity started. */
  runs: number;
  /** The last join run. */
  lastRun?: JoinRunRef;
  /** Why pending nodes are held (invalid documents, no site action, a run of the site going), in words; absent when they are not. */
  held?: string;
  /** The watch's last error, in words, while it is reconnecting; absent when watching. */
  watchError?: string;
  /** When the report was made (ISO 8601). */
  at: string;
}
