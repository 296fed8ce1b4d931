/**
 * Kubernetes Events against the real stack: a run over 20 nodes of which 2
 * fail (one absent from the cluster, one whose patch RBAC denies) leaves a
 * LabelsApplied Event naming the run on each written Node, a RelabelFailed
 * Warning on the denied one and none for the absent one; a 500-node run
 * records no more LabelsApplied Events than the per-run cap; a run whose
 * targets are 100 names the cluster lacks followed by 105 nodes it has but
 * the design lacks gives the cap's RelabelFailed Events to nodes that exist
 * and counts the other 5 as suppressed on the worker's /metrics.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventsV1Api, type EventsV1Event } from '@kubernetes/client-node';
import { MAX_EVENTS_PER_RUN } from '../../src/activities/node-events.ts';
import { NODE_EVENTS_NAMESPACE } from '../../src/kube/events.ts';
import { loadKubeConfig } from '../../src/kube/nodes.ts';
import { createWorker } from '../../src/worker/wiring.ts';
import type { ChildProcess } from 'node:child_process';
import { freeLoopbackPort } from '../../stack/processes.ts';
import { eventually } from '../api-support.ts';
import {
  adminCore,
  adminKubeconfigPath,
  createNode,
  kubeconfigPath,
  metricValue,
  serviceAccountKubeconfig,
  startRelabel,
  startWorkerProcess,
  stopChild,
  temporalAddress,
  uniqueSuffix,
  workflowBundle,
} from '../helpers.ts';
import { scaledSite, storeWithSite } from '../site.ts';

/** relabel's Events about the Nodes whose names start with `prefix`. */
async function eventsOf(prefix: string): Promise<EventsV1Event[]> {
  const api = loadKubeConfig(adminKubeconfigPath()).makeApiClient(EventsV1Api);
  const found: EventsV1Event[] = [];
  let cont: string | undefined;
  do {
    const page = await api.listNamespacedEvent({
      namespace: NODE_EVENTS_NAMESPACE,
      labelSelector: 'app.kubernetes.io/managed-by=relabel',
      limit: 500,
      ...(cont ? { _continue: cont } : {}),
    });
    found.push(...page.items.filter((e) => e.regarding?.name?.startsWith(`${prefix}-`)));
    cont = page.metadata?._continue || undefined;
  } while (cont);
  return found;
}

/** A worker in this process on `taskQueue`, with the kubeconfig at `kubeconfig`. */
async function worker(taskQueue: string, kubeconfig: string, storeUrl: string): Promise<{ stop(): Promise<void> }> {
  const w = await createWorker({
    temporalAddress: temporalAddress(),
    namespace: 'default',
    taskQueue,
    kubeconfig,
    storeUrl,
    workflowBundle: await workflowBundle(),
  });
  const running = w.worker.run();
  return {
    async stop() {
      w.worker.shutdown();
      await running;
      await w.close();
    },
  };
}

