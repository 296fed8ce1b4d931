/**
 * The bulk planner of an update run: reads the run's targets from the store
 * and the target nodes from the API server in bulk (one paginated LIST, or
 * a few GETs for a small run), plans every node in the worker, and records
 * each outcome in the store in batches. Nodes already as desired are settled
 * here (each planned by `planNode`, `core/plan/node-plan.ts`); only nodes with
 * something to change are left `pending` for a child.
 */
import { setImmediate as turn } from 'node:timers/promises';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../core/plan/failure-types.ts';
import { createRemovalTally, removalRefusal, type RemovalAssessment } from '../core/plan/removal-brake.ts';
import { nodeWants, type PluginEntry } from '../core/plan/node-wants.ts';
import type { Design } from '../core/site/validate-site.ts';
import type { NodeChange, PlanImpact } from '../core/plan/workload-impact.ts';
import type { WorkloadApi } from '../kube/workloads.ts';
import { assessImpact } from './plan-impact.ts';
import { planNode } from '../core/plan/node-plan.ts';
import { readAhead } from './read-ahead.ts';
import { httpStatus, mapNodeError } from '../kube/errors.ts';
import type { NodeApi, NodeState } from '../kube/nodes.ts';
import type { NodeResultUpdate, RunStore } from '../store/run-store.ts';
import type { NodeFailure, RunCounts } from '../contracts/messages.ts';
import { FAILURE_SAMPLE_LIMIT } from '../contracts/messages.ts';
import type { NodeEvents } from './node-events.ts';

/** Runs with at most this many targets read their nodes one GET each; larger ones LIST. */
export const GET_THRESHOLD = 100;

/**
 * Rows per store write and per read of the run's pending rows, and names per
 * batch of a small run's GETs (read with bounded concurrency). Nodes are
 * LISTed by {@link LIST_PAGE_SIZE}.
 */
export const PAGE_SIZE = 500;

/**
 * Nodes per LIST page. The API server pays for each page besides its
 * nodes: at 50,000 nodes, pages of 1,000 took its CPU from about 4 s to
 * 2.3 s and the no-op from 9.1–10.9 s to 8.8 s against pages of 500.
 */
export const LIST_PAGE_SIZE = 1000;

/**
 * Nodes planned between two turns of the event loop: planning a page is
 * tens of milliseconds of CPU, in which the page read ahead would otherwise
 * wait unread in the socket.
 */
const NODES_PER_TURN = 100;

/** GETs in flight at once for a small run. */
const GET_CONCURRENCY = 8;

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
}

/** A run's label plugin set: its id and a per-node lookup of its labels. */
export interface PluginLabelSource {
  set: number;
  lookup(nodes: readonly string[]): Promise<Map<string, PluginEntry[]>>;
}

/** What the planner does with the world. */
export interface PlanDeps {
  nodes: NodeApi;
  store: RunStore;
  /** Called after each batch, so a long plan heartbeats. */
  progress?(planned: number): void;
  /** The run's label plugin set; without one, document labels only. */
  plugins?: PluginLabelSource;
  /** Events about target nodes the plan fails on that exist in the cluster (none in a dry run). */
  events?: NodeEvents;
  /** Read-only lists of DaemonSets, pods and budgets: with them, a dry run weighs its workload impact. */
  workloads?: WorkloadApi;
}

async function* targetsOf(store: RunStore, run: number): AsyncGenerator<string> {
  for (let afterSeq = -1; ;) {
    const rows = await store.nodes(run, { afterSeq, limit: 5000 });
    for (const row of rows) yield row.node;
    if (rows.length < 5000) return;
    afterSeq = rows.at(-1)?.seq ?? afterSeq;
  }
}

/** Lists every node a page at a time; a permanent refusal (401, 403) becomes the plan's failure, with its type. */
export async function* listNodes(nodes: NodeApi): AsyncGenerator<NodeState[]> {
  try {
    yield* nodes.listNodes({ pageSize: LIST_PAGE_SIZE });
  } catch (err) {
    throw mapNodeError(err, '(all)', 'list');
  }
}

