/**
 * What the Shipyard view of a run needs beyond its status: the store's
 * action record (action id, context marker, command audit) and when the
 * run's resolve and plan activities ran, read from the first page of its
 * history (bounded whatever the number of nodes: both happen before any
 * node is relabelled).
 */
import type { Client } from '@temporalio/client';
import { timestampMs } from '../../temporal/timestamp.ts';
import { isStoreError, StoreErrorCode } from '../../store/store-error.ts';
import type { Store } from '../../store/store.ts';
import type { ActionCommand } from '../../store/runs/action-store.ts';
import type { RunNodeCounts, RunNodeRow, RunNodesQuery, RunRecord, RunWave } from '../../store/runs/run-store.ts';

/** When one activity of a run was scheduled, started and closed (ISO times), and its attempt. */
export interface ActivityTimes {
  scheduled: string;
  started?: string;
  closed?: string;
  attempt: number;
  failed: boolean;
}

/** The times of the activities that make a run's first two steps; absent when not (yet) in the history. */
export interface RunStepTimes {
  /** When the run's first execution started (a run that continued as new keeps it). */
  started?: string;
  resolve?: ActivityTimes;
  plan?: ActivityTimes;
}

/** Events of one history page: the resolve and plan activities are among the first few dozen. */
const HISTORY_PAGE = 64;

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/** What `read` gives, or null when the store has no such run (NotFound). */
async function orNull<T>(read: Promise<T>): Promise<T | null> {
  try {
    return await read;
  } catch (err) {
    if (isStoreError(err, StoreErrorCode.NotFound)) return null;
    throw err;
  }
}

/** What the Shipyard view of a run reads: the store's action record and rows, and the run's first steps. */
export interface RunActions {
  /** The run whose action id is `actionId`, or null. */
  byActionId(actionId: string): Promise<RunRecord | null>;
  /** The store's record of run number `run`, or null when the store has none. */
  record(run: number): Promise<RunRecord | null>;
  /** The newest commands issued against run `run`'s action, oldest first. */
  commands(run: number): Promise<ActionCommand[]>;
  /** Appends a command (`stop`, `pause`, `unpause`) to run `run`'s command audit. */
  recordCommand(run: number, command: string, user: string | null): Promise<ActionCommand>;
  /**
   * When the resolve and plan activities of the execution `runId` (a run's
   * first) were scheduled, started and closed, from one page of its history.
   * Empty when the history cannot be read.
   */
  stepTimes(workflowId: string, runId: string): Promise<RunStepTimes>;
  /** A page of run `run`'s rows, with their positions (see the store's `runs.nodes`). */
  nodeRows(run: number, query: RunNodesQuery): Promise<RunNodeRow[]>;
  /** The row at position `seq` of run `run`, or null. */
  nodeAt(run: number, seq: number): Promise<RunNodeRow | null>;
  /** Run `run`'s rows counted by status, or null when the store has no such run. */
  counts(run: number): Promise<RunNodeCounts | null>;
  /** A page of run `run`'s waves with their nodes counted by status (none for a run without waves). */
  waves(run: number, query: { afterIndex?: number; limit: number }): Promise<RunWave[]>;
}

/** Builds the action half of the runs facade over `client` and `store`. */
export function createRunActions(deps: { client: Client; store: Store; namespace: string }): RunActions {
  const { client, store } = deps;

  async function byActionId(actionId: string): Promise<RunRecord | null> {
    return store.runs.byActionId(actionId);
  }

  async function record(run: number): Promise<RunRecord | null> {
    return orNull(store.runs.get(run));
  }

  async function commands(run: number): Promise<ActionCommand[]> {
    return store.actions.commands(run);
  }

  async function recordCommand(run: number, command: string, user: string | null): Promise<ActionCommand> {
    return store.actions.recordCommand(run, command, user);
  }

  async function stepTimes(workflowId: string, runId: string): Promise<RunStepTimes> {
    const page = await client.workflowService
      .getWorkflowExecutionHistory({ namespace: deps.namespace, execution: { workflowId, runId }, maximumPageSize: HISTORY_PAGE })
      .catch(() => undefined);
    const times: RunStepTimes = {};
    const byScheduled = new Map<string, ActivityTimes>();
    for (const event of page?.history?.events ?? []) {
      const at = iso(timestampMs(event.eventTime));
      if (event.workflowExecutionStartedEventAttributes && at) times.started = at;
      const scheduled = event.activityTaskScheduledEventAttributes;
      if (scheduled && at) {
        const kind = scheduled.activityType?.name === 'resolveRevision' ? 'resolve' : scheduled.activityType?.name === 'planRun' ? 'plan' : undefined;
        if (kind && !times[kind]) {
          const entry: ActivityTimes = { scheduled: at, attempt: 1, failed: false };
          times[kind] = entry;
          byScheduled.set(String(event.eventId), entry);
        }
        continue;
      }
      const started = event.activityTaskStartedEventAttributes;
      const entry = (id: unknown) => byScheduled.get(String(id));
      if (started) {
        const e = entry(started.scheduledEventId);
        if (e && at) Object.assign(e, { started: at, attempt: started.attempt ?? 1 });
        continue;
      }
      const done = event.activityTaskCompletedEventAttributes ?? event.activityTaskFailedEventAttributes ?? event.activityTaskTimedOutEventAttributes;
      const e = done ? entry(done.scheduledEventId) : undefined;
      if (e && at) Object.assign(e, { closed: at, failed: !event.activityTaskCompletedEventAttributes });
    }
    return times;
  }

  async function nodeRows(run: number, query: RunNodesQuery): Promise<RunNodeRow[]> {
    return store.runs.nodes(run, query);
  }

  async function nodeAt(run: number, seq: number): Promise<RunNodeRow | null> {
    const [row] = await store.runs.nodes(run, { afterSeq: seq - 1, limit: 1 });
    return row?.seq === seq ? row : null;
  }

  async function counts(run: number): Promise<RunNodeCounts | null> {
    return orNull(store.runs.counts(run));
  }

  const waves = (run: number, query: { afterIndex?: number; limit: number }) => store.runs.waves(run, query);
  return { byActionId, record, commands, recordCommand, stepTimes, nodeRows, nodeAt, counts, waves };
}
