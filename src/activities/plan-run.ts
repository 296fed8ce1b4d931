/**
 * The bulk planner of an update run: reads the run's targets from the store
 * and the target nodes from the API server in bulk (one paginated LIST, or
 * a few GETs for a small run), plans every node in the worker, and records
 * each outcome in the store in batches. Nodes already as desired are settled
 * here (each planned by `planNode`, `core/plan/node-plan.ts`); only nodes with
 * something to change are left `pending` for a child.
 */
import { setImmediate as turn } from 'node:timers/promises';
import { FailureType } from '../core/plan/failure-types.ts';
import { removalRefusal } from '../core/plan/removal-brake.ts';
import { nodeWants, type PluginEntry } from '../core/plan/node-wants.ts';
import { conflictMessage, hasNodeSets, matchingSets } from '../core/plan/node-sets.ts';
import { createMemberPlanner, memberWants, setsOverBound, type MemberPlanner } from './plan-members.ts';
import { PAGE_SIZE, PlanState, refuse, type PlanRunInput, type RunPlan } from './plan-state.ts';
import type { WorkloadApi } from '../kube/workloads.ts';
import { assessImpact } from './plan-impact.ts';
import { planNode } from '../core/plan/node-plan.ts';
import { mapLimited } from '../core/plan/map-limited.ts';
import { readAhead } from './read-ahead.ts';
import { planRelease } from './plan-release.ts';
import { httpStatus, mapNodeError } from '../kube/errors.ts';
import type { NodeApi, NodeState } from '../kube/nodes.ts';
import type { RunStore } from '../store/runs/run-store.ts';
import type { NodeFailure } from '../contracts/messages.ts';
import type { NodeEvents } from './node-events.ts';

export type { RunPlan } from './plan-state.ts';

/** Runs with at most this many targets read their nodes one GET each; larger ones LIST. */
export const GET_THRESHOLD = 100;

export { PAGE_SIZE, type PlanRunInput } from './plan-state.ts';

/**
 * Nodes per LIST page. The API server pays for each page besides its
 * nodes, so fewer, larger pages cost it less CPU over a whole LIST and
 * shorten a large no-op (`npm run bench:e2e`).
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
    yield await mapLimited(slice, GET_CONCURRENCY, async (name): Promise<NodeState | NodeFailure> => {
      try {
        return await nodes.readNode(name);
      } catch (err) {
        // A missing node is that node's failure; anything else fails the plan (retried, or the run's reason).
        if (httpStatus(err) !== 404) throw mapNodeError(err, name, 'read');
        return { node: name, error: { type: FailureType.NodeNotFound, message: `node ${name} not found in the cluster` } };
      }
    });
  }
}

/** Plans one page of the nodes read: named targets, members of the sets, and targets the design lacks. */
async function planPage(
  deps: PlanDeps,
  input: PlanRunInput,
  state: PlanState,
  page: readonly (NodeState | NodeFailure)[],
  sets: { planner: MemberPlanner; wanted: Set<string>; candidates: Set<string>; undesigned: Set<string> },
): Promise<void> {
  const { design, dryRun } = input;
  const { planner, wanted, candidates, undesigned } = sets;
  const read = page.filter((item): item is NodeState => !('error' in item));
  const { decisions, fresh } = planner.page(read, candidates);
  if (fresh.length > 0) state.counts.total += await deps.store.addNodes(input.run, fresh);
  const names = read.flatMap((item) => (wanted.has(item.name) || decisions.get(item.name)?.kind === 'member' ? [item.name] : []));
  const plugins = deps.plugins && names.length > 0 ? await deps.plugins.lookup(names) : new Map<string, PluginEntry[]>();
  for (const [i, item] of page.entries()) {
    if (i > 0 && i % NODES_PER_TURN === 0) await turn();
    if ('error' in item) {
      wanted.delete(item.node);
      // A target the design lacks that the cluster lacks too is not in the design, as without node sets.
      if (candidates.delete(item.node)) await state.fail(item.node, FailureType.NodeNotInDesign, state.notInDesign(item.node));
      else await state.fail(item.node, item.error.type as FailureType, item.error.message);
      continue;
    }
    const decision = decisions.get(item.name);
    if (wanted.delete(item.name)) {
      const wants = nodeWants(design, item.name, plugins.get(item.name) ?? []);
      if ((wants?.conflicts.length ?? 0) > 0) state.pluginConflictNodes++;
      // A pending node's conflicts are recorded by its child, which plans it again.
      const planned = planNode(design, item, dryRun, wants, state.tally, state.onChange);
      // Node sets matching a named node are reported with it: its BaremetalNode wins over them.
      const matched = planner.maybeMembers ? matchingSets(design, item.labels) : [];
      await state.settle(matched.length === 0 ? planned : { ...planned, detail: { ...(planned.detail ?? {}), matchedSets: matched } });
    } else if (decision?.kind === 'member') {
      const wants = memberWants(design, decision.set, item.name, plugins.get(item.name) ?? []);
      if (wants.conflicts.length > 0) state.pluginConflictNodes++;
      const planned = planNode(design, item, dryRun, wants, state.tally, state.onChange);
      // The child of a pending member reads its set from here.
      await state.settle({ ...planned, detail: { ...(planned.detail ?? {}), nodeSet: decision.set } });
    } else if (decision?.kind === 'conflict') {
      const message = conflictMessage(item.name, decision.sets);
      await state.fail(item.name, FailureType.NodeInTwoSets, message);
      state.failedEvent(item.name, item.uid, FailureType.NodeInTwoSets, message);
    } else if (decision?.kind === 'undesigned') {
      await state.fail(item.name, FailureType.NodeNotInDesign, state.notInDesign(item.name));
      state.failedEvent(item.name, item.uid);
    } else if (undesigned.delete(item.name)) {
      state.failedEvent(item.name, item.uid);
    }
  }
}

