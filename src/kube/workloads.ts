/**
 * Read-only lists of what a label change moves: DaemonSets, pods bound to
 * nodes, PodDisruptionBudgets, each kept as the small shape the workload
 * impact needs (core/plan/workload-impact.ts), never the whole object. Paged
 * as Nodes are (limit and continue, one rate-limit token a page, 429s
 * retried after Retry-After), so a caller never holds more than a page.
 */
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  type KubeConfig,
  PolicyV1Api,
  type V1DaemonSet,
  type V1LabelSelector,
  type V1NodeSelector,
  type V1Pod,
  type V1PodDisruptionBudget,
  type V1PodSpec,
} from '@kubernetes/client-node';
import type { LabelSelector, NodeSelector, SelectorRequirement } from '../core/plan/node-affinity.ts';
import type { Toleration } from '../core/plan/tolerations.ts';
import type { DaemonSetInfo, DisruptionBudgetInfo, PodInfo, PodPlacement } from '../core/plan/workload-impact.ts';
import { DEFAULT_KUBE_BURST, DEFAULT_KUBE_QPS, limited, ListExpiredError, type NodeRequestObserver } from './nodes.ts';
import { tokenBucket, UNLIMITED, type RateLimiter } from './rate-limit.ts';

/** Objects a page of these lists holds at most when not told. */
export const DEFAULT_WORKLOAD_PAGE = 500;

/** Lists the workloads on nodes, read-only. Errors as {@link NodeApi}'s: the client's `ApiException`, a {@link ListExpiredError}, network errors. */
export interface WorkloadApi {
  /** Every DaemonSet of every namespace, a page at a time. */
  listDaemonSets(options: { pageSize: number }): AsyncIterable<DaemonSetInfo[]>;
  /**
   * Pods bound to a node and not finished (phase neither Succeeded nor
   * Failed), of every namespace, a page at a time; only those bound to
   * `nodeName` when given (a field selector: the server filters).
   */
  listPods(options: { pageSize: number; nodeName?: string }): AsyncIterable<PodInfo[]>;
  /** Every PodDisruptionBudget of every namespace, a page at a time. */
  listDisruptionBudgets(options: { pageSize: number }): AsyncIterable<DisruptionBudgetInfo[]>;
}

/** The requests a {@link WorkloadApi} sends. */
export type WorkloadRequests = {
  apps: Pick<AppsV1Api, 'listDaemonSetForAllNamespaces'>;
  core: Pick<CoreV1Api, 'listPodForAllNamespaces'>;
  policy: Pick<PolicyV1Api, 'listPodDisruptionBudgetForAllNamespaces'>;
};

const requirements = (list: readonly { key: string; operator: string; values?: string[] }[] | undefined): SelectorRequirement[] | undefined =>
  list?.map((r) => ({ key: r.key, operator: r.operator, ...(r.values ? { values: [...r.values] } : {}) }));

function nodeSelector(selector: V1NodeSelector | undefined): NodeSelector | undefined {
  if (!selector) return undefined;
  return {
    nodeSelectorTerms: (selector.nodeSelectorTerms ?? []).map((term) => {
      const matchExpressions = requirements(term.matchExpressions);
      const matchFields = requirements(term.matchFields);
      return { ...(matchExpressions ? { matchExpressions } : {}), ...(matchFields ? { matchFields } : {}) };
    }),
  };
}

/** A pod spec's placement: node selector, required node affinity, tolerations. */
function placement(spec: V1PodSpec | undefined): PodPlacement {
  const affinity = nodeSelector(spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution);
  const tolerations = spec?.tolerations?.map((t): Toleration => ({
    ...(t.key !== undefined ? { key: t.key } : {}),
    ...(t.operator !== undefined ? { operator: t.operator } : {}),
    ...(t.value !== undefined ? { value: t.value } : {}),
    ...(t.effect !== undefined ? { effect: t.effect } : {}),
    ...(t.tolerationSeconds !== undefined && t.tolerationSeconds !== null ? { tolerationSeconds: Number(t.tolerationSeconds) } : {}),
  }));
  return {
    ...(spec?.nodeSelector && Object.keys(spec.nodeSelector).length > 0 ? { nodeSelector: { ...spec.nodeSelector } } : {}),
    ...(affinity ? { affinity } : {}),
    ...(tolerations && tolerations.length > 0 ? { tolerations } : {}),
  };
}

/** A DaemonSet as the impact needs it: its pod template's placement. */
export function toDaemonSetInfo(ds: V1DaemonSet): DaemonSetInfo {
  const spec = ds.spec?.template.spec;
  return {
    namespace: ds.metadata?.namespace ?? '',
    name: ds.metadata?.name ?? '',
    ...placement(spec),
    ...(spec?.nodeName ? { nodeName: spec.nodeName } : {}),
    ...(spec?.hostNetwork ? { hostNetwork: true } : {}),
  };
}

