import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException, type V1Pod } from '@kubernetes/client-node';
import { ListExpiredError } from './nodes.ts';
import type { RateLimiter } from './rate-limit.ts';
import { podFieldSelector, toDaemonSetInfo, toDisruptionBudgetInfo, toPodInfo, workloadApiOver, type WorkloadRequests } from './workloads.ts';

const pod = (name: string): V1Pod => ({ metadata: { name, namespace: 'ns' }, spec: { nodeName: 'n1', containers: [] } });

/** Requests over fixed lists, `pageSize` at a time, recording what each asked; `fail` may answer a request with an error. */
function fakeRequests(names: string[], fail?: (request: { _continue?: string }) => ApiException<unknown> | undefined) {
  const asked: { limit?: number; _continue?: string; fieldSelector?: string }[] = [];
  const page = async <T>(request: { limit?: number; _continue?: string; fieldSelector?: string }, make: (name: string) => T) => {
    asked.push(request);
    const error = fail?.(request);
    if (error) throw error;
    const start = Number(request._continue ?? 0);
    const end = start + (request.limit ?? names.length);
    return { items: names.slice(start, end).map(make), metadata: end < names.length ? { _continue: String(end) } : {} };
  };
  const requests = {
    apps: { listDaemonSetForAllNamespaces: (r: object) => page(r, (name) => ({ metadata: { name, namespace: 'ns' } })) },
    core: { listPodForAllNamespaces: (r: object) => page(r, pod) },
    policy: { listPodDisruptionBudgetForAllNamespaces: (r: object) => page(r, (name) => ({ metadata: { name, namespace: 'ns' }, spec: {} })) },
  } as unknown as WorkloadRequests;
  return { requests, asked };
}

describe('workload lists', () => {
  it('page with limit and continue, one token a page, pods filtered by the server', async () => {
    const { requests, asked } = fakeRequests(['a', 'b', 'c']);
    const limiter: RateLimiter & { taken: number } = { taken: 0, acquire: async () => void limiter.taken++ };
    const api = workloadApiOver(requests, limiter);
    const pages: string[][] = [];
    for await (const page of api.listPods({ pageSize: 2, nodeName: 'n1' })) pages.push(page.map((p) => p.name));
    assert.deepEqual(pages, [['a', 'b'], ['c']]);
    assert.equal(limiter.taken, 2);
    assert.deepEqual(asked[1], { limit: 2, _continue: '2', fieldSelector: 'spec.nodeName=n1,status.phase!=Succeeded,status.phase!=Failed' });
    assert.equal(podFieldSelector(), 'spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed');
    const sets: string[] = [];
    for await (const page of api.listDaemonSets({ pageSize: 5 })) sets.push(...page.map((d) => d.name));
    assert.deepEqual(sets, ['a', 'b', 'c']);
    const budgets: (string | null | undefined)[] = [];
    for await (const page of api.listDisruptionBudgets({ pageSize: 1 })) budgets.push(...page.map((b) => `${b.name}:${JSON.stringify(b.selector)}`));
    assert.deepEqual(budgets, ['a:null', 'b:null', 'c:null']);
  });

  it('end with a retryable ListExpiredError naming the kind when the continue token expires', async () => {
    const gone = new ApiException(410, 'Gone', '', {});
    const { requests } = fakeRequests(['a', 'b', 'c'], (r) => (r._continue ? gone : undefined));
    await assert.rejects(
      (async () => {
        for await (const _page of workloadApiOver(requests).listPods({ pageSize: 2 }));
      })(),
      (err: unknown) => err instanceof ListExpiredError && err.pages === 1 && /the Pod list expired/.test(err.message),
    );
  });

  it('refuse a page size that would not bound the page', async () => {
    const { requests, asked } = fakeRequests(['a']);
    await assert.rejects(workloadApiOver(requests).listDaemonSets({ pageSize: 0 })[Symbol.asyncIterator]().next(), RangeError);
    assert.equal(asked.length, 0);
  });
});

describe('conversions keep what the impact needs', () => {
  it('a pod: controller, labels, selector, required affinity, tolerations', () => {
    const info = toPodInfo({
      metadata: {
        name: 'p',
        namespace: 'ns',
        labels: { app: 'web' },
        ownerReferences: [
          { apiVersion: 'v1', kind: 'Other', name: 'x', uid: '1' },
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-5d', uid: '2', controller: true },
        ],
      },
      spec: {
        nodeName: 'n1',
        containers: [],
        nodeSelector: { rack: 'r1' },
        affinity: {
          nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }] } },
        },
        tolerations: [{ key: 'maint', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }],
      },
    });
    assert.deepEqual(info, {
      namespace: 'ns',
      name: 'p',
      nodeName: 'n1',
      labels: { app: 'web' },
      controller: { kind: 'ReplicaSet', name: 'web-5d' },
      nodeSelector: { rack: 'r1' },
      affinity: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }] },
      tolerations: [{ key: 'maint', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }],
    });
  });

  it("a DaemonSet: its template's placement, node name and host network", () => {
    const info = toDaemonSetInfo({
      metadata: { name: 'osd', namespace: 'ceph' },
      spec: { selector: {}, template: { spec: { containers: [], nodeSelector: { 'ceph-osd': 'enabled' }, hostNetwork: true, nodeName: 'n1' } } },
    });
    assert.deepEqual(info, { namespace: 'ceph', name: 'osd', nodeSelector: { 'ceph-osd': 'enabled' }, nodeName: 'n1', hostNetwork: true });
  });

  it('a PodDisruptionBudget: an absent selector is null (selects nothing), an empty one is empty (selects all)', () => {
    assert.equal(toDisruptionBudgetInfo({ metadata: { name: 'b', namespace: 'ns' }, spec: {} }).selector, null);
    assert.deepEqual(toDisruptionBudgetInfo({ metadata: { name: 'b', namespace: 'ns' }, spec: { selector: {} } }).selector, {});
    assert.deepEqual(
      toDisruptionBudgetInfo({
        metadata: { name: 'b', namespace: 'ns' },
        spec: { selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] } },
      }).selector,
      { matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] },
    );
  });
});
