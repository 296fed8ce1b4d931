import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@temporalio/client';
import { UNINITIALIZED_TAINT_KEY } from '../../core/plan/constants.ts';
import { FailureType } from '../../core/plan/failure-types.ts';
import { DEFAULT_JOIN_CONCURRENCY } from '../../contracts/join-messages.ts';
import { WatchExpiredError, type NodeWatchApi, type NodeWatchEvent } from '../../kube/node-watch.ts';
import { NodeInformer } from '../../kube/node-informer.ts';
import type { NodeState } from '../../kube/nodes.ts';
import type { DesignCache } from '../../store/designs/design-cache.ts';
import type { Store } from '../../store/store.ts';
import type { RunStarter } from '../../temporal/run-starter.ts';
import { JoinWatcher } from './join-watcher.ts';

const joining = (name: string): NodeState => ({
  name,
  uid: `${name}-uid`,
  resourceVersion: '1',
  labels: {},
  annotations: {},
  taints: [{ key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' }],
});

/** A store whose latest revision is 1, of site `s`, naming `nodes`, with `nodeSets`; its runs end as `result` says. */
function fakes(nodes: string[], nodeSets: Record<string, unknown> = {}, result: unknown = { status: 'success' }) {
  const store = { revisions: { latest: async () => ({ id: 1 }) } } as unknown as Store;
  const design = { site: 's', nodes: Object.fromEntries(nodes.map((n) => [n, {}])), nodeSets };
  const designs = { get: async () => ({ ok: true, design }) } as unknown as DesignCache;
  const client = { workflow: { getHandle: () => ({ result: async () => result }) } } as unknown as Client;
  return { store, designs, client };
}

/** A watch that lists `nodes` once and then waits to be stopped. */
function listing(nodes: NodeState[]): NodeWatchApi {
  return {
    async list(_size, onPage) {
      await onPage(nodes, { resourceVersion: '1' });
      return '1';
    },
    async watch(rv, _onEvent, signal) {
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      return rv;
    },
  };
}

describe('JoinWatcher', () => {
  it('lists, labels what joined, lists again when the watch expires, and leaves nodes not in the design alone', async () => {
    let lists = 0;
    let watches = 0;
    const watch: NodeWatchApi = {
      async list(_size, onPage) {
        lists++;
        await onPage(lists === 1 ? [joining('a')] : [joining('a'), joining('b')], { resourceVersion: String(10 * lists) });
        return String(10 * lists);
      },
      async watch(rv, onEvent, signal) {
        watches++;
        // The first watch finds its version gone (410): the watcher lists again, which finds b.
        if (watches === 1) throw new WatchExpiredError('too old');
        const events: NodeWatchEvent[] = [
          { type: 'ADDED', node: joining('c') },
          { type: 'ADDED', node: joining('stranger') },
        ];
        for (const e of events) onEvent(e);
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        return rv;
      },
    };
    const started: string[][] = [];
    const startRun: RunStarter = async (_client, options) => {
      started.push(options.targets);
      assert.equal(options.audit?.via, 'join');
      assert.equal(options.action, 'join_nodes');
      assert.equal(options.concurrency, DEFAULT_JOIN_CONCURRENCY, 'join runs relabel nodes at the join concurrency, not the site default');
      return { workflowId: 'update-labels/s', runId: `r${started.length}`, run: started.length };
    };
    const beats: unknown[] = [];
    const watcher = new JoinWatcher(
      { informer: new NodeInformer(watch, { maxNodes: 0 }), ...fakes(['a', 'b', 'c']), startRun, heartbeat: (r) => beats.push(r) },
      { site: 's', batchDelayMs: 5, watchSeconds: 1 },
    );
    assert.deepEqual(await watcher.checkSite(), { ok: true });
    const report = await watcher.run();
    assert.deepEqual(started.flat().sort(), ['a', 'b', 'c'], 'each managed joining node handed to a run once');
    assert.equal(lists, 2);
    assert.equal(report.unmanaged, 1);
    assert.equal(report.dispatched, 3);
    assert.equal(report.resourceVersion, '20');
    assert.ok(beats.length >= 1);
  });

  it('hands a node two node sets match to a run (which fails it) and counts it failed, not unmanaged; a node no set matches stays unmanaged', async () => {
    const sets = { md: { selector: { matchLabels: { md: 'x' } } }, pool: { selector: { matchLabels: { pool: 'y' } } } };
    const labelled = (name: string, labels: Record<string, string>): NodeState => ({ ...joining(name), labels });
    const watch = listing([labelled('both', { md: 'x', pool: 'y' }), labelled('member', { pool: 'y' }), labelled('stranger', { other: 'z' })]);
    const started: string[][] = [];
    const startRun: RunStarter = async (_client, options) => {
      started.push(options.targets);
      return { workflowId: 'update-labels/s', runId: 'r', run: 3 };
    };
    const result = { status: 'partial_success', counts: { total: 2, success: 1, failure: 1, written: 1 } };
    const failed: number[] = [];
    const telemetry = {
      labelled: () => undefined,
      pending: () => undefined,
      unmanaged: () => undefined,
      run: () => undefined,
      failed: (_s: string, n: number) => failed.push(n),
    };
    const watcher = new JoinWatcher(
      { informer: new NodeInformer(watch, { maxNodes: 0 }), ...fakes([], sets, result), startRun, telemetry, heartbeat: () => undefined },
      { site: 's', batchDelayMs: 5, watchSeconds: 1 },
    );
    await watcher.checkSite();
    const report = await watcher.run();
    assert.deepEqual(started, [['both', 'member']]);
    assert.deepEqual([report.dispatched, report.failed, report.unmanaged], [2, 1, 1]);
    assert.deepEqual(failed, [1]);
    assert.equal(report.lastRun?.status, 'partial_success');
  });

  it("finds labelled nodes joining by the policy's join taint key, not by the default one", async () => {
    const startup = 'startup-taint.cluster-autoscaler.kubernetes.io/relabel';
    const labelledWith = (name: string, key: string): NodeState => ({
      ...joining(name),
      annotations: { 'relabel.airshipit.org/applied': 'revision=1,run=1' },
      taints: [{ key, effect: 'NoSchedule' }],
    });
    const watch = listing([labelledWith('a', startup), labelledWith('b', UNINITIALIZED_TAINT_KEY)]);
    const started: string[][] = [];
    const startRun: RunStarter = async (_client, options) => {
      started.push(options.targets);
      return { workflowId: 'update-labels/s', runId: 'r', run: 1 };
    };
    const base = fakes(['a', 'b']);
    const design = { site: 's', nodes: { a: {}, b: {} }, policy: { joinTaintKey: startup, liftUninitializedTaint: true } };
    const designs = { get: async () => ({ ok: true, design }) } as unknown as DesignCache;
    const watcher = new JoinWatcher(
      { informer: new NodeInformer(watch, { maxNodes: 0 }), ...base, designs, startRun, heartbeat: () => undefined },
      { site: 's', batchDelayMs: 5, watchSeconds: 0.5 },
    );
    await watcher.checkSite();
    await watcher.run();
    assert.deepEqual(started, [['a']], "b carries the default key, which is not this policy's join taint");
  });

  it("follows the worker's informer: synced from its copy, with no LIST or watch of its own", async () => {
    let lists = 0;
    let watches = 0;
    const base = listing([joining('a'), joining('b')]);
    const counted: NodeWatchApi = {
      list: (size, onPage) => (lists++, base.list(size, onPage)),
      watch: (rv, onEvent, signal) => (watches++, base.watch(rv, onEvent, signal)),
    };
    const informer = new NodeInformer(counted, { maxNodes: 10 });
    try {
      await informer.ready();
      const started: string[][] = [];
      const startRun: RunStarter = async (_client, options) => {
        started.push(options.targets);
        return { workflowId: 'update-labels/s', runId: 'r', run: started.length };
      };
      for (const site of ['s', 's']) {
        const watcher = new JoinWatcher({ informer, ...fakes(['a', 'b']), startRun, heartbeat: () => undefined }, { site, batchDelayMs: 5, watchSeconds: 0.3 });
        await watcher.checkSite();
        await watcher.run();
      }
      assert.deepEqual(
        started,
        [
          ['a', 'b'],
          ['a', 'b'],
        ],
        'each watcher (a new queue) hands the joining nodes to a run',
      );
      assert.deepEqual([lists, watches], [1, 1], "the informer's one LIST and one watch");
    } finally {
      informer.close();
    }
  });

  it('waits for the run of the site that is going, then starts; refuses another site', async () => {
    const informer = new NodeInformer(listing([joining('a')]), { maxNodes: 0 });
    let attempts = 0;
    const startRun: RunStarter = async (_client, options) => {
      attempts++;
      if (attempts === 1) throw Object.assign(new Error('an update_labels run is already in progress'), { type: FailureType.RunInProgress });
      assert.deepEqual(options.targets, ['a']);
      return { workflowId: 'update-labels/s', runId: 'r', run: 7 };
    };
    const watcher = new JoinWatcher({ informer, ...fakes(['a']), startRun, heartbeat: () => undefined }, { site: 's', batchDelayMs: 5, watchSeconds: 1 });
    await watcher.checkSite();
    const report = await watcher.run();
    assert.equal(attempts, 2);
    assert.equal(report.lastRun?.run, 7);
    assert.equal(report.lastRun?.status, 'success');
    const other = new JoinWatcher({ informer, ...fakes(['a']), startRun, heartbeat: () => undefined }, { site: 'elsewhere' });
    assert.deepEqual(await other.checkSite(), { ok: false, message: "unknown site elsewhere: the store's latest revision (1) is of site s" });
  });
});
