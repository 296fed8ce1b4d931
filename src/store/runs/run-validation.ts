/**
 * Input checks of the run part of the store, pure and backend-independent:
 * each throws a StoreError (InvalidArgument) naming the culprit before any
 * SQL runs, and turns what it accepts into the values the SQL binds.
 */
import { isStartedVia, MAX_STARTED_BY, StartedVia } from '../../core/plan/run-audit.ts';
import type { CreateRunInput, NodeResultUpdate, RunNodesQuery, RunNodeStatus } from './run-store.ts';
import { MAX_NODE_NAME_LENGTH, MAX_RUN_PAGE, RunNodeStatus as Status, RunOutcome } from './run-store.ts';
import { StoreError, StoreErrorCode } from '../store-error.ts';

const STATUSES: ReadonlySet<string> = new Set(Object.values(Status));

export function invalid(message: string): StoreError {
  return new StoreError(StoreErrorCode.InvalidArgument, message);
}

/** Whether `name` could be a target: a non-empty string of at most 253 characters without NUL. */
export function isNodeName(name: unknown): name is string {
  return typeof name === 'string' && name.length > 0 && name.length <= MAX_NODE_NAME_LENGTH && !name.includes('\0');
}

/** Checks a run number (a positive integer); InvalidArgument otherwise. */
export function assertRunId(id: number, what = 'run number'): void {
  if (!Number.isSafeInteger(id) || id < 1) throw invalid(`invalid ${what} ${String(id)}: must be a positive integer`);
}

function assertStatus(status: unknown): asserts status is RunNodeStatus {
  if (typeof status !== 'string' || !STATUSES.has(status)) {
    throw invalid(`invalid node status ${JSON.stringify(status)}: must be one of ${[...STATUSES].join(', ')}`);
  }
}

/** Checks an optional non-empty text field (no NUL) of a run. */
function assertText(value: unknown, what: string): void {
  if (value === undefined) return;
  if (typeof value !== 'string' || value.length === 0 || value.includes('\0')) {
    throw invalid(`invalid ${what} ${JSON.stringify(value)}: must be a non-empty string without NUL`);
  }
}

const OUTCOMES: ReadonlySet<string> = new Set(Object.values(RunOutcome));

/** Checks an outcome given to `runs.setOutcome` (one of {@link RunOutcome}). */
export function assertOutcome(outcome: unknown): void {
  if (typeof outcome !== 'string' || !OUTCOMES.has(outcome)) {
    throw invalid(`invalid run outcome ${JSON.stringify(outcome)}: must be one of ${[...OUTCOMES].join(', ')}`);
  }
}

