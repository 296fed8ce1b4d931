/**
 * The workload impact of a plan (core/plan/workload-impact.ts) over the
 * cluster as it is: the DaemonSets and PodDisruptionBudgets read whole (a
 * page at a time; the cluster has few), and the pods bound to the nodes the
 * plan changes: one filtered LIST per node for a few nodes, else one paged
 * LIST of every bound pod, keeping only those on changed nodes. Read-only.
 */
import type { NodeChange, PlanImpact, PodInfo } from '../core/plan/workload-impact.ts';
import { createImpactTally } from '../core/plan/workload-impact.ts';
import { httpStatus } from '../kube/errors.ts';
import { DEFAULT_WORKLOAD_PAGE, type WorkloadApi } from '../kube/workloads.ts';

/** Changed nodes up to which their pods are listed one node at a time (the server filters); more list every pod once. */
export const PODS_BY_NODE_THRESHOLD = 20;

/** Every item of a paged LIST. */
export async function all<T>(pages: AsyncIterable<T[]>, onPage?: () => void): Promise<T[]> {
  const items: T[] = [];
  for await (const page of pages) {
    items.push(...page);
    onPage?.();
  }
  return items;
}

/** The pods bound to the changed nodes, by node. */
export async function podsOn(workloads: WorkloadApi, names: ReadonlySet<string>, onPage?: () => void): Promise<Map<string, PodInfo[]>> {
  const byNode = new Map<string, PodInfo[]>();
  const keep = (page: PodInfo[]) => {
    for (const pod of page) {
      if (!names.has(pod.nodeName)) continue;
      const list = byNode.get(pod.nodeName) ?? [];
      list.push(pod);
      byNode.set(pod.nodeName, list);
    }
    onPage?.();
  };
  if (names.size <= PODS_BY_NODE_THRESHOLD) {
    for (const nodeName of names) for await (const page of workloads.listPods({ pageSize: DEFAULT_WORKLOAD_PAGE, nodeName })) keep(page);
  } else {
    for await (const page of workloads.listPods({ pageSize: DEFAULT_WORKLOAD_PAGE })) keep(page);
  }
  return byNode;
}

/**
 * Weighs `changes` against the cluster's DaemonSets, the pods on the
 * changed nodes and the PodDisruptionBudgets. A refusal of the reads (401,
 * 403: the ClusterRole lacks them) makes the impact `unavailable`, saying
 * why, rather than failing the plan; other errors are thrown (the activity
 * is retried). Memory: the DaemonSets, budgets, changes and the pods on
 * changed nodes. `onPage` is called after each page read (to heartbeat).
 */
export async function assessImpact(workloads: WorkloadApi, changes: readonly NodeChange[], onPage?: () => void): Promise<PlanImpact> {
  try {
    const daemonSets = await all(workloads.listDaemonSets({ pageSize: DEFAULT_WORKLOAD_PAGE }), onPage);
    const budgets = await all(workloads.listDisruptionBudgets({ pageSize: DEFAULT_WORKLOAD_PAGE }), onPage);
    const pods = changes.length === 0 ? new Map<string, PodInfo[]>() : await podsOn(workloads, new Set(changes.map((c) => c.name)), onPage);
    const tally = createImpactTally(daemonSets, budgets);
    for (const change of changes) tally.addNode(change, pods.get(change.name) ?? []);
    return tally.result();
  } catch (err) {
    const status = httpStatus(err);
    if (status === 401 || status === 403) {
      return {
        unavailable: `the API server refused to list DaemonSets, Pods or PodDisruptionBudgets (HTTP ${status}): grant relabel get and list on them (deploy/rbac.yaml)`,
      };
    }
    throw err;
  }
}
