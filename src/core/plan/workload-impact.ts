/**
 * What a label and taint change does to the workloads on the nodes it
 * touches, before it runs: which DaemonSets gain or lose a pod on which
 * nodes, which pods a planned NoExecute taint evicts (and when), which
 * running pods stop matching their node selector or required node affinity
 * (not evicted, but unschedulable where they are if restarted), and the
 * PodDisruptionBudgets those pods count against.
 *
 * Kubernetes' own rules (node-affinity.ts, tolerations.ts): the DaemonSet
 * controller's `NodeShouldRunDaemonPod`, the taint-eviction controller's
 * timing, `GetRequiredNodeAffinity`. Pure and bounded: counts per workload
 * and in total, with at most {@link IMPACT_SAMPLE_SIZE} names per entry and
 * {@link IMPACT_MAX_ENTRIES} entries per list, the rest counted.
 */
import { byText } from './label-plan.ts';
import { daemonSetShouldRun, type DaemonSetInfo, type NodeView, type PodPlacement } from './daemon-sets.ts';
import { matchesLabelSelector, matchesNodePlacement, type LabelSelector } from './node-affinity.ts';
import { noExecuteOutcome, type TaintLike } from './tolerations.ts';

export { daemonSetShouldRun, type DaemonSetInfo, type DaemonVerdict, type NodeView, type PodPlacement } from './daemon-sets.ts';
export { matchesLabelSelector, matchesNodeSelector, matchesRequiredAffinity } from './node-affinity.ts';
export { toleratesTaints } from './tolerations.ts';

/** Names (nodes, pods) listed per entry at most; the rest are counted. */
export const IMPACT_SAMPLE_SIZE = 20;

/**
 * Entries (DaemonSets, workloads, budgets) listed per list at most; the rest
 * are counted. With {@link IMPACT_SAMPLE_SIZE} names each, an impact stays
 * around 100 KB at worst as it rides in a dry run's workflow result, well
 * under Temporal's payload warning (512 KB).
 */
export const IMPACT_MAX_ENTRIES = 20;

/** One node a change touches: as read, and as the plan leaves it. */
export type NodeChange = { name: string; before: NodeView; after: NodeView };

/** A pod bound to a node. */
export type PodInfo = PodPlacement & {
  namespace: string;
  name: string;
  nodeName: string;
  labels?: Readonly<Record<string, string>>;
  /** Its controlling owner (`ownerReferences` with `controller: true`). */
  controller?: { kind: string; name: string };
  /** Its Ready condition is True (absent: not known to be ready). */
  ready?: boolean;
  /** It is being deleted (`deletionTimestamp` set). */
  terminating?: boolean;
};

/** A PodDisruptionBudget: which pods of its namespace it counts. */
export type DisruptionBudgetInfo = { namespace: string; name: string; selector?: LabelSelector | null };

/** A count with at most {@link IMPACT_SAMPLE_SIZE} of its items, in the order met. */
export type Sampled<T> = { count: number; sample: T[] };

/** A DaemonSet's pods gained and lost, by node name. */
export type DaemonSetImpact = { namespace: string; name: string; gains: Sampled<string>; loses: Sampled<string> };

/** A pod the change affects; `afterSeconds` for an eviction (0: at once). */
export type PodImpact = { pod: string; node: string; afterSeconds?: number };

/** A workload's pods evicted or stranded, and the budgets they count against. */
export type WorkloadPodsImpact = {
  namespace: string;
  /** `Kind/name` of the pods' controller, or `Pod/name` for a pod without one. */
  workload: string;
  evicted: Sampled<PodImpact>;
  stranded: Sampled<PodImpact>;
  /** Names of the PodDisruptionBudgets (same namespace) selecting any of these pods, at most {@link IMPACT_SAMPLE_SIZE}. */
  disruptionBudgets: string[];
};

/** A PodDisruptionBudget and how many of its pods the change evicts or strands. */
export type DisruptionBudgetImpact = { namespace: string; name: string; evicted: number; stranded: number };

/** The bounded impact of a change. */
export type WorkloadImpact = {
  daemonSets: DaemonSetImpact[];
  moreDaemonSets: number;
  workloads: WorkloadPodsImpact[];
  moreWorkloads: number;
  disruptionBudgets: DisruptionBudgetImpact[];
  moreDisruptionBudgets: number;
  totals: {
    /** Nodes whose labels or taints change. */
    nodesChanged: number;
    daemonSets: number;
    podsGained: number;
    podsLost: number;
    podsEvicted: number;
    podsStranded: number;
    workloads: number;
    disruptionBudgets: number;
  };
};

/** A plan's workload impact, or why it could not be weighed (the plan itself stands). */
export type PlanImpact = WorkloadImpact | { unavailable: string };

