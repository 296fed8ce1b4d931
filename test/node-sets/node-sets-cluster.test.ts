/**
 * Node sets on a simulated cluster of this file's own (KWOK nodes, the real
 * controller manager and scheduler), its nodes written by a worker process:
 * - joins: a KWOK node joining with labels both sets select fails
 *   NodeInTwoSets in its join run, naming both, with a RelabelFailed Event,
 *   and is left as it joined; the watcher counts it failed, not unmanaged,
 *   in `relabel join status` and on /metrics; a node joining into one set is
 *   labelled as its member, and one no set selects stays unmanaged;
 * - workload impact: the plan (`relabel plan`, a dry run) of a revision
 *   taking `gpu-driver` from one set's members names the DaemonSet pods they
 *   lose and the Deployment pods left on them no longer matching their node
 *   selector; the real run makes the DaemonSet controller delete exactly
 *   those DaemonSet pods and leaves the Deployment's running;
 * - drift: with the policy's heal, a hand edit of members' owned labels is
 *   found by the drift detection and healed in one run at their revision.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { EventsV1Api, PatchStrategy, PolicyV1Api, setHeaderOptions, type V1Node } from '@kubernetes/client-node';
import { APPLIED_ANNOTATION, OWNED_LABELS_ANNOTATION, UNINITIALIZED_TAINT_KEY } from '../../src/core/plan/constants.ts';
import type { WorkloadImpact } from '../../src/core/plan/workload-impact.ts';
import { createDrift } from '../../src/facade/drift.ts';
import { createJoins } from '../../src/facade/joins.ts';
import { createPlans } from '../../src/facade/plan.ts';
import { NODE_EVENTS_NAMESPACE } from '../../src/kube/events.ts';
import { loadKubeConfig } from '../../src/kube/nodes.ts';
import { createKwokNodes, kwokNode, waitForKwokNodes } from '../../stack/kwok.ts';
import { freeLoopbackPort } from '../../stack/processes.ts';
import { eventually } from '../api-support.ts';
import { exits, metricValue, relabelCli, startRelabel, startWorkerProcess, stopChild, uniqueSuffix } from '../helpers.ts';
import { startSimulatedStack, type SimulatedStack } from '../simulated-stack.ts';
import { nodeSetDoc, prefixedSite, storeWithSite } from '../site.ts';

const MD_KEY = 'cluster.x-k8s.io/deployment-name';
const POOL_KEY = 'karpenter.sh/nodepool';
const GPU = 'gpu-driver';
const NAMESPACE = 'default';
const UNINITIALIZED = { key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' };

const isLabelled = (n: V1Node) =>
  n.metadata?.annotations?.[APPLIED_ANNOTATION] !== undefined && !(n.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT_KEY);

describe('node sets on a simulated cluster: joins, workload impact and drift healing of members', () => {
  const prefix = `nsk${uniqueSuffix()}`;
  const site = `${prefix}-site`;
  const [md, pool] = [`${prefix}-md-0`, `${prefix}-pool`];
  const mdNodes = [0, 1, 2].map((i) => `${prefix}-md-0-x${i}`);
  const poolNodes = [0, 1].map((i) => `${prefix}-pool-y${i}`);
  const [joiner, both, stranger] = [`${prefix}-pool-j`, `${prefix}-both`, `${prefix}-other`];
  /** The site with both sets; `gpuOnMd` false takes `gpu-driver` from md's members; `heal` sets the policy's drift action. */
  const files = (gpuOnMd: boolean, heal = false) => [
    ...prefixedSite(prefix, (doc) => {
      if (heal && doc.schema === 'relabel/LabelPolicy/v1') doc.data.drift = { action: 'heal' };
    }).files,
    {
      source: 'node-sets.yaml',
      text:
        nodeSetDoc('md', {
          selector: { matchLabels: { [MD_KEY]: md } },
          metadata: { owner_data: { 'workload-class': 'web', ...(gpuOnMd ? { [GPU]: 'enabled' } : {}) } },
        }) +
        nodeSetDoc('pool', {
          selector: { matchExpressions: [{ key: POOL_KEY, operator: 'In', values: [pool] }] },
          metadata: { owner_data: { 'workload-class': 'batch', [GPU]: 'enabled' } },
        }),
    },
  ];
  let sim: SimulatedStack;
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let worker: ChildProcess | undefined;
  let storeUrl: string;
  let metricsUrl: string;
  const env = () => ({ RELABEL_STORE_URL: storeUrl, RELABEL_TASK_QUEUE: relabel.taskQueue });
  const read = (name: string) => sim.core.readNode({ name });
  const commit = async (text: string, heal = false) => {
    await relabel.store.revisions.stage('site', files(false, heal));
    return (await relabel.store.revisions.commit({ message: text })).id;
  };

  before(async () => {
    sim = await startSimulatedStack('node-sets', { nodes: 0, nodePrefix: `${prefix}-k`, heartbeatSeconds: 5, leaseSeconds: 20 });
    ({ url: storeUrl } = await storeWithSite(files(true)));
    relabel = await startRelabel(storeUrl, { worker: false });
    const port = await freeLoopbackPort();
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    worker = await startWorkerProcess({ ...env(), RELABEL_METRICS_PORT: String(port) });
  });
  after(async () => {
    await stopChild(worker);
    await relabel?.stop();
    await sim?.stop();
  });

  it('a KWOK node joining into both sets fails NodeInTwoSets naming them and is left alone, counted failed; one joining into one set is labelled', async () => {
    const joins = createJoins({ client: relabel.client, store: relabel.store, designs: relabel.designs, taskQueue: relabel.taskQueue, namespace: NAMESPACE });
    const status = () => joins.status(site);
    const joining = (name: string, labels: Record<string, string>) => {
      const node = kwokNode(name, labels);
      return sim.core.createNode({ body: { ...node, spec: { taints: [UNINITIALIZED] } } });
    };
    try {
      await joins.enable({ site, by: 'test', watch: { batchDelayMs: 50 } });
      await eventually(status, (s) => s.enabled && s.watcher !== undefined, 60_000);
      await joining(both, { [MD_KEY]: md, [POOL_KEY]: pool });
      const failed = await eventually(status, (s) => (s.watcher?.failed ?? 0) >= 1 && s.watcher?.lastRun?.status !== undefined, 60_000, 50);
      assert.deepEqual(
        { runs: failed.watcher?.runs, dispatched: failed.watcher?.dispatched, failed: failed.watcher?.failed, unmanaged: failed.watcher?.unmanaged },
        { runs: 1, dispatched: 1, failed: 1, unmanaged: 0 },
      );
      const run = failed.watcher?.lastRun;
      assert.ok(run);
      assert.equal(run.status, 'failure');
      const report = await relabel.runs.status(run.workflowId, run.runId);
      assert.equal(report.startedVia, 'join');
      assert.deepEqual(
        report.result?.failures.map((f) => [f.node, f.error.type]),
        [[both, 'NodeInTwoSets']],
      );
      assert.match(report.result?.failures[0]?.error.message ?? '', /matched by 2 node sets \(md, pool\)/);
      // As `relabel status` shows it: the node's result with its failure.
      const shown = exits(await relabelCli(['status', run.workflowId, '--run-id', run.runId], env()), 5).stdout;
      assert.match(shown, new RegExp(`${both}\\s+failure(\\s+-){3}\\s+NodeInTwoSets: .*\\(md, pool\\)`));
      const events = loadKubeConfig(sim.info.adminKubeconfig).makeApiClient(EventsV1Api);
      const failedEvent = await eventually(
        async () =>
          (await events.listNamespacedEvent({ namespace: NODE_EVENTS_NAMESPACE, labelSelector: 'app.kubernetes.io/managed-by=relabel' })).items.filter(
            (e) => e.regarding?.name === both,
          ),
        (items) => items.length > 0,
        10_000,
      );
      assert.deepEqual(
        failedEvent.map((e) => e.reason),
        ['RelabelFailed'],
      );
      assert.match(failedEvent[0]?.note ?? '', /NodeInTwoSets: .*\(md, pool\)/);

      await joining(joiner, { [POOL_KEY]: pool });
      await joining(stranger, { [POOL_KEY]: `${prefix}-other` });
      const member = await eventually(() => read(joiner), isLabelled, 60_000, 50);
      assert.deepEqual([member.metadata?.labels?.['workload-class'], member.metadata?.labels?.[GPU]], ['batch', 'enabled']);
      const later = await eventually(status, (s) => (s.watcher?.unmanaged ?? 0) >= 1 && (s.watcher?.labelled ?? 0) >= 1, 30_000, 50);
      assert.deepEqual([later.watcher?.failed, later.watcher?.unmanaged, later.watcher?.labelled], [1, 1, 1]);
      const text = exits(await relabelCli(['join', 'status', '--site', site], env()), 0).stdout;
      assert.match(text, /seen labelled, 1 failed/);
      assert.match(text, /unmanaged\s+1 joining node\(s\) neither in the design nor in a node set/);
      const metrics = await (await fetch(metricsUrl)).text();
      assert.equal(metricValue(metrics, 'relabel_join_failed_nodes_total', { site }), 1);
      assert.equal(metricValue(metrics, 'relabel_join_unmanaged_nodes_total', { site }), 1);

      const left = await read(both);
      assert.equal(left.metadata?.annotations?.[APPLIED_ANNOTATION], undefined, 'the node in both sets is not written');
      assert.equal(left.metadata?.annotations?.[OWNED_LABELS_ANNOTATION], undefined);
      assert.equal(left.metadata?.labels?.['workload-class'], undefined);
      assert.ok(
        (left.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT_KEY),
        'it keeps its taint',
      );
    } finally {
      await joins.disable({ site }).catch(() => undefined);
    }
    // The runs of the sets below are about the members only.
    await sim.core.deleteNode({ name: both });
  });
  /** The pods of `app` as `node pod uid`, sorted, once every one runs and `ok` says their nodes (sorted) are right. */
  const podsOf = async (app: string, ok: (nodes: string[]) => boolean, timeoutMs = 90_000) => {
    const pods = await eventually(
      async () => (await sim.core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: `app=${app}` })).items,
      (items) => items.every((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp) && ok(items.map((p) => p.spec?.nodeName ?? '').sort()),
      timeoutMs,
      250,
    );
    return pods.map((p) => `${p.spec?.nodeName} ${p.metadata?.name} ${p.metadata?.uid}`).sort();
  };
  const nodeOf = (pod: string) => pod.split(' ')[0] as string;

  it('the plan of a revision taking gpu-driver from md’s members names the pods they lose; the run makes the controllers do exactly that', async () => {
    const admin = loadKubeConfig(sim.info.adminKubeconfig);
    await createKwokNodes(admin, mdNodes, { [MD_KEY]: md });
    await createKwokNodes(admin, poolNodes, { [POOL_KEY]: pool });
    const members = [...mdNodes, ...poolNodes, joiner].sort();
    const pools = [...poolNodes, joiner].sort();
    await waitForKwokNodes(admin, members, 60_000);
    const labelled = await relabel.runs.wait(await relabel.runs.start({ targets: undefined, select: { nodeSets: ['md', 'pool'] } }));
    assert.equal(labelled.result?.status, 'success', JSON.stringify(labelled.result));
    assert.deepEqual(labelled.result?.counts, { total: 6, success: 6, failure: 0, written: 5 }, 'the joined member is as desired already');

    const [ds, web] = [`gpu-${uniqueSuffix()}`, `web-${uniqueSuffix()}`];
    const template = (app: string, nodeSelector: Record<string, string>) => ({
      metadata: { labels: { app } },
      spec: { nodeSelector, containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
    });
    const selector = (app: string) => ({ matchLabels: { app } });
    await sim.apps.createNamespacedDaemonSet({
      namespace: NAMESPACE,
      body: { metadata: { name: ds }, spec: { selector: selector(ds), template: template(ds, { [GPU]: 'enabled' }) } },
    });
    // The Deployment needs gpu-driver on md's members: every one of its pods is there.
    await sim.apps.createNamespacedDeployment({
      namespace: NAMESPACE,
      body: { metadata: { name: web }, spec: { replicas: 3, selector: selector(web), template: template(web, { [GPU]: 'enabled', [MD_KEY]: md }) } },
    });
    await admin.makeApiClient(PolicyV1Api).createNamespacedPodDisruptionBudget({
      namespace: NAMESPACE,
      body: { metadata: { name: web }, spec: { minAvailable: 2, selector: selector(web) } },
    });
    const dsBefore = await podsOf(ds, (nodes) => JSON.stringify(nodes) === JSON.stringify(members));
    const webBefore = await podsOf(web, (nodes) => nodes.length === 3 && nodes.every((n) => mdNodes.includes(n)));

    assert.equal(await commit('gpu-driver leaves the members of md'), 2);
    const plan = await createPlans(relabel.runs).plan({ targets: undefined, select: { nodeSets: ['md', 'pool'] } });
    assert.equal(plan.revision, 2);
    assert.ok(plan.impact && !('unavailable' in plan.impact), `the plan weighs its workload impact: ${JSON.stringify(plan.impact)}`);
    const impact: WorkloadImpact = plan.impact;
    assert.equal(impact.totals.nodesChanged, mdNodes.length, 'only md’s members change');
    assert.deepEqual(
      impact.daemonSets.filter((d) => d.name === ds).map((d) => ({ gains: d.gains.count, loses: [...d.loses.sample].sort() })),
      [{ gains: 0, loses: mdNodes }],
    );
    const stranded = impact.workloads.find((w) => w.workload.startsWith(`ReplicaSet/${web}-`));
    assert.ok(stranded, JSON.stringify(impact.workloads));
    assert.equal(stranded.evicted.count, 0);
    assert.deepEqual(
      stranded.stranded.sample.map((p) => `${p.node} ${p.pod}`).sort(),
      webBefore.map((p) => p.split(' ').slice(0, 2).join(' ')),
    );
    assert.deepEqual(stranded.disruptionBudgets, [web]);
    // As `relabel plan` prints it, and as the dry run of one set reports it.
    const printed = exits(await relabelCli(['plan', '--node-set', 'md,pool'], env(), { timeoutMs: 120_000 }), 0).stdout;
    assert.match(printed, /workload impact on 3 node\(s\) whose labels or taints change: DaemonSet pods \+0 -3 .*; 3 pod\(s\) no longer matching/);
    assert.match(printed, new RegExp(`default/ReplicaSet/${web}-\\S+\\s+0\\s+3\\s`));
    const dry = await relabel.runs.wait(await relabel.runs.start({ targets: undefined, select: { nodeSets: ['md'] }, dryRun: true }));
    const dryImpact = dry.result?.impact;
    assert.ok(dryImpact && !('unavailable' in dryImpact), JSON.stringify(dry.result));
    assert.deepEqual([dryImpact.totals.podsLost, dryImpact.totals.podsStranded, dryImpact.totals.disruptionBudgets], [3, 3, 1]);
    assert.deepEqual(await podsOf(ds, () => true, 10_000), dsBefore, 'planning deletes no pod');

    const run = await relabel.runs.wait(await relabel.runs.start({ targets: undefined, select: { nodeSets: ['md', 'pool'] } }));
    assert.equal(run.result?.status, 'success', JSON.stringify(run.result));
    assert.equal(run.result?.counts.written, mdNodes.length);
    const dsAfter = await podsOf(ds, (nodes) => JSON.stringify(nodes) === JSON.stringify(pools));
    assert.deepEqual(
      dsAfter,
      dsBefore.filter((p) => pools.includes(nodeOf(p))),
      'the DaemonSet controller deletes its pods on exactly md’s members, and keeps the others',
    );
    assert.deepEqual(await podsOf(web, () => true, 10_000), webBefore, 'the Deployment’s pods stay where they run');
  });

  it('with the policy’s heal, hand edits of members’ owned labels are found and healed, each member at the revision it carries', async () => {
    assert.equal(await commit('drift: heal', true), 3);
    // md's members carry revision 2 (it took gpu-driver from them); pool's, revision 1 (it changed nothing of theirs).
    const [m, p] = [mdNodes[0] as string, poolNodes[0] as string];
    const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    await sim.core.patchNode({ name: m, body: { metadata: { labels: { 'workload-class': 'other' } } } }, merge);
    await sim.core.patchNode({ name: p, body: { metadata: { labels: { [GPU]: null } } } }, merge);
    const drift = createDrift({ client: relabel.client, store: relabel.store, designs: relabel.designs, taskQueue: relabel.taskQueue, namespace: NAMESPACE });
    const result = await drift.detect({ site });
    assert.equal(result.action, 'heal');
    assert.deepEqual([result.counts.drifted, result.counts.in_sync], [2, 4], JSON.stringify(result.counts));
    assert.deepEqual(result.groups, [
      { revision: 1, nodes: 1 },
      { revision: 2, nodes: 1 },
    ]);
    const runs = result.heal?.runs ?? [];
    assert.deepEqual(
      runs.map((r) => [r.revision, r.nodes, r.status, r.written]),
      [
        [1, 1, 'success', 1],
        [2, 1, 'success', 1],
      ],
      JSON.stringify(result.heal),
    );
    const healed = async (run: number) => (await relabel.runs.nodes(run, { limit: 10 })).items.map((o) => [o.node, o.set]);
    assert.deepEqual(await healed(runs[0]?.run ?? 0), [[p, { [GPU]: 'enabled' }]]);
    assert.deepEqual(await healed(runs[1]?.run ?? 0), [[m, { 'workload-class': 'web' }]]);
    assert.equal((await read(m)).metadata?.labels?.['workload-class'], 'web');
    assert.equal((await read(p)).metadata?.labels?.[GPU], 'enabled');
    const again = await drift.detect({ site });
    assert.deepEqual([again.counts.drifted, again.heal], [0, undefined]);
  });
});