/** Checks the optional audit fields of a new run: who (non-empty, bounded, no NUL) and how (a known way). */
function assertAudit(input: CreateRunInput): void {
  assertText(input.startedBy, 'startedBy');
  if (input.startedBy !== undefined && input.startedBy.length > MAX_STARTED_BY) throw invalid(`invalid startedBy: longer than ${MAX_STARTED_BY} characters`);
  if (input.startedVia !== undefined && !isStartedVia(input.startedVia)) {
    throw invalid(`invalid startedVia ${JSON.stringify(input.startedVia)}: must be one of ${Object.values(StartedVia).join(', ')}`);
  }
  if (input.contextMarker !== undefined && (typeof input.contextMarker !== 'string' || !UUID.test(input.contextMarker))) {
    throw invalid(`invalid contextMarker ${JSON.stringify(String(input.contextMarker).slice(0, 40))}: must be a UUID`);
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Checks a workflow ID given to `runs.setWorkflow` (a non-empty string). */
export function assertWorkflowId(workflowId: unknown): void {
  if (workflowId === undefined) throw invalid('invalid workflow ID undefined: must be a non-empty string without NUL');
  assertText(workflowId, 'workflow ID');
}

/**
 * Checks everything {@link RunStore.create} takes: the targets (at least
 * one; each a valid node name, the first bad or repeated one named) and the
 * optional fields.
 */
export function validateRunInput(input: CreateRunInput): void {
  assertText(input.key, 'run key');
  assertText(input.workflowId, 'workflow ID');
  if (input.revision !== undefined) assertRunId(input.revision, 'revision');
  if (input.retryOf !== undefined) assertRunId(input.retryOf, 'run number to retry');
  if (input.dryRun !== undefined && typeof input.dryRun !== 'boolean') throw invalid(`invalid dryRun ${JSON.stringify(input.dryRun)}: must be a boolean`);
  assertAudit(input);
  const { targets } = input;
  if (!Array.isArray(targets) || (targets.length === 0 && input.targetsAtPlan !== true)) throw invalid('a run needs at least one target node');
  const seen = new Set<string>();
  for (const [i, name] of targets.entries()) {
    if (typeof name !== 'string' || name.length === 0) throw invalid(`target #${i + 1} is not a node name (${JSON.stringify(name) ?? String(name)})`);
    if (name.length > MAX_NODE_NAME_LENGTH) throw invalid(`target #${i + 1} is longer than ${MAX_NODE_NAME_LENGTH} characters`);
    if (name.includes('\0')) throw invalid(`target #${i + 1} holds a NUL character`);
    if (seen.has(name)) throw invalid(`target ${name} is listed more than once`);
    seen.add(name);
  }
}

/** One node's updates merged, its JSON already serialised: `undefined` = leave as is, `null` = clear. */
export interface MergedResult {
  readonly node: string;
  readonly status: RunNodeStatus;
  readonly written: boolean;
  readonly detail: string | null | undefined;
  readonly observed: string | null | undefined;
}

function serialise(value: unknown, what: string, node: string): string | null | undefined {
  if (value === undefined || value === null) return value;
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw invalid(`${what} of node ${node} is not JSON-serialisable: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (json === undefined) throw invalid(`${what} of node ${node} is not JSON-serialisable`);
  return json;
}

/**
 * Checks `updates` and merges those for the same node as if applied in order
 * (last status, detail and observed value that were given; written if any
 * was). Result in order of each node's first update. A node name that cannot
 * be a target is InvalidArgument naming the run.
 */
export function mergeResults(run: number, updates: readonly NodeResultUpdate[]): MergedResult[] {
  if (!Array.isArray(updates)) throw invalid('node results must be a list');
  const merged = new Map<string, MergedResult>();
  for (const u of updates) {
    if (!isNodeName(u.node)) throw invalid(`run ${run} has no target node ${JSON.stringify(u.node) ?? String(u.node)}`);
    assertStatus(u.status);
    if (u.written !== undefined && typeof u.written !== 'boolean') throw invalid(`written of node ${u.node} must be a boolean`);
    const detail = serialise(u.detail, 'detail', u.node);
    const observed = serialise(u.observed, 'observed state', u.node);
    const prev = merged.get(u.node);
    merged.set(u.node, {
      node: u.node,
      status: u.status,
      written: (prev?.written ?? false) || u.written === true,
      detail: detail === undefined ? prev?.detail : detail,
      observed: observed === undefined ? prev?.observed : observed,
    });
  }
  return [...merged.values()];
}

/** A {@link RunNodesQuery} checked: statuses (undefined = all), afterSeq, offset and limit. */
export interface PageQuery {
  readonly statuses: readonly RunNodeStatus[] | undefined;
  readonly afterSeq: number | undefined;
  readonly offset: number;
  readonly limit: number;
  readonly wave?: number;
}

/** Checks a {@link RunNodesQuery}: known statuses, an integer afterSeq, offset ≥ 0, limit 1…5000. */
export function validatePageQuery(query: RunNodesQuery): PageQuery {
  const { limit, afterSeq, offset = 0 } = query;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_RUN_PAGE)
    throw invalid(`limit must be an integer from 1 to ${MAX_RUN_PAGE}, not ${String(limit)}`);
  if (!Number.isSafeInteger(offset) || offset < 0) throw invalid(`offset must be a non-negative integer, not ${String(offset)}`);
  if (afterSeq !== undefined && !Number.isSafeInteger(afterSeq)) throw invalid(`afterSeq must be an integer, not ${String(afterSeq)}`);
  const { wave } = query;
  if (wave !== undefined && !(Number.isSafeInteger(wave) && wave >= 0)) throw invalid(`wave must be a non-negative integer, not ${String(wave)}`);
  let statuses: RunNodeStatus[] | undefined;
  if (query.status !== undefined) {
    statuses = [...new Set<RunNodeStatus>(Array.isArray(query.status) ? query.status : [query.status as RunNodeStatus])];
    for (const status of statuses) assertStatus(status);
  }
  return { statuses, afterSeq, offset, limit, ...(wave !== undefined ? { wave } : {}) };
}
