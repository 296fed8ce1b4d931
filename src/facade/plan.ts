/**
 * The fleet-wide plan (`relabel plan`, `POST /api/v1.0/plans`): what an
 * update run of a revision over a set of targets would do to the fleet as
 * a whole, and where every desired label comes from.
 *
 * Built on the bulk planner: a dry run (one paginated read of the nodes,
 * every plan computed in the worker, nothing written to any node, each
 * node's plan in the store), then the store's rows read a page at a time
 * and summed per label key, with each key's sources counted from the
 * design's provenance and the plugin set the dry run pinned (a label a
 * plugin gives, where the documents do not win, is the plugin's: joined by
 * `withPluginLabels`, as runs join them), looked up a page of nodes at a
 * time. Memory grows with the number of label keys and sources, not of
 * nodes; the per-node detail is one bounded page.
 */
import { FailureType, isFailureType } from '../core/plan/failure-types.ts';
import { byText } from '../core/plan/label-plan.ts';
import { formatLabelSource, pluginSource, type LabelSource } from '../core/site/label-provenance.ts';
import { nodeWants, type PluginEntry } from '../core/plan/node-wants.ts';
import { memberEntry, nodeSetWarnings } from '../core/plan/node-sets.ts';
import type { RemovalAssessment } from '../core/plan/removal-brake.ts';
import type { PlanImpact } from '../core/plan/workload-impact.ts';
import type { Design } from '../core/site/validate-site.ts';
import { MAX_PLUGIN_LOOKUP } from '../store/plugins/plugin-store.ts';
import type { Progress } from '../contracts/messages.ts';
import { RelabelError } from './relabel-error.ts';
import { createSummary, MAX_SUMMARY_LABEL_KEYS, nodeOutcome, type LabelKeyCounts, type NodeOutcome } from './runs/run-results.ts';
import type { RunRef, Runs, StartedRun, TargetSelection } from './runs/runs.ts';

/** Sources a key of the summary lists at most (the most common first). */
export const MAX_KEY_SOURCES = 20;

/** Most nodes one page of a plan's per-node detail holds. */
export const MAX_PLAN_NODE_PAGE = 1000;

/** Nodes in a page of per-node detail when not told. */
export const DEFAULT_PLAN_NODE_PAGE = 100;

/** One label key across the planned nodes. */
export interface LabelKeyPlan extends LabelKeyCounts {
  /** Planned nodes whose desired labels hold the key. */
  desired: number;
  /** Where the key comes from, with how many nodes take it from each source, most first: at most {@link MAX_KEY_SOURCES}. */
  sources: { source: LabelSource; nodes: number }[];
  /** Distinct sources beyond those listed. */
  moreSources: number;
}

/** One node's plan, with each of its desired labels' value and source. */
export interface PlannedNode extends NodeOutcome {
  /** Desired labels, keys sorted (absent for a node that is not in the design). */
  labels?: Record<string, { value: string; source: LabelSource }>;
}

/** What a run of a revision over its targets would do, fleet-wide. Bounded whatever the number of nodes. */
export interface FleetPlan extends RunRef {
  run: number;
  revision: number;
  site: string;
  /** Nodes targeted. */
  targets: number;
  /** Targets by outcome: `success` planned, `failure` not in the design or not in the cluster. */
  statuses: Record<string, number>;
  /** Targets that could not be planned, by failure type. */
  failureTypes: Record<string, number>;
  /** Planned nodes a run would write: labels, annotations or taints set or removed, labels adopted, the join taint lifted. */
  changing: number;
  /** Planned members of each node set, by set name (0: a set the plan targets that matches no node). */
  nodeSets: Record<string, number>;
  /**
   * What the plan warns of, refusing nothing: each set of `nodeSets` that
   * matches no node, and each of their selectors reading a label Cluster
   * API keeps on Machines only (so no Node carries it).
   */
  warnings: string[];
  /** Per label key (changed or desired), sorted: at most {@link MAX_SUMMARY_LABEL_KEYS}. */
  labels: Record<string, LabelKeyPlan>;
  /** Keys beyond those listed. */
  moreLabelKeys: number;
  /** What the run would remove of the labels relabel owns on its targets, and whether the mass-removal brake would refuse it. */
  removal: RemovalAssessment | null;
  /**
   * What the changes do to workloads: DaemonSets gaining or losing pods on
   * which nodes, pods a planned NoExecute taint evicts, running pods no
   * longer matching their node selector or required affinity, and their
   * PodDisruptionBudgets (counts and capped samples); `unavailable` with the
   * reason when the worker could not read them; null when not weighed.
   */
  impact: PlanImpact | null;
  /** A page of per-node plans, when asked for. */
  nodes?: { total: number; offset: number; items: PlannedNode[] };
}