/** Reads the named nodes with bounded concurrency, one page of results at a time (a missing node is its failure). */
export async function* getNodes(nodes: NodeApi, names: readonly string[]): AsyncGenerator<(NodeState | NodeFailure)[]> {
  for (let i = 0; i < names.length; i += PAGE_SIZE) {
    const slice = names.slice(i, i + PAGE_SIZE);
    const page: (NodeState | NodeFailure)[] = new Array(slice.length);
    let next = 0;
    const worker = async () => {
      for (let k = next++; k < slice.length; k = next++) {
        const name = slice[k] as string;
        try {
          page[k] = await nodes.readNode(name);
        } catch (err) {
          // A missing node is that node's failure; anything else fails the plan (retried, or the run's reason).
          if (httpStatus(err) !== 404) throw mapNodeError(err, name, 'read');
          page[k] = { node: name, error: { type: FailureType.NodeNotFound, message: `node ${name} not found in the cluster` } };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(GET_CONCURRENCY, slice.length) }, worker));
    yield page;
  }
}

/**
 * Refuses a run the mass-removal brake stops: every node left pending is
 * recorded as failed with MassRemovalRefused (a page at a time), then a
 * non-retryable MassRemovalRefused failure names the counts and keys.
 */
async function refuse(store: RunStore, run: number, removal: RemovalAssessment): Promise<never> {
  const message = removalRefusal(removal, run);
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
  throw ApplicationFailure.create({ type: FailureType.MassRemovalRefused, message, nonRetryable: true, details: [removal] });
}

/**
 * Plans every target of `run` against `design` and records each outcome:
 * success (nothing to change; in a dry run, the plan itself), failure
 * (NodeNotInDesign, NodeNotFound) or pending with the observed node state.
 * Idempotent: planning again rewrites the same rows. Writes no node.
 *
 * The mass-removal brake: when a run that is not a dry run would remove
 * more than the policy's `maxRemovalFraction` of the owned labels on its
 * targets and `allowMassRemoval` is not set, it is refused
 * (MassRemovalRefused, non-retryable; its pending nodes recorded as failed
 * with that type) before any child starts. Every plan reports the
 * assessment in `removal`.
 *
 * Unless it is a dry run, every target not in the design that exists in
 * the cluster is told to `events` as failed (a RelabelFailed Event, up to
 * the per-run cap; those over it are counted as suppressed). Names the
 * cluster does not have never reach `events`, so they cannot spend the cap
 * that nodes which exist need. Whether they exist is known from the bulk
 * read: one GET each when the run's designed and undesigned targets are at
 * most {@link GET_THRESHOLD}, else the LIST.
 *
 * A dry run given `workloads` also weighs its workload impact (see
 * `assessImpact`: DaemonSets gaining or losing pods, pods evicted or
 * stranded, their budgets) from each changed node's labels and taints
 * before and after, kept until the end (memory: the changed nodes).
 */