describe('Kubernetes Events about the nodes a run writes or fails on', () => {
  const prefix = `ev${uniqueSuffix()}`;
  const site = scaledSite(prefix, 20);
  const absent = site.nodes[19] as string;
  const denied = site.nodes[18] as string;
  const patchable = site.nodes.slice(0, 18);
  const dir = mkdtempSync(join(tmpdir(), 'relabel-events-'));
  const uids = new Map<string, string>();
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let account: Awaited<ReturnType<typeof serviceAccountKubeconfig>>;
  let local: { stop(): Promise<void> } | undefined;

  before(async () => {
    const { url, store } = await storeWithSite(site.files);
    await store.close();
    const core = adminCore();
    for (const name of site.nodes.slice(0, 19)) uids.set(name, (await createNode(core, name)).metadata?.uid ?? '');
    // The worker may patch 18 of the 19 nodes present: the 19th answers 403. It may record Events, as deploy/rbac.yaml allows.
    account = await serviceAccountKubeconfig(
      `relabel-events-${uniqueSuffix()}`,
      [
        { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: [''], resources: ['nodes'], verbs: ['patch'], resourceNames: patchable },
        { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
      ],
      dir,
      site.nodes[0] as string,
    );
    relabel = await startRelabel(url, { worker: false });
    local = await worker(relabel.taskQueue, account.path, url);
  });

  after(async () => {
    await local?.stop();
    await relabel?.stop();
    await account?.remove();
  });

  it('gives each written node a LabelsApplied Event naming the run, the denied one a RelabelFailed Warning, the absent one none', async () => {
    const done = await relabel.runs.wait(await relabel.runs.start({ targets: site.nodes }));
    assert.deepEqual(done.result?.counts, { total: 20, success: 18, failure: 2, written: 18 });
    const run = done.result?.run;
    const events = await eventually(
      () => eventsOf(prefix),
      (all) => all.length >= 19,
      20_000,
    );
    const applied = events.filter((e) => e.reason === 'LabelsApplied');
    assert.deepEqual(applied.map((e) => e.regarding?.name).sort(), [...patchable].sort(), 'one LabelsApplied Event per written node');
    for (const e of applied) {
      const name = e.regarding?.name ?? '';
      assert.equal(e.type, 'Normal');
      assert.equal(e.action, 'Relabel');
      assert.equal(e.reportingController, 'relabel');
      assert.match(e.reportingInstance ?? '', /^\d+@/, 'the worker identity');
      assert.deepEqual(
        { kind: e.regarding?.kind, apiVersion: e.regarding?.apiVersion, uid: e.regarding?.uid },
        { kind: 'Node', apiVersion: 'v1', uid: uids.get(name) },
      );
      assert.match(e.note ?? '', new RegExp(`^run ${run} applied revision 1: set \\d+, removed 0`));
      assert.ok(Buffer.byteLength(e.note ?? '') <= 1024);
    }
    const failed = events.filter((e) => e.reason === 'RelabelFailed');
    assert.equal(failed.length, 1, JSON.stringify(failed.map((e) => [e.regarding?.name, e.note])));
    const [warning] = failed;
    assert.equal(warning?.regarding?.name, denied);
    assert.equal(warning?.regarding?.uid, uids.get(denied));
    assert.equal(warning?.type, 'Warning');
    assert.match(warning?.note ?? '', new RegExp(`^run ${run} could not apply revision 1: Forbidden: `));
    assert.ok(!events.some((e) => e.regarding?.name === absent), 'a node not in the cluster gets no Event');
    assert.equal(events.length, 19);
  });
});

describe('the per-run cap on Events', () => {
  const prefix = `evcap${uniqueSuffix()}`;
  const site = scaledSite(prefix, 500);
  let relabel: Awaited<ReturnType<typeof startRelabel>>;

  before(async () => {
    const { url, store } = await storeWithSite(site.files);
    await store.close();
    const core = adminCore();
    for (let i = 0; i < site.nodes.length; i += 20) await Promise.all(site.nodes.slice(i, i + 20).map((name) => createNode(core, name)));
    relabel = await startRelabel(url);
  });

  after(async () => {
    await relabel?.stop();
  });

  it(`a 500-node run records at most ${MAX_EVENTS_PER_RUN} LabelsApplied Events`, async () => {
    const done = await relabel.runs.wait(await relabel.runs.start({ targets: site.nodes }));
    assert.deepEqual(done.result?.counts, { total: 500, success: 500, failure: 0, written: 500 });
    const counted = await eventually(
      () => eventsOf(prefix),
      (all) => all.length >= MAX_EVENTS_PER_RUN,
      30_000,
    );
    // Events are sent without waiting: give any straggler time to land before counting again.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const events = await eventsOf(prefix);
    assert.equal(counted.length, MAX_EVENTS_PER_RUN);
    assert.equal(events.length, MAX_EVENTS_PER_RUN, `no more than ${MAX_EVENTS_PER_RUN} Events for a run of 500 written nodes`);
    assert.ok(events.every((e) => e.reason === 'LabelsApplied' && (e.note ?? '').startsWith(`run ${done.result?.run} applied revision 1`)));
  });
});

describe('RelabelFailed Events for targets not in the design, past the cap', () => {
  const prefix = `evnd${uniqueSuffix()}`;
  const site = scaledSite(prefix, 2);
  // 100 names the cluster does not have come first: they must not spend the cap the real nodes need.
  const ghosts = Array.from({ length: MAX_EVENTS_PER_RUN }, (_, i) => `${prefix}-ghost${String(i).padStart(3, '0')}`);
  const extras = Array.from({ length: MAX_EVENTS_PER_RUN + 5 }, (_, i) => `${prefix}-extra${String(i).padStart(3, '0')}`);
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let worker: ChildProcess | undefined;
  let metrics: string;

  before(async () => {
    const { url, store } = await storeWithSite(site.files);
    await store.close();
    const core = adminCore();
    const present = [...extras, ...site.nodes];
    for (let i = 0; i < present.length; i += 20) await Promise.all(present.slice(i, i + 20).map((name) => createNode(core, name)));
    relabel = await startRelabel(url, { worker: false });
    const port = await freeLoopbackPort();
    metrics = `http://127.0.0.1:${port}/metrics`;
    worker = await startWorkerProcess({
      TEMPORAL_ADDRESS: temporalAddress(),
      KUBECONFIG: kubeconfigPath(),
      RELABEL_STORE_URL: url,
      RELABEL_TASK_QUEUE: relabel.taskQueue,
      RELABEL_METRICS_PORT: String(port),
    });
  });

  after(async () => {
    await stopChild(worker);
    await relabel?.stop();
  });

  it(`gives the ${MAX_EVENTS_PER_RUN} Events to nodes that exist, none to unknown names, and counts the rest as suppressed`, async () => {
    const done = await relabel.runs.wait(await relabel.runs.start({ targets: [...ghosts, ...extras, ...site.nodes] }));
    const failed = ghosts.length + extras.length;
    assert.deepEqual(done.result?.counts, { total: failed + 2, success: 2, failure: failed, written: 2 });
    const counted = await eventually(
      async () => (await fetch(metrics)).text(),
      (t) =>
        metricValue(t, 'relabel_kube_events_total', { reason: 'RelabelFailed' }) >= extras.length &&
        metricValue(t, 'relabel_kube_events_total', { reason: 'LabelsApplied' }) >= 2,
      20_000,
    );
    assert.equal(metricValue(counted, 'relabel_kube_events_total', { reason: 'RelabelFailed', result: 'created' }), MAX_EVENTS_PER_RUN);
    assert.equal(
      metricValue(counted, 'relabel_kube_events_total', { reason: 'RelabelFailed', result: 'suppressed' }),
      5,
      'every Event over the cap is counted',
    );
    assert.equal(
      metricValue(counted, 'relabel_kube_events_total', { reason: 'RelabelFailed' }),
      extras.length,
      'one per node that exists, none for names that do not',
    );
    assert.equal(metricValue(counted, 'relabel_kube_events_total', { reason: 'LabelsApplied', result: 'created' }), 2);

    const events = await eventually(
      () => eventsOf(prefix),
      (all) => all.length >= MAX_EVENTS_PER_RUN + 2,
      20_000,
    );
    const warnings = events.filter((e) => e.reason === 'RelabelFailed');
    assert.equal(warnings.length, MAX_EVENTS_PER_RUN);
    assert.ok(
      warnings.every((e) => extras.includes(e.regarding?.name ?? '')),
      'only nodes the cluster has',
    );
    assert.match(
      warnings[0]?.note ?? '',
      new RegExp(`^run ${done.result?.run} could not apply revision 1: NodeNotInDesign: node ${prefix}-extra\\d{3} is not in the design of revision 1$`),
    );
    assert.ok(!events.some((e) => ghosts.includes(e.regarding?.name ?? '')));
  });
});