/** Which targets to plan, against which revision, and which per-node detail to include. */
export interface PlanOptions {
  /** Node names; leave undefined when `select` chooses them. */
  targets?: unknown;
  select?: TargetSelection;
  /** The revision; the latest committed one when absent. */
  revision?: number;
  /** Include a page of per-node plans. */
  nodes?: { offset?: number; limit?: number };
  /** Called about every half second while the plan is computed. */
  onProgress?: (p: Progress) => void;
  /** Told when no worker polls the task queue (and undefined once one does again). */
  onWarning?: (warning: string | undefined) => void;
}

/**
 * A planned node's desired labels with their sources: the design's, with
 * its plugin labels joined in as a run joins them (the documents win; a
 * key a plugin gives is that plugin's); a member of node set `nodeSet`
 * wants its set's. Undefined for a node not in the design.
 */
export function sourcedLabels(
  design: Design,
  node: string,
  plugins: readonly PluginEntry[] = [],
  nodeSet?: string,
): Record<string, { value: string; source: LabelSource }> | undefined {
  const set = nodeSet === undefined || Object.hasOwn(design.nodes, node) ? undefined : design.nodeSets?.[nodeSet];
  const own = set === undefined ? design : { ...design, nodes: { [node]: memberEntry(design, nodeSet as string, node) } };
  const wants = nodeWants(own, node, plugins);
  const sources = own.nodes[node]?.labelSources;
  if (!wants || !sources) return undefined;
  return Object.fromEntries(
    Object.entries(wants.labels).map(([key, value]) => {
      const plugin = wants.plugins[key];
      return [key, { value, source: plugin !== undefined ? pluginSource(plugin) : (sources[key] as LabelSource) }];
    }),
  );
}

/** Whether a planned node's outcome changes anything on it, so a run would send it a patch. */
function writes(n: NodeOutcome): boolean {
  const some = (o: object | undefined) => o !== undefined && Object.keys(o).length > 0;
  return (
    some(n.set) ||
    (n.removed?.length ?? 0) > 0 ||
    (n.adopted?.length ?? 0) > 0 ||
    n.taintLifted === true ||
    (n.annotations?.set.length ?? 0) + (n.annotations?.removed.length ?? 0) > 0 ||
    (n.taints?.added.length ?? 0) + (n.taints?.removed.length ?? 0) > 0
  );
}

/** Sums a plan's rows per key: counts from the stored plans, sources from the design and the plugin set. */
function createKeyTally(design: Design) {
  const counts = createSummary(0);
  const keys = new Map<string, { desired: number; sources: Map<string, { source: LabelSource; nodes: number }> }>();
  const members: Record<string, number> = {};
  let changing = 0;
  return {
    add(outcome: NodeOutcome, plugins: readonly PluginEntry[] = []): void {
      counts.add(outcome);
      if (outcome.status === 'success' && writes(outcome)) changing++;
      if (outcome.nodeSet !== undefined && outcome.status === 'success') members[outcome.nodeSet] = (members[outcome.nodeSet] ?? 0) + 1;
      const labels = outcome.status === 'success' ? sourcedLabels(design, outcome.node, plugins, outcome.nodeSet) : undefined;
      for (const [key, { source }] of Object.entries(labels ?? {})) {
        let entry = keys.get(key);
        if (!entry) keys.set(key, (entry = { desired: 0, sources: new Map() }));
        entry.desired++;
        const id = formatLabelSource(source);
        const seen = entry.sources.get(id);
        if (seen) seen.nodes++;
        else entry.sources.set(id, { source, nodes: 1 });
      }
    },
    result() {
      const summary = counts.result();
      const all = [...new Set([...Object.keys(summary.labels), ...keys.keys()])].sort(byText);
      const listed = all.slice(0, MAX_SUMMARY_LABEL_KEYS);
      const none: LabelKeyCounts = { gain: 0, change: 0, lose: 0, adopt: 0 };
      const labels = Object.fromEntries(
        listed.map((key): [string, LabelKeyPlan] => {
          const entry = keys.get(key);
          const sources = [...(entry?.sources.values() ?? [])].sort(
            (a, b) => b.nodes - a.nodes || byText(formatLabelSource(a.source), formatLabelSource(b.source)),
          );
          return [
            key,
            {
              ...(summary.labels[key] ?? none),
              desired: entry?.desired ?? 0,
              sources: sources.slice(0, MAX_KEY_SOURCES),
              moreSources: Math.max(0, sources.length - MAX_KEY_SOURCES),
            },
          ];
        }),
      );
      const nodeSets = Object.fromEntries(Object.entries(members).sort(([a], [b]) => byText(a, b)));
      return {
        statuses: summary.statuses,
        failureTypes: summary.failureTypes,
        changing,
        nodeSets,
        labels,
        moreLabelKeys: all.length - listed.length + summary.moreLabelKeys,
      };
    },
  };
}

