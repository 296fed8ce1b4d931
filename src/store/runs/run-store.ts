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
  /** Planned: a change is to be applied. */
  pending: 'pending',
  /** Final: the node holds its desired labels (or, in a dry run, would). */
  success: 'success',
  /** Final: the node could not be brought to its desired labels. */
  failure: 'failure',
  /** Final: the run was cancelled before the node was started; this run wrote nothing to it. */
  cancelled: 'cancelled',
} as const;
/** One of the {@link RunNodeStatus} strings. */
export type RunNodeStatus = (typeof RunNodeStatus)[keyof typeof RunNodeStatus];

/** What was (or in a dry run would be) done to a node, or why it failed. JSON-serialisable. */
export interface NodeResultDetail {
  set?: Record<string, string>;
  /** Values the keys of `set` had before, for those the node already carried. */
  was?: Record<string, string>;
  removed?: string[];
  adopted?: string[];
  unchanged?: number;
  taintLifted?: boolean;
  /** Annotation keys set (values are not kept: they may be large) and removed; absent when none. */
  annotations?: { set: string[]; removed: string[] };
  /** Taints added (or changed) and removed, as `key=value:effect`; absent when none. */
  taints?: { added: string[]; removed: string[] };
  attempts?: number;
  /**
   * The write landed in an earlier attempt whose completion was lost (worker
   * killed, Temporal restarted): the node carried this run's applied-run
   * record and nothing was left to change, so set/was/removed/adopted are
   * re-planned from the state the bulk plan observed.
   */
  recovered?: boolean;
  /**
   * Plugin labels not applied because the documents (or a plugin whose name
   * sorts first) give the key another value: the first 20, and how many in
   * all. Absent when none.
   */
  pluginConflicts?: { key: string; plugin: string; value: string; kept: string; keptFrom: string }[];
  pluginConflictCount?: number;
  /** The node set the node is a member of (absent for a node a BaremetalNode names). */
  nodeSet?: string;
  /** Planned by a release run: its apply takes back what relabel owns on the node (see `core/plan/release.ts`). */
  release?: boolean;
  /** Node sets whose selectors match this node, which its BaremetalNode wins over (absent when none). */
  matchedSets?: string[];
  error?: { type: string; message: string };
}

/** A run's record, as created (only `workflowId` changes later). */
export interface RunRecord {
  /** Run number: 1, 2, 3 … across the store, without gaps. */
  id: number;
  /** Idempotency key given at creation; unique across the store. */
  key: string | null;
  createdAt: Date;
  workflowId: string | null;
  revision: number | null;
  dryRun: boolean;
  /** Run number this run retries. */
  retryOf: number | null;
  /** Number of targets (rows) the run was created with. */
  targetCount: number;
  /** Who started the run (an API token's name, an OS user, a schedule); null for runs recorded before it was kept. */
  startedBy: string | null;
  /** How the run was started (`cli`, `api`, `schedule`, `retry`); null for runs recorded before it was kept. */
  startedVia: string | null;
  /** How the run ended (`success`, `partial_success`, `failure`, `rejected`, `cancelled`), once it has; set by {@link RunStore.setOutcome}. */
  outcome: string | null;
  /** The run's Shipyard action id: a ULID assigned at creation, increasing across the store; null for runs recorded before it was kept. */
  actionId: string | null;
  /** A UUID correlating the run's action (Shipyard's context marker), given or assigned at creation; null for runs recorded before it was kept. */
  contextMarker: string | null;
  /** Temporal's run id of the run's first execution, once recorded by {@link ActionStore.setExecution}. */
  executionRunId: string | null;
}

/** How a run ended, as the store records it: the run's status, or `rejected` (nothing planned or written). */
export const RunOutcome = {
  success: 'success',
  partialSuccess: 'partial_success',
  failure: 'failure',
  rejected: 'rejected',
  /** Cancelled (stopped): nodes written before stay written, the others are `cancelled`. */
  cancelled: 'cancelled',
} as const;
/** One of the {@link RunOutcome} strings. */
export type RunOutcome = (typeof RunOutcome)[keyof typeof RunOutcome];

/** One target of a run. */
export interface RunNodeRow {
  /** Position in the target list, from 0. */
  seq: number;
  node: string;
  status: RunNodeStatus;
  /** Whether a write to the node landed during this run. */
  written: boolean;
  detail: NodeResultDetail | null;
}

/** A result to record for one node of a run. */
export interface NodeResultUpdate {
  node: string;
  status: RunNodeStatus;
  /** Whether a write landed; once true it stays true (false or absent keeps a true). */
  written?: boolean;
  /** Undefined leaves it as is; null clears it. */
  detail?: NodeResultDetail | null;
  /** The node as observed (any JSON value); undefined leaves it as is, null clears it. */
  observed?: unknown | null;
}

/** A run's rows counted by status, and how many were written. */
export interface RunNodeCounts {
  total: number;
  queued: number;
  pending: number;
  success: number;
  failure: number;
  cancelled: number;
  written: number;
}

/** What {@link RunStore.create} takes. */
export interface CreateRunInput {
  /** Idempotency key (non-empty); a second call with it returns the first run. */
  key?: string;
  workflowId?: string;
  revision?: number;
  dryRun?: boolean;
  /** Run number this run retries. */
  retryOf?: number;
  /** Who started the run (non-empty, at most 128 characters). */
  startedBy?: string;
  /** How the run was started: `cli`, `api`, `schedule` or `retry`. */
  startedVia?: string;
  /** Node names, in the order the run treats them. */
  targets: readonly string[];
  /** The run gains targets when it is planned (members of the node sets it targets): `targets` may be empty. */
  targetsAtPlan?: boolean;
  /** The action's context marker (a UUID); a fresh one when absent. */
  contextMarker?: string;
}

