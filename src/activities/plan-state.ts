/**
 * The bookkeeping of one bulk plan (`planRun`): outcomes settled into the
 * run's rows in batches, counts, failure sample and types, the removal
 * tally; and the refusal of a run the mass-removal brake stops.
 */
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../core/plan/failure-types.ts';
import { createRemovalTally, type RemovalAssessment } from '../core/plan/removal-brake.ts';
import type { NodeChange, PlanImpact } from '../core/plan/workload-impact.ts';
import type { Design } from '../core/site/validate-site.ts';
import type { NodeResultUpdate, RunStore } from '../store/runs/run-store.ts';
import type { NodeFailure, RunCounts } from '../contracts/messages.ts';
import { FAILURE_SAMPLE_LIMIT } from '../contracts/messages.ts';
import type { NodeEvents } from './node-events.ts';

/**
 * Rows per store write and per read of the run's pending rows, and names per
 * batch of a small run's GETs (read with bounded concurrency).
 */
export const PAGE_SIZE = 500;

/** What `planRun` is asked. */
export interface PlanRunInput {
  run: number;
  revision: number;
  design: Design;
  dryRun: boolean;
  allowMassRemoval?: boolean;
  /** Node sets whose members are targets too, found in the LIST. */
  nodeSets?: string[];
  /** A release run: every target planned to want nothing (see `plan-release.ts`). */
  release?: boolean;
}

/** What a plan's bookkeeping uses of the planner's dependencies. */
type PlanStateDeps = { store: RunStore; progress?(planned: number): void; events?: NodeEvents; workloads?: unknown };

/** One plan in progress: its tallies, and how outcomes are settled into the run's rows. */
export class PlanState {
  readonly counts: RunCounts = { total: 0, success: 0, failure: 0, written: 0 };
  readonly failures: NodeFailure[] = [];
  readonly failureTypes: Record<string, number> = {};
  toChange = 0;
  pluginConflictNodes = 0;
  readonly tally: ReturnType<typeof createRemovalTally>;
  /** Each changed node's before and after, kept by a dry run with workload access to weigh them at the end. */
  readonly changes: NodeChange[] = [];
  readonly onChange: ((change: NodeChange) => void) | undefined;
  private batch: NodeResultUpdate[] = [];
  private readonly events: NodeEvents | undefined;

  private readonly deps: PlanStateDeps;
  private readonly input: PlanRunInput;

  constructor(deps: PlanStateDeps, input: PlanRunInput) {
    this.deps = deps;
    this.input = input;
    this.tally = createRemovalTally(input.design.policy.maxRemovalFraction);
    this.events = input.dryRun ? undefined : deps.events;
    this.onChange = input.dryRun && deps.workloads ? (change) => void this.changes.push(change) : undefined;
  }

  /** Whether targets not in the design are told to the Events (not in a dry run). */
  get tellsEvents(): boolean {
    return this.events !== undefined;
  }

  notInDesign(node: string): string {
    return `node ${node} is not in the design of revision ${this.input.revision}`;
  }

  /** Writes the batch when it is full, or whatever it holds when `force`. */
  async write(force: boolean): Promise<void> {
    if (this.batch.length === 0 || (!force && this.batch.length < PAGE_SIZE)) return;
    await this.deps.store.setNodeResults(this.input.run, this.batch);
    this.batch = [];
    this.deps.progress?.(this.counts.success + this.counts.failure + this.toChange);
  }

  /** Counts one node's outcome and queues it for the store. */
  async settle(update: NodeResultUpdate): Promise<void> {
    if (update.status === 'success') this.counts.success++;
    else if (update.status === 'pending') this.toChange++;
    else {
      this.counts.failure++;
      const error = update.detail?.error;
      if (error) this.failureTypes[error.type] = (this.failureTypes[error.type] ?? 0) + 1;
      if (error && this.failures.length < FAILURE_SAMPLE_LIMIT) this.failures.push({ node: update.node, error });
    }
    this.batch.push(update);
    await this.write(false);
  }

  fail(node: string, type: FailureType, message: string): Promise<void> {
    return this.settle({ node, status: 'failure', detail: { error: { type, message } }, observed: null });
  }

  /** A RelabelFailed Event for a target that exists and failed before any write (none in a dry run). */
  failedEvent(node: string, uid: string | undefined, type: FailureType = FailureType.NodeNotInDesign, message = this.notInDesign(node)): void {
    const { run, revision } = this.input;
    this.events?.failed({ run, revision, node, ...(uid ? { uid } : {}), error: { type, message } });
  }
}

/**
 * Refuses a run the mass-removal brake stops: every node left pending is
 * recorded as failed with MassRemovalRefused (a page at a time), then a
 * non-retryable MassRemovalRefused failure gives `message` and `details`.
 */
export async function refuse(store: RunStore, run: number, message: string, details: unknown): Promise<never> {
  const error = { type: FailureType.MassRemovalRefused, message: `not written: run ${run} was refused by the mass-removal brake` };
  for (let afterSeq = -1; ;) {
    const rows = await store.nodes(run, { status: 'pending', afterSeq, limit: PAGE_SIZE });
    if (rows.length > 0)
      await store.setNodeResults(
        run,
        rows.map((row) => ({ node: row.node, status: 'failure' as const, detail: { error }, observed: null })),
      );
    const last = rows.at(-1);
    if (rows.length < PAGE_SIZE || last === undefined) break;
    afterSeq = last.seq;
  }
  throw ApplicationFailure.create({ type: FailureType.MassRemovalRefused, message, nonRetryable: true, details: [details] });
}

/** What planning a run found. */
export interface RunPlan {
  site: string;
  defaultConcurrency: number;
  /** Planned nodes settled as success (nothing to change, or every node in a dry run), failures, none written. */
  counts: RunCounts;
  /** Nodes left pending: each gets a child. */
  toChange: number;
  /** Up to FAILURE_SAMPLE_LIMIT failures. */
  failures: NodeFailure[];
  /** How many nodes failed with each failure type (a closed set, so bounded). */
  failureTypes: Record<string, number>;
  /** What the run would remove of the labels relabel owns on its targets, against the mass-removal brake. */
  removal: RemovalAssessment;
  /** The label plugin set the run uses (0: none, document labels only); absent from plans of earlier versions. */
  pluginSet?: number;
  /** Nodes with a plugin label not applied because another source gives the key another value. */
  pluginConflictNodes?: number;
  /** In a dry run read with workload access: what the plan does to DaemonSets, pods and their budgets. */
  impact?: PlanImpact;
  /** Members of each node set of the design found in the LIST (0: the set matches no node); absent without sets or a LIST. */
  nodeSets?: Record<string, number>;
}
