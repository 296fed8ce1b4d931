/**
 * `written` right across a lost completion, against the real kube-apiserver,
 * a real PostgreSQL store and (through a worker) the real Temporal server: an
 * attempt patches a node, then its completion is lost (the response never
 * arrives, the worker dies before its result is recorded, or after). The
 * attempt that runs next finds nothing left to change and the node carrying
 * its own run's applied-run record: it counts the node written, with the
 * detail of the write, and the API server counted exactly that one write.
 */
import { formatTaint } from '../../src/core/plan/taints.ts';
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities } from '../../src/activities/index.ts';
import { applyNodeLabels, DEFAULT_NODE_LABELS_POLICY } from '../../src/api/promenade/node-labels.ts';
import { APPLIED_ANNOTATION, OWNED_LABELS_ANNOTATION } from '../../src/core/plan/constants.ts';
import { validateSite, type Design } from '../../src/core/site/validate-site.ts';
import { createNodeApi, loadKubeConfig, type NodeApi } from '../../src/kube/nodes.ts';
import { startPostgres, type PostgresServer } from '../../stack/postgres.ts';
import { openStore } from '../../src/store/open-store.ts';
import type { Store } from '../../src/store/store.ts';
import type { NodeResultDetail } from '../../src/store/runs/run-store.ts';
import {
  adminCore,
  adminKubeconfigPath,
  createNode,
  kubeconfigPath,
  nodePatchCount,
  startRelabel,
  temporalAddress,
  uniqueSuffix,
  workflowBundle,
} from '../helpers.ts';
import { prefixedSite } from '../site.ts';

/** An owned label the design no longer asks for: every prepared node loses it. */
const RETIRED = 'relabel-test.example.com/retired';
const STALE_VALUE = 'stale-value';

const quiet: Logger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

/** Runs `fn` as one attempt of the `applyNodePlan` local activity: in the SDK's mock activity context, its info saying `attempt`. */
function asAttempt<T>(attempt: number, fn: () => Promise<T>): Promise<T> {
  return new MockActivityEnvironment({ attempt, isLocal: true, activityType: 'applyNodePlan' }, { logger: quiet }).run(fn);
}

/** The relabel kubeconfig's node API, whose patches of the named nodes land but answer with a reset connection, once each. */
function losingResponses(nodes: NodeApi, lose: Set<string>): NodeApi {
  return {
    readNode: (name) => nodes.readNode(name),
    listNodes: (options) => nodes.listNodes(options),
    async patchNode(name, patch) {
      const stored = await nodes.patchNode(name, patch);
      if (!lose.delete(name)) return stored;
      throw Object.assign(new Error(`read ECONNRESET (the patch of ${name} landed; its response was lost)`), { code: 'ECONNRESET' });
    },
  };
}

