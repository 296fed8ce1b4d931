/**
 * What an update run keeps in its Temporal memo beside its input, and how
 * it is read back: the run number, the action name and id, who started it
 * and how, and the Drydock task request that started it. Memos are in the
 * history, so what is kept there stays small.
 */
import { auditFrom, runAudit, StartedVia } from '../../core/plan/run-audit.ts';

/** A Drydock task's `design_ref` and `node_filter` as a run's memo keeps them; `node_filter_omitted` when the filter was too large to keep. */
export interface TaskRequestMemo {
  design_ref: string;
  node_filter: unknown;
  node_filter_omitted?: true;
}

/** Largest node filter (JSON bytes) kept in a run's memo: memos are in Temporal's history, which stays small. */
export const MAX_MEMO_FILTER = 32 * 1024;

/** What a run's memo says of it, each field only when the memo has it. */
export interface RunMemoFields {
  action?: string;
  run?: number;
  startedBy?: string;
  startedVia?: StartedVia;
  task?: TaskRequestMemo;
  actionId?: string;
  /** The node sets the run was started for (`--node-set`, an action's or task's `node_sets`): their members are its targets. */
  nodeSets?: string[];
}

/** The memo form of a task request: the filter dropped (and said so) when larger than {@link MAX_MEMO_FILTER}. */
export function taskMemo(task: TaskRequestMemo): TaskRequestMemo {
  if (Buffer.byteLength(JSON.stringify(task.node_filter ?? null)) <= MAX_MEMO_FILTER) return task;
  return { design_ref: task.design_ref, node_filter: null, node_filter_omitted: true };
}

/** A task request read back from a memo, when it has one of the right shape. */
function taskFrom(value: unknown): TaskRequestMemo | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { design_ref: ref, node_filter: filter, node_filter_omitted: omitted } = value as Record<string, unknown>;
  if (typeof ref !== 'string') return undefined;
  return { design_ref: ref, node_filter: filter ?? null, ...(omitted === true ? { node_filter_omitted: true as const } : {}) };
}

/**
 * `{action, run, startedBy, startedVia, task, actionId, nodeSets}` from a run's memo,
 * or nothing; a run a Temporal Schedule started (`scheduledBy`, its ID) and
 * that has no audit in its memo was started by that schedule.
 * Continue-as-new carries the memo and the search attributes along.
 */
export function memoFields(memo: Record<string, unknown> | undefined, scheduledBy?: string): RunMemoFields {
  const audit = auditFrom(memo?.audit) ?? (scheduledBy ? runAudit(scheduledBy, StartedVia.schedule) : undefined);
  const task = taskFrom(memo?.task);
  return {
    ...(task ? { task } : {}),
    ...(typeof memo?.action === 'string' ? { action: memo.action } : {}),
    ...(typeof memo?.run === 'number' ? { run: memo.run } : {}),
    ...(typeof memo?.actionId === 'string' ? { actionId: memo.actionId } : {}),
    ...(Array.isArray(memo?.nodeSets) && memo.nodeSets.every((s) => typeof s === 'string') ? { nodeSets: memo.nodeSets } : {}),
    ...(audit ? { startedBy: audit.by, startedVia: audit.via } : {}),
  };
}