/** A pod as the impact needs it: where it is bound, its labels, controller and placement. */
export function toPodInfo(pod: V1Pod): PodInfo {
  const owner = pod.metadata?.ownerReferences?.find((ref) => ref.controller);
  const labels = pod.metadata?.labels;
  return {
    namespace: pod.metadata?.namespace ?? '',
    name: pod.metadata?.name ?? '',
    nodeName: pod.spec?.nodeName ?? '',
    ...(labels && Object.keys(labels).length > 0 ? { labels: { ...labels } } : {}),
    ...(owner ? { controller: { kind: owner.kind, name: owner.name } } : {}),
    ...(pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? { ready: true } : {}),
    ...(pod.metadata?.deletionTimestamp ? { terminating: true } : {}),
    ...placement(pod.spec),
  };
}

function labelSelector(selector: V1LabelSelector | undefined): LabelSelector | null {
  if (!selector) return null;
  const matchExpressions = requirements(selector.matchExpressions);
  return { ...(selector.matchLabels ? { matchLabels: { ...selector.matchLabels } } : {}), ...(matchExpressions ? { matchExpressions } : {}) };
}

/** A PodDisruptionBudget as the impact needs it: its selector (null when it has none: it selects nothing). */
export function toDisruptionBudgetInfo(pdb: V1PodDisruptionBudget): DisruptionBudgetInfo {
  return { namespace: pdb.metadata?.namespace ?? '', name: pdb.metadata?.name ?? '', selector: labelSelector(pdb.spec?.selector) };
}

/** Field selector of the pods a change can move: bound to a node (that node, when named), not finished. */
export function podFieldSelector(nodeName?: string): string {
  return [nodeName ? `spec.nodeName=${nodeName}` : 'spec.nodeName!=', 'status.phase!=Succeeded', 'status.phase!=Failed'].join(',');
}

type Page<T> = { items: T[]; metadata?: { _continue?: string } };

/**
 * Pages of one LIST, converted: each page one request taking a token; a
 * continue token that expires ends with a retryable {@link ListExpiredError}.
 */
async function* paged<T, R>(
  kind: string,
  pageSize: number,
  limiter: RateLimiter,
  observe: NodeRequestObserver | undefined,
  request: (page: { limit: number; _continue?: string }) => Promise<Page<T>>,
  convert: (item: T) => R,
): AsyncGenerator<R[]> {
  // limit 0 would ask the server for everything in one answer.
  if (!Number.isInteger(pageSize) || pageSize < 1) throw new RangeError(`pageSize must be a whole number ≥ 1, not ${pageSize}`);
  let cont: string | undefined;
  let pages = 0;
  do {
    const token = cont;
    const send = async () => {
      const started = performance.now();
      try {
        const answer = await request({ limit: pageSize, ...(token ? { _continue: token } : {}) });
        observe?.('list', 200, (performance.now() - started) / 1000);
        return answer;
      } catch (err) {
        observe?.('list', err instanceof ApiException ? err.code : 0, (performance.now() - started) / 1000);
        throw err;
      }
    };
    let page: Page<T>;
    try {
      page = await limited(limiter, send);
    } catch (err) {
      if (token && err instanceof ApiException && err.code === 410) throw new ListExpiredError(pages, err, kind);
      throw err;
    }
    pages++;
    yield page.items.map(convert);
    cont = page.metadata?._continue || undefined;
  } while (cont);
}

/** A {@link WorkloadApi} over `requests`, every request (each page, each retry after a 429) taking a token from `limiter` first. */
export function workloadApiOver(requests: WorkloadRequests, limiter: RateLimiter = UNLIMITED, observe?: NodeRequestObserver): WorkloadApi {
  return {
    listDaemonSets: ({ pageSize }) => paged('DaemonSet', pageSize, limiter, observe, (p) => requests.apps.listDaemonSetForAllNamespaces(p), toDaemonSetInfo),
    listPods: ({ pageSize, nodeName }) =>
      paged('Pod', pageSize, limiter, observe, (p) => requests.core.listPodForAllNamespaces({ ...p, fieldSelector: podFieldSelector(nodeName) }), toPodInfo),
    listDisruptionBudgets: ({ pageSize }) =>
      paged('PodDisruptionBudget', pageSize, limiter, observe, (p) => requests.policy.listPodDisruptionBudgetForAllNamespaces(p), toDisruptionBudgetInfo),
  };
}

/**
 * A {@link WorkloadApi} backed by @kubernetes/client-node. Pass the Node
 * API's `limiter` so both share one client-side rate; without one, a
 * limiter of its own at the Node API's default rate.
 */
export function createWorkloadApi(
  kc: KubeConfig,
  limiter: RateLimiter = tokenBucket(DEFAULT_KUBE_QPS, DEFAULT_KUBE_BURST),
  observe?: NodeRequestObserver,
): WorkloadApi {
  return workloadApiOver({ apps: kc.makeApiClient(AppsV1Api), core: kc.makeApiClient(CoreV1Api), policy: kc.makeApiClient(PolicyV1Api) }, limiter, observe);
}