/** Builds the plan facade over the runs facade. */
export function createPlans(runs: Runs) {
  /**
   * The plan of a finished dry run: RunNotFound for a run that is not a dry
   * run; RunInProgress while it is still computed; the run's own failure
   * (such as DocumentValidationFailed) when it was rejected. The sets it
   * targets (`view.sets`, else those the run was started for) are counted
   * even when they match no node, and warned of then.
   */
  async function report(ref: { workflowId: string; runId?: string }, view: Pick<PlanOptions, 'nodes'> & { sets?: readonly string[] } = {}): Promise<FleetPlan> {
    const status = await runs.status(ref.workflowId, ref.runId);
    if (status.failure) throw new RelabelError(isFailureType(status.failure.type) ? status.failure.type : FailureType.InternalError, status.failure.message);
    if (status.execution === 'RUNNING') throw new RelabelError(FailureType.RunInProgress, `the plan ${ref.workflowId} is still being computed; ask again`);
    const result = status.result;
    if (!result) throw new RelabelError(FailureType.RunNotFound, `run ${ref.workflowId} (${status.runId}) ended ${status.execution} without a plan`);
    if (!result.dryRun) throw new RelabelError(FailureType.RunNotFound, `run ${ref.workflowId} (${status.runId}) is not a plan (a dry run)`);
    const design = await runs.design(result.revision);
    // The plugin set the dry run pinned (0, or none pinned: document labels only), looked up a page of planned nodes at a time.
    const set = status.pluginSet ?? 0;
    const pluginsOf = (outcomes: readonly NodeOutcome[], planned: boolean) =>
      runs.pluginLabels(
        set,
        outcomes.flatMap((o) => ((!planned || o.status === 'success') && (Object.hasOwn(design.nodes, o.node) || o.nodeSet !== undefined) ? [o.node] : [])),
      );
    const tally = createKeyTally(design);
    let page: NodeOutcome[] = [];
    const flush = async () => {
      const plugins = await pluginsOf(page, true);
      for (const outcome of page) tally.add(outcome, plugins.get(outcome.node));
      page = [];
    };
    for await (const row of runs.rows(result.run)) {
      page.push(nodeOutcome(row));
      if (page.length >= MAX_PLUGIN_LOOKUP) await flush();
    }
    await flush();
    const counted = tally.result();
    const targeted = view.sets ?? status.nodeSets ?? [];
    const nodeSets = Object.fromEntries(
      [...new Set([...targeted, ...Object.keys(counted.nodeSets)])].sort(byText).map((s): [string, number] => [s, counted.nodeSets[s] ?? 0]),
    );
    const plan: FleetPlan = {
      workflowId: ref.workflowId,
      runId: status.runId,
      ...(status.uiLink ? { uiLink: status.uiLink } : {}),
      run: result.run,
      revision: result.revision,
      site: result.site,
      targets: result.counts.total,
      ...counted,
      nodeSets,
      warnings: nodeSetWarnings(design.nodeSets, nodeSets),
      removal: result.removal ?? null,
      impact: result.impact ?? null,
    };
    if (view.nodes) {
      const offset = Math.max(0, Math.trunc(view.nodes.offset ?? 0));
      const limit = Math.min(MAX_PLAN_NODE_PAGE, Math.max(1, Math.trunc(view.nodes.limit ?? DEFAULT_PLAN_NODE_PAGE)));
      const detail = await runs.nodes(result.run, { offset, limit });
      // Every node of the design shows the labels a run would want of it, planned or not.
      const plugins = await pluginsOf(detail.items, false);
      const items = detail.items.map((n): PlannedNode => {
        const labels = sourcedLabels(design, n.node, plugins.get(n.node), n.nodeSet);
        return labels ? { ...n, labels } : n;
      });
      plan.nodes = { total: detail.total, offset, items };
    }
    return plan;
  }

  /**
   * Plans a run of `options.revision` (default the latest committed) over
   * the targets, as `update-labels --dry-run` would run it (the same
   * checks, the same selection), waits for it, and sums it up. Writes no
   * node.
   */
  async function plan(options: PlanOptions): Promise<FleetPlan> {
    const started = await start(options);
    await runs.wait(started, options.onProgress, undefined, options.onWarning);
    // The sets the plan targets are reported even when they match no node.
    const select = options.select;
    const targeted = select && 'nodeSets' in select ? select.nodeSets : select && 'all' in select ? started.nodeSets : undefined;
    return report(started, { ...(options.nodes ? { nodes: options.nodes } : {}), ...(targeted ? { sets: targeted } : {}) });
  }

  /** Starts the dry run a plan is made of, with the checks and selection of `update-labels`; {@link report} reads it once it has ended. */
  function start(options: Pick<PlanOptions, 'targets' | 'select' | 'revision'>): Promise<StartedRun> {
    return runs.start({
      targets: options.targets,
      ...(options.select ? { select: options.select } : {}),
      ...(options.revision !== undefined ? { revision: options.revision } : {}),
      dryRun: true,
    });
  }

  return { plan, start, report };
}

/** The plan facade's type. */
export type Plans = ReturnType<typeof createPlans>;