function sampled<T>(): Sampled<T> {
  return { count: 0, sample: [] };
}

function push<T>(into: Sampled<T>, item: T): void {
  into.count++;
  if (into.sample.length < IMPACT_SAMPLE_SIZE) into.sample.push(item);
}

/** The first {@link IMPACT_MAX_ENTRIES} of `items`, largest `weight` first, then by `name`; and how many were left out. */
function capped<T>(items: Iterable<T>, weight: (item: T) => number, name: (item: T) => string): { listed: T[]; more: number } {
  const all = [...items].sort((a, b) => weight(b) - weight(a) || byText(name(a), name(b)));
  return { listed: all.slice(0, IMPACT_MAX_ENTRIES), more: Math.max(0, all.length - IMPACT_MAX_ENTRIES) };
}

function sameView(a: NodeView, b: NodeView): boolean {
  const keys = Object.keys(a.labels);
  if (keys.length !== Object.keys(b.labels).length || keys.some((k) => !Object.hasOwn(b.labels, k) || a.labels[k] !== b.labels[k])) return false;
  const id = (t: TaintLike) => `${t.key}\u0000${t.value ?? ''}\u0000${t.effect}`;
  const ta = a.taints.map(id).sort(byText);
  const tb = b.taints.map(id).sort(byText);
  return ta.length === tb.length && ta.every((t, i) => t === tb[i]);
}

/** The bounded impact from every DaemonSet's, workload's and budget's tally. */
function summarize(dsImpact: DaemonSetImpact[], all: WorkloadPodsImpact[], budgets: DisruptionBudgetImpact[], nodesChanged: number): WorkloadImpact {
  const changedSets = dsImpact.filter((d) => d.gains.count + d.loses.count > 0);
  const sets = capped(
    changedSets,
    (d) => d.gains.count + d.loses.count,
    (d) => `${d.namespace}/${d.name}`,
  );
  const pods = capped(
    all,
    (w) => w.evicted.count + w.stranded.count,
    (w) => `${w.namespace}/${w.workload}`,
  );
  const touched = budgets.filter((b) => b.evicted + b.stranded > 0);
  const budgetList = capped(
    touched,
    (b) => b.evicted + b.stranded,
    (b) => `${b.namespace}/${b.name}`,
  );
  const sum = <T>(items: T[], f: (item: T) => number) => items.reduce((n, item) => n + f(item), 0);
  return {
    daemonSets: sets.listed,
    moreDaemonSets: sets.more,
    workloads: pods.listed,
    moreWorkloads: pods.more,
    disruptionBudgets: budgetList.listed,
    moreDisruptionBudgets: budgetList.more,
    totals: {
      nodesChanged,
      daemonSets: changedSets.length,
      podsGained: sum(changedSets, (d) => d.gains.count),
      podsLost: sum(changedSets, (d) => d.loses.count),
      podsEvicted: sum(all, (w) => w.evicted.count),
      podsStranded: sum(all, (w) => w.stranded.count),
      workloads: all.length,
      disruptionBudgets: touched.length,
    },
  };
}

/**
 * An accumulator of {@link WorkloadImpact} over nodes given one at a time
 * with the pods bound to each, so a caller reading the cluster a page at a
 * time never holds more than a page of pods. Memory grows with the
 * DaemonSets, budgets and affected workloads, not with the nodes or pods.
 */