export async function planRun(
  deps: PlanDeps,
  input: { run: number; revision: number; design: Design; dryRun: boolean; allowMassRemoval?: boolean },
): Promise<RunPlan> {
  const { store } = deps;
  const { run, revision, design, dryRun } = input;
  const tally = createRemovalTally(design.policy.maxRemovalFraction);
  const counts: RunCounts = { total: 0, success: 0, failure: 0, written: 0 };
  const failures: NodeFailure[] = [];
  const failureTypes: Record<string, number> = {};
  let toChange = 0;
  let pluginConflictNodes = 0;
  // A dry run with workload access keeps each changed node's before and after, to weigh them at the end.
  const changes: NodeChange[] = [];
  const onChange = dryRun && deps.workloads ? (change: NodeChange) => void changes.push(change) : undefined;
  let batch: NodeResultUpdate[] = [];
  const write = async (force: boolean) => {
    if (batch.length === 0 || (!force && batch.length < PAGE_SIZE)) return;
    await store.setNodeResults(run, batch);
    batch = [];
    deps.progress?.(counts.success + counts.failure + toChange);
  };
  const settle = async (update: NodeResultUpdate) => {
    if (update.status === 'success') counts.success++;
    else if (update.status === 'pending') toChange++;
    else {
      counts.failure++;
      const error = update.detail?.error;
      if (error) failureTypes[error.type] = (failureTypes[error.type] ?? 0) + 1;
      if (error && failures.length < FAILURE_SAMPLE_LIMIT) failures.push({ node: update.node, error });
    }
    batch.push(update);
    await write(false);
  };
  const fail = (node: string, type: FailureType, message: string) => settle({ node, status: 'failure', detail: { error: { type, message } }, observed: null });

  const wanted = new Set<string>();
  // Targets not in the design, by name only (as `wanted`): each gets an Event if the bulk read finds it.
  const undesigned = new Set<string>();
  const events = dryRun ? undefined : deps.events;
  const notInDesign = (node: string) => `node ${node} is not in the design of revision ${revision}`;
  const failedEvent = (node: string, uid: string | undefined) =>
    events?.failed({ run, revision, node, ...(uid ? { uid } : {}), error: { type: FailureType.NodeNotInDesign, message: notInDesign(node) } });
  for await (const node of targetsOf(store, run)) {
    counts.total++;
    if (Object.hasOwn(design.nodes, node)) wanted.add(node);
    else {
      if (events) undesigned.add(node);
      await fail(node, FailureType.NodeNotInDesign, notInDesign(node));
    }
  }

  // Undesigned targets count towards the GETs: a run of a few designed nodes and many unknown names LISTs.
  const listed = wanted.size + undesigned.size > GET_THRESHOLD;
  // The next page is read while this one is planned.
  const pages = readAhead(listed ? listNodes(deps.nodes) : getNodes(deps.nodes, [...wanted]));
  for await (const page of pages) {
    const names = page.flatMap((item) => ('error' in item || !wanted.has(item.name) ? [] : [item.name]));
    const plugins = deps.plugins && names.length > 0 ? await deps.plugins.lookup(names) : new Map<string, PluginEntry[]>();
    for (const [i, item] of page.entries()) {
      if (i > 0 && i % NODES_PER_TURN === 0) await turn();
      if ('error' in item) {
        wanted.delete(item.node);
        await fail(item.node, item.error.type as FailureType, item.error.message);
      } else if (wanted.delete(item.name)) {
        const wants = nodeWants(design, item.name, plugins.get(item.name) ?? []);
        if ((wants?.conflicts.length ?? 0) > 0) pluginConflictNodes++;
        // A pending node's conflicts are recorded by its child, which plans it again.
        await settle(planNode(design, item, dryRun, wants, tally, onChange));
      } else if (undesigned.delete(item.name)) {
        failedEvent(item.name, item.uid);
      }
    }
  }
  if (!listed) {
    for (const node of undesigned) {
      // Only to know whether it exists: anything but an answer means no Event, and the plan goes on.
      const state = await deps.nodes.readNode(node).catch(() => undefined);
      if (state) failedEvent(node, state.uid);
    }
  }
  for (const node of wanted) await fail(node, FailureType.NodeNotFound, `node ${node} not found in the cluster`);
  await write(true);
  const removal = tally.result();
  if (removal.exceeded && !dryRun && input.allowMassRemoval !== true) await refuse(store, run, removal);
  const planned = counts.success + counts.failure + toChange;
  const impact = onChange && deps.workloads ? await assessImpact(deps.workloads, changes, () => deps.progress?.(planned)) : undefined;
  return {
    site: design.site,
    defaultConcurrency: design.policy.defaultConcurrency,
    counts,
    toChange,
    failures,
    failureTypes,
    removal,
    pluginSet: deps.plugins?.set ?? 0,
    pluginConflictNodes,
    ...(impact ? { impact } : {}),
  };
}