/**
 * Plans every target of `run` against `design` and records each outcome:
 * success (nothing to change; in a dry run, the plan itself), failure
 * (NodeNotInDesign, NodeInTwoSets, NodeNotFound) or pending with the
 * observed node state. Idempotent: planning again rewrites the same rows
 * (and adds no member twice). Writes no node.
 *
 * Node sets: a target the design does not name, in a design with node sets,
 * is decided once it is read: a member of one set is planned as that set's
 * entry (its row's detail names the set), a node matched by two sets fails
 * NodeInTwoSets naming both, any other is not in the design. The members
 * of each set in `nodeSets` are targets too: the run LISTs the cluster and
 * each member becomes a row of the run as it is found. Members of every
 * set are counted (`nodeSets` of the plan, 0 for a set matching nothing).
 *
 * The mass-removal brake: when a run that is not a dry run would remove
 * more than the policy's `maxRemovalFraction` of the owned labels on its
 * targets, or a set matches more nodes than the policy's
 * `maxNodeSetMembers`, and `allowMassRemoval` is not set, it is refused
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
export async function planRun(deps: PlanDeps, input: PlanRunInput): Promise<RunPlan> {
  if (input.release === true) return planRelease(deps, input);
  const { store } = deps;
  const { run, design, dryRun } = input;
  const state = new PlanState(deps, input);
  const planner = createMemberPlanner(design, input.nodeSets);
  const wanted = new Set<string>();
  // Targets the design does not name: by name only (as `wanted`); each gets an Event if the bulk read finds it.
  const undesigned = new Set<string>();
  // With node sets, such a target may be a member: decided when it is read.
  const candidates = new Set<string>();
  for await (const node of targetsOf(store, run)) {
    state.counts.total++;
    if (Object.hasOwn(design.nodes, node)) wanted.add(node);
    else if (planner.maybeMembers) candidates.add(node);
    else {
      if (state.tellsEvents) undesigned.add(node);
      await state.fail(node, FailureType.NodeNotInDesign, state.notInDesign(node));
    }
  }

  // Undesigned targets count towards the GETs: a run of a few designed nodes and many unknown names LISTs.
  const listed = planner.lists || wanted.size + undesigned.size + candidates.size > GET_THRESHOLD;
  // The next page is read while this one is planned.
  const pages = readAhead(listed ? listNodes(deps.nodes) : getNodes(deps.nodes, [...wanted, ...candidates]));
  for await (const page of pages) await planPage(deps, input, state, page, { planner, wanted, candidates, undesigned });
  if (!listed) {
    for (const node of undesigned) {
      // Only to know whether it exists: anything but an answer means no Event, and the plan goes on.
      const found = await deps.nodes.readNode(node).catch(() => undefined);
      if (found) state.failedEvent(node, found.uid);
    }
  }
  for (const node of candidates) await state.fail(node, FailureType.NodeNotInDesign, state.notInDesign(node));
  for (const node of wanted) await state.fail(node, FailureType.NodeNotFound, `node ${node} not found in the cluster`);
  await state.write(true);
  const removal = state.tally.result();
  if (!dryRun && input.allowMassRemoval !== true) {
    if (removal.exceeded) await refuse(store, run, removalRefusal(removal, run), removal);
    const over = listed ? setsOverBound(design, planner.members, planner.targeted) : [];
    if (over.length > 0) {
      const message = `run ${run} refused: node set(s) ${over.join(', ')} match more nodes than the label policy's max_node_set_members (${design.policy.maxNodeSetMembers}); check the selectors, or allow it`;
      await refuse(store, run, message, { nodeSets: planner.members });
    }
  }
  const { counts, toChange } = state;
  const planned = counts.success + counts.failure + toChange;
  const impact = state.onChange && deps.workloads ? await assessImpact(deps.workloads, state.changes, () => deps.progress?.(planned)) : undefined;
  return {
    site: design.site,
    defaultConcurrency: design.policy.defaultConcurrency,
    counts,
    toChange,
    failures: state.failures,
    failureTypes: state.failureTypes,
    removal,
    pluginSet: deps.plugins?.set ?? 0,
    pluginConflictNodes: state.pluginConflictNodes,
    ...(impact ? { impact } : {}),
    ...(hasNodeSets(design) && listed ? { nodeSets: planner.members } : {}),
  };
}