export function createImpactTally(daemonSets: readonly DaemonSetInfo[], budgets: readonly DisruptionBudgetInfo[]) {
  const dsImpact = daemonSets.map((ds): DaemonSetImpact => ({ namespace: ds.namespace, name: ds.name, gains: sampled(), loses: sampled() }));
  const dsIndex = new Map(daemonSets.map((ds, i) => [`${ds.namespace}/${ds.name}`, i]));
  const budgetsByNamespace = new Map<string, { budget: DisruptionBudgetInfo; impact: DisruptionBudgetImpact }[]>();
  for (const budget of budgets) {
    const list = budgetsByNamespace.get(budget.namespace) ?? [];
    list.push({ budget, impact: { namespace: budget.namespace, name: budget.name, evicted: 0, stranded: 0 } });
    budgetsByNamespace.set(budget.namespace, list);
  }
  const workloads = new Map<string, WorkloadPodsImpact>();
  let nodesChanged = 0;

  const workloadOf = (pod: PodInfo): WorkloadPodsImpact => {
    const workload = pod.controller ? `${pod.controller.kind}/${pod.controller.name}` : `Pod/${pod.name}`;
    const id = `${pod.namespace}/${workload}`;
    let entry = workloads.get(id);
    if (!entry) workloads.set(id, (entry = { namespace: pod.namespace, workload, evicted: sampled(), stranded: sampled(), disruptionBudgets: [] }));
    return entry;
  };
  const countBudgets = (pod: PodInfo, entry: WorkloadPodsImpact, kind: 'evicted' | 'stranded') => {
    for (const { budget, impact } of budgetsByNamespace.get(pod.namespace) ?? []) {
      if (!matchesLabelSelector(budget.selector, pod.labels ?? {})) continue;
      impact[kind]++;
      if (!entry.disruptionBudgets.includes(budget.name) && entry.disruptionBudgets.length < IMPACT_SAMPLE_SIZE) entry.disruptionBudgets.push(budget.name);
    }
  };

  /** Adds one node's change and the pods bound to it (pods of other nodes are ignored). */
  function addNode(change: NodeChange, pods: readonly PodInfo[]): void {
    if (sameView(change.before, change.after)) return;
    nodesChanged++;
    const before = { name: change.name, ...change.before };
    const after = { name: change.name, ...change.after };
    const onNode = pods.filter((pod) => pod.nodeName === change.name);
    const daemonPods = new Set(onNode.filter((p) => p.controller?.kind === 'DaemonSet').map((p) => `${p.namespace}/${p.controller?.name}`));
    daemonSets.forEach((ds, i) => {
      const was = daemonSetShouldRun(ds, before);
      const will = daemonSetShouldRun(ds, after);
      // A pod is there when the controller would create one, or keeps the one it finds.
      const present = was.shouldRun || (was.shouldContinueRunning && daemonPods.has(`${ds.namespace}/${ds.name}`));
      const stays = will.shouldRun || (will.shouldContinueRunning && present);
      const impact = dsImpact[i] as DaemonSetImpact;
      if (!present && stays) push(impact.gains, change.name);
      if (present && !stays) push(impact.loses, change.name);
    });
    for (const pod of onNode) addPod(pod, before, after);
  }

  function addPod(pod: PodInfo, before: { name: string } & NodeView, after: { name: string } & NodeView): void {
    const tolerations = pod.tolerations ?? [];
    const evictedAfter = noExecuteOutcome(tolerations, after.taints);
    if (evictedAfter.evicted && !noExecuteOutcome(tolerations, before.taints).evicted) {
      const entry = workloadOf(pod);
      push(entry.evicted, { pod: pod.name, node: pod.nodeName, afterSeconds: evictedAfter.afterSeconds });
      countBudgets(pod, entry, 'evicted');
      return;
    }
    // A DaemonSet's pod is removed by its controller instead (see the DaemonSet's losses).
    if (pod.controller?.kind === 'DaemonSet' && dsIndex.has(`${pod.namespace}/${pod.controller.name}`)) return;
    if (matchesNodePlacement(pod.nodeSelector, pod.affinity, before) && !matchesNodePlacement(pod.nodeSelector, pod.affinity, after)) {
      const entry = workloadOf(pod);
      push(entry.stranded, { pod: pod.name, node: pod.nodeName });
      countBudgets(pod, entry, 'stranded');
    }
  }

  /** The bounded impact of the nodes added so far. */
  const result = (): WorkloadImpact =>
    summarize(
      dsImpact,
      [...workloads.values()],
      [...budgetsByNamespace.values()].flat().map((b) => b.impact),
      nodesChanged,
    );

  return { addNode, result };
}

/** The accumulator's type. */
export type ImpactTally = ReturnType<typeof createImpactTally>;

/**
 * The impact of changing `nodes` from `before` to `after` on `daemonSets`
 * and on the `pods` bound to those nodes (pods on other nodes are ignored),
 * with the `disruptionBudgets` those pods count against. Nodes whose labels
 * and taints do not change have no impact. A pod evicted by a NoExecute
 * taint it tolerated before (or that was not there) is listed as evicted,
 * with the seconds the taint-eviction controller waits; a pod not evicted
 * whose placement matched before and does not after is listed as stranded,
 * except a pod of a listed DaemonSet (its loss is the DaemonSet's; one a
 * taint evicts is listed both as evicted and as the DaemonSet's loss). Pure;
 * see {@link createImpactTally} to add nodes a page at a time.
 */
export function workloadImpact(input: {
  nodes: readonly NodeChange[];
  daemonSets: readonly DaemonSetInfo[];
  pods: readonly PodInfo[];
  disruptionBudgets?: readonly DisruptionBudgetInfo[];
}): WorkloadImpact {
  const tally = createImpactTally(input.daemonSets, input.disruptionBudgets ?? []);
  const byNode = new Map<string, PodInfo[]>();
  for (const pod of input.pods) {
    const list = byNode.get(pod.nodeName) ?? [];
    list.push(pod);
    byNode.set(pod.nodeName, list);
  }
  for (const node of input.nodes) tally.addNode(node, byNode.get(node.name) ?? []);
  return tally.result();
}