/** Which rows {@link RunStore.nodes} returns. */
export interface RunNodesQuery {
  /** Only rows with this status or one of these (an empty list matches nothing). */
  status?: RunNodeStatus | readonly RunNodeStatus[];
  /** Keyset paging: only rows with a greater `seq` (the last `seq` of the previous page). */
  afterSeq?: number;
  /** Rows of the filtered result to skip (a non-negative integer). */
  offset?: number;
  /** Most rows to return, 1 to {@link MAX_RUN_PAGE}. */
  limit: number;
  /** Only the nodes of this wave (from 0; see {@link RunStore.setWaves}). */
  wave?: number;
}

/** A wave of a run as recorded: its nodes counted by status. */
export interface RunWave {
  /** From 0: the order the run applies its waves in. */
  index: number;
  name: string;
  /** Nodes in the wave. */
  nodes: number;
  success: number;
  failure: number;
  cancelled: number;
  /** Nodes not settled yet (queued or pending). */
  pending: number;
}

/** Most waves one {@link RunStore.waves} page returns. */
export const MAX_WAVE_PAGE = 1000;

/** Most rows one {@link RunStore.nodes} page returns. */
export const MAX_RUN_PAGE = 5000;

/** Longest node name (a DNS-1123 subdomain). */
export const MAX_NODE_NAME_LENGTH = 253;

/**
 * The run part of the store. Every method is atomic: on any error nothing is
 * written. Methods reject with a StoreError for bad input (InvalidArgument)
 * and missing runs (NotFound), and with the driver's own error for I/O
 * failures. Run numbers are assigned under the store-wide write lock, so they
 * are consecutive across processes.
 */
export interface RunStore {
  /**
   * Creates a run with its targets (seq 0…n-1, status queued, not written).
   * With `key`, idempotent: an existing run with that key is returned
   * unchanged and `targets` are ignored (but still validated).
   * InvalidArgument for an empty list, a name that is not a non-empty string,
   * holds a NUL or is longer than {@link MAX_NODE_NAME_LENGTH} characters, a
   * duplicate name (named), or a malformed key, workflow ID, revision, run
   * number, `startedBy` or `startedVia`.
   */
  create(input: CreateRunInput): Promise<RunRecord>;
  /** One run; NotFound when absent. */
  get(id: number): Promise<RunRecord>;
  /**
   * Records how a run ended (a {@link RunOutcome}); recording it again
   * overwrites it (a replayed or retried activity). NotFound when the run is
   * absent; InvalidArgument for an outcome not in the set.
   */
  setOutcome(id: number, outcome: RunOutcome): Promise<void>;
  /** Sets the workflow ID of a run (known only after the run is created). NotFound when absent. */
  setWorkflow(id: number, workflowId: string): Promise<void>;
  /** The run whose action id is `actionId`, or null (none, or not a ULID). */
  byActionId(actionId: string): Promise<RunRecord | null>;
  /** Deletes a run and its rows (a run whose workflow could not be started). Idempotent. */
  discard(id: number): Promise<void>;
  /**
   * Appends `nodes` to a run's targets (queued, after its last row) in one
   * transaction, skipping names the run already has, so a retried plan adds
   * each once; the run's target count grows with them. Returns how many were
   * added. NotFound when the run is absent; InvalidArgument (nothing
   * written) for a name that is not a node name or is given twice.
   */
  addNodes(id: number, nodes: readonly string[]): Promise<number>;
  /**
   * Records results in one transaction, matched by node name; updates for the
   * same node apply in order. `written` only goes from false to true.
   * InvalidArgument (nothing written) for a node the run does not have (or
   * an absent run), a bad status, or a detail/observed value that is not JSON.
   */
  setNodeResults(id: number, updates: readonly NodeResultUpdate[]): Promise<void>;
  /**
   * A page of rows in seq (target) order; see {@link RunNodesQuery}. An absent
   * run has no rows. InvalidArgument for a bad status, limit, offset or afterSeq.
   */
  nodes(id: number, query: RunNodesQuery): Promise<RunNodeRow[]>;
  /** The `observed` value recorded for one node (parsed), or null (none, or no such node or run). */
  observedState(id: number, node: string): Promise<unknown | null>;
  /** One node's row, or null when the run has no such node (or there is no such run). */
  node(id: number, node: string): Promise<RunNodeRow | null>;
  /** Rows by status, and how many were written. NotFound when the run is absent. */
  counts(id: number): Promise<RunNodeCounts>;
  /**
   * Settles a cancelled run: every row still `queued` or `pending` becomes
   * `cancelled` with `detail` (its observed state dropped); final rows
   * (success, failure, cancelled) are left as they are. Returns how many
   * rows it settled; idempotent. NotFound when the run is absent;
   * InvalidArgument for a detail that is not JSON.
   */
  cancelNodes(id: number, detail: NodeResultDetail): Promise<number>;
  /**
   * Records a run's waves, in order (index 0 first): each wave's name (1 to
   * 200 characters) and its nodes, which must be nodes of the run, each in
   * one wave only. Recording again replaces the waves (a retried plan).
   * NotFound when the run is absent; InvalidArgument (nothing written) for
   * a node the run does not have, a node in two waves, or a bad name.
   */
  setWaves(id: number, waves: readonly { name: string; nodes: readonly string[] }[]): Promise<void>;
  /**
   * A page of a run's waves in order, each with its nodes counted by status:
   * those with an index greater than `afterIndex`, at most `limit` (1 to
   * {@link MAX_WAVE_PAGE}). None for a run without waves or an absent run.
   */
  waves(id: number, query: { afterIndex?: number; limit: number }): Promise<RunWave[]>;
}