describe('written across a lost completion', () => {
  const prefix = `wr${uniqueSuffix()}`;
  const site = prefixedSite(prefix);
  let design: Design;
  let pgDir: string;
  let postgres: PostgresServer;
  let store: Store;
  let storeUrl: string;
  const revision = 1;
  const core = adminCore();
  const nodes = createNodeApi(loadKubeConfig(kubeconfigPath()));
  const node = (i: number) => site.nodes[i] as string;

  /**
   * Each node starts with a stale value (set with `was`), a right but unowned label (adopted) and an owned label no longer desired (removed).
   * That owned label is the node's only one, so removing it is a mass removal by the brake's measure: runs here allow it.
   */
  function desiredOf(name: string): { desired: Record<string, string>; stale: string; adopted: string } {
    const desired = design.nodes[name]?.labels ?? {};
    const [stale, adopted] = Object.keys(desired).sort();
    assert.ok(stale && adopted, `${name} has at least two desired labels`);
    return { desired, stale, adopted };
  }

  async function prepare(name: string): Promise<void> {
    const { desired, stale, adopted } = desiredOf(name);
    await createNode(core, name, { [stale]: STALE_VALUE, [adopted]: desired[adopted] ?? '', [RETIRED]: 'x' });
    await createNodeApi(loadKubeConfig(adminKubeconfigPath())).patchNode(name, { metadata: { annotations: { [OWNED_LABELS_ANNOTATION]: RETIRED } } });
  }

  /** What the one write to a prepared node changes, as a run records it. */
  function writtenDetail(name: string): NodeResultDetail {
    const { desired, stale, adopted } = desiredOf(name);
    const set = Object.fromEntries(Object.entries(desired).filter(([key]) => key !== adopted));
    // The sample site's storage nodes carry annotations and a taint of the documents' too.
    const annotations = Object.keys(design.nodes[name]?.annotations ?? {});
    const taints = (design.nodes[name]?.taints ?? []).map(formatTaint);
    return {
      set,
      was: { [stale]: STALE_VALUE },
      removed: [RETIRED],
      adopted: [adopted],
      unchanged: 0,
      taintLifted: false,
      attempts: 1,
      ...(annotations.length > 0 ? { annotations: { set: annotations, removed: [] } } : {}),
      ...(taints.length > 0 ? { taints: { added: taints, removed: [] } } : {}),
    };
  }

  async function annotationsOf(name: string): Promise<Record<string, string>> {
    return (await core.readNode({ name })).metadata?.annotations ?? {};
  }

  /** A run of one node in the store, planned as the workflow's planRun activity plans it: the node pending with its observed state. */
  async function plannedRun(name: string): Promise<number> {
    const { id } = await store.runs.create({ targets: [name], revision });
    const plan = await asAttempt(1, () => createActivities({ nodes, store }).planRun({ run: id, revision, dryRun: false, allowMassRemoval: true }));
    assert.deepEqual([plan.toChange, plan.counts.failure], [1, 0]);
    assert.notEqual(await store.runs.observedState(id, name), null);
    return id;
  }

  /** Attempt `attempt` of applyNodePlan whose patch lands but whose result never reaches the store (the worker died in between). */
  async function attemptDyingBeforeItsResult(run: number, name: string): Promise<void> {
    const dying = createActivities({
      nodes,
      store,
      results: {
        record: async () => {
          throw new Error('worker killed before the result was committed');
        },
      },
    });
    await assert.rejects(
      asAttempt(1, () => dying.applyNodePlan({ run, node: name, revision })),
      /worker killed/,
    );
    assert.match(
      (await annotationsOf(name))[APPLIED_ANNOTATION] ?? '',
      new RegExp(`^revision=${revision},run=${run},site=`),
      'the patch landed with its applied-run record',
    );
    assert.deepEqual((await store.runs.node(run, name))?.status, 'pending', 'no result recorded');
  }

  // A write refused as stale: its guard's test failed (422), or a resourceVersion moved (409).
  const patches = async () => ({
    landed: await nodePatchCount({ code: 200 }),
    conflicts: (await nodePatchCount({ code: 422 })) + (await nodePatchCount({ code: 409 })),
  });

  before(async () => {
    const validation = validateSite(site.files);
    assert.ok(validation.ok);
    design = validation.design;
    pgDir = mkdtempSync(join(tmpdir(), 'relabel-written-pg-'));
    postgres = await startPostgres({ dir: pgDir });
    storeUrl = postgres.url;
    store = await openStore(storeUrl);
    await store.revisions.stage('site', site.files);
    const committed = await store.revisions.commit({ message: 'written test site' });
    assert.equal(committed.id, revision);
    await store.revisions.tag(revision, 'site-action-success');
    for (const name of site.nodes.slice(0, 9)) await prepare(name);
  });
  after(async () => {
    await store?.close();
    await postgres?.stop();
    if (pgDir) rmSync(pgDir, { recursive: true, force: true });
  });

  describe('one activity attempt after another, as Temporal retries or re-executes it', () => {
    it('a retried attempt (attempt 2) after a patch whose result was never recorded: written, detail recovered from the observed state', async () => {
      const name = node(4);
      const run = await plannedRun(name);
      const before = await patches();
      await attemptDyingBeforeItsResult(run, name);
      const result = await asAttempt(2, () => createActivities({ nodes, store }).applyNodePlan({ run, node: name, revision }));
      const expected = writtenDetail(name);
      assert.deepEqual(result, {
        node: name,
        written: true,
        counts: { set: Object.keys(expected.set ?? {}).length, removed: 1, adopted: 1, unchanged: 0 },
        taintLifted: false,
        attempts: 1,
      });
      assert.deepEqual(await store.runs.node(run, name), { seq: 0, node: name, status: 'success', written: true, detail: { ...expected, recovered: true } });
      assert.equal(await store.runs.observedState(run, name), null, 'the observed state is released');
      const after = await patches();
      assert.deepEqual([after.landed - before.landed, after.conflicts - before.conflicts], [1, 0], 'the node was written once');
    });

    it('a re-execution after a crash (attempt 1 again): its stale patch fails the guard test, and it counts the node written, detail recovered', async () => {
      const name = node(5);
      const run = await plannedRun(name);
      const before = await patches();
      await attemptDyingBeforeItsResult(run, name);
      const result = await asAttempt(1, () => createActivities({ nodes, store }).applyNodePlan({ run, node: name, revision }));
      assert.deepEqual([result.written, result.attempts, result.counts.removed, result.counts.adopted], [true, 2, 1, 1]);
      assert.deepEqual(await store.runs.node(run, name), {
        seq: 0,
        node: name,
        status: 'success',
        written: true,
        detail: { ...writtenDetail(name), attempts: 2, recovered: true },
      });
      const after = await patches();
      assert.deepEqual([after.landed - before.landed, after.conflicts - before.conflicts], [1, 1], 'one write landed; the re-execution’s patch was refused');
    });

    it('a re-execution after the result was recorded: written, and the recorded detail kept', async () => {
      const name = node(6);
      const run = await plannedRun(name);
      const before = await patches();
      const first = await asAttempt(1, () => createActivities({ nodes, store }).applyNodePlan({ run, node: name, revision }));
      assert.equal(first.written, true);
      const recorded = await store.runs.node(run, name);
      assert.deepEqual(recorded, { seq: 0, node: name, status: 'success', written: true, detail: writtenDetail(name) });
      const again = await asAttempt(1, () => createActivities({ nodes, store }).applyNodePlan({ run, node: name, revision }));
      assert.deepEqual(again, first);
      assert.deepEqual(await store.runs.node(run, name), recorded);
      const after = await patches();
      assert.deepEqual([after.landed - before.landed, after.conflicts - before.conflicts], [1, 0]);
    });

    it('another run finds nothing to change on a node a run wrote: written false, its record untouched', async () => {
      const name = node(6);
      const record = (await annotationsOf(name))[APPLIED_ANNOTATION];
      const { id } = await store.runs.create({ targets: [name], revision });
      const plan = await asAttempt(1, () => createActivities({ nodes, store }).planRun({ run: id, revision, dryRun: false }));
      assert.deepEqual([plan.toChange, plan.counts.success], [0, 1], 'settled by the bulk plan: no child');
      // Even applied directly (as a stale pending row would be), nothing is written and nothing recovered.
      const before = await patches();
      const result = await asAttempt(2, () => createActivities({ nodes, store }).applyNodePlan({ run: id, node: name, revision }));
      assert.deepEqual([result.written, result.counts.set], [false, 0]);
      assert.deepEqual(await patches(), before);
      assert.equal((await store.runs.node(id, name))?.detail?.recovered, undefined);
      assert.equal((await annotationsOf(name))[APPLIED_ANNOTATION], record);
    });
  });

  describe('through a worker on the real Temporal server', () => {
    let relabel: Awaited<ReturnType<typeof startRelabel>>;
    let worker: Worker;
    let connection: NativeConnection;
    let running: Promise<void>;
    const lose = new Set<string>();

    before(async () => {
      relabel = await startRelabel(storeUrl, { worker: false });
      connection = await NativeConnection.connect({ address: temporalAddress() });
      worker = await Worker.create({
        connection,
        namespace: 'default',
        taskQueue: relabel.taskQueue,
        workflowBundle: await workflowBundle(),
        activities: createActivities({ nodes: losingResponses(nodes, lose), store: relabel.store }),
      });
      running = worker.run();
    });
    after(async () => {
      worker?.shutdown();
      await running;
      await connection?.close();
      await relabel?.stop();
    });

    it('a patch whose response is lost is retried; the retry counts the node written, with the detail of its write', async () => {
      const targets = [node(0), node(1), node(2), node(3)];
      lose.add(node(0)).add(node(1));
      const before = await patches();
      const done = await relabel.runs.wait(await relabel.runs.start({ targets, allowMassRemoval: true }));
      assert.equal(done.result?.status, 'success', JSON.stringify(done.result?.failures));
      assert.equal(lose.size, 0, 'both responses were lost');
      const after = await patches();
      assert.deepEqual([after.landed - before.landed, after.conflicts - before.conflicts], [4, 0], 'one write per node, no conflict');
      assert.equal(done.result?.counts.written, 4, 'written equals the writes the API server counted');
      assert.ok(done.result);
      const { run } = done.result;
      assert.equal((await relabel.store.runs.counts(run)).written, 4);
      for (const name of targets) {
        const row = await relabel.store.runs.node(run, name);
        const recovered = name === node(0) || name === node(1);
        assert.deepEqual(
          row,
          {
            seq: targets.indexOf(name),
            node: name,
            status: 'success',
            written: true,
            detail: { ...writtenDetail(name), ...(recovered ? { recovered: true } : {}) },
          },
          name,
        );
        assert.match((await annotationsOf(name))[APPLIED_ANNOTATION] ?? '', new RegExp(`^revision=${revision},run=${run},site=`));
      }
    });

    it('a later run with nothing to change writes nothing and reports written false, whichever run the nodes name', async () => {
      const targets = site.nodes.slice(0, 7);
      const named = await Promise.all(targets.map(async (name) => (await annotationsOf(name))[APPLIED_ANNOTATION]));
      assert.ok(
        named.every((value) => value !== undefined),
        'every node carries an earlier run’s record (the tests above wrote 4 to 6)',
      );
      const before = await patches();
      const done = await relabel.runs.wait(await relabel.runs.start({ targets }));
      assert.equal(done.result?.status, 'success');
      assert.deepEqual(done.result?.counts, { total: 7, success: 7, failure: 0, written: 0 });
      assert.deepEqual(await patches(), before, 'no PATCH at all');
      assert.ok(done.result);
      const { run } = done.result;
      for (const name of targets) {
        const row = await relabel.store.runs.node(run, name);
        assert.deepEqual([row?.status, row?.written], ['success', false], name);
      }
      assert.deepEqual(
        await Promise.all(targets.map(async (name) => (await annotationsOf(name))[APPLIED_ANNOTATION])),
        named,
        'the records are left as they were',
      );
    });
  });

  it('the node-labels API, which applies no run, drops a run’s record when it writes and leaves it when it does not', async () => {
    const name = node(8);
    const run = await plannedRun(name);
    await asAttempt(1, () => createActivities({ nodes, store }).applyNodePlan({ run, node: name, revision }));
    const desired = design.nodes[name]?.labels ?? {};
    const unchanged = await applyNodeLabels(nodes, name, desired, DEFAULT_NODE_LABELS_POLICY);
    assert.equal(unchanged.written, false);
    assert.match((await annotationsOf(name))[APPLIED_ANNOTATION] ?? '', new RegExp(`^revision=${revision},run=${run},site=`));
    const changed = await applyNodeLabels(nodes, name, { ...desired, 'relabel-test.example.com/by-api': 'yes' }, DEFAULT_NODE_LABELS_POLICY);
    assert.equal(changed.written, true);
    const annotations = await annotationsOf(name);
    assert.equal(Object.hasOwn(annotations, APPLIED_ANNOTATION), false);
    assert.match(annotations[OWNED_LABELS_ANNOTATION] ?? '', /relabel-test\.example\.com\/by-api/);
  });
});
