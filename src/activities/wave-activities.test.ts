import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApplicationFailure, CancelledFailure, type Logger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { FailureType } from '../core/plan/failure-types.ts';
import type { PodInfo } from '../core/plan/workload-impact.ts';
import { DEFAULT_SITE_POLICY } from '../core/site/label-policy.ts';
import type { Design } from '../core/site/validate-site.ts';
import type { NodeApi, NodeState } from '../kube/nodes.ts';
import type { WorkloadApi } from '../kube/workloads.ts';
import type { RunStore } from '../store/runs/run-store.ts';
import { openSqliteStore, SQLITE_MEMORY } from '../store/sql/sqlite-store.ts';
import { checkWaveHealth, planWaves, waveInfo } from './wave-activities.ts';

/** A design of nodes in racks (null: no rack), each with a `zone` label. */
const design = (racks: Record<string, string | null>, rollout?: Design['policy']['rollout']): Design =>
  ({
    site: 's',
    nodes: Object.fromEntries(Object.entries(racks).map(([name, rack]) => [name, { name, rack, labels: rack ? { zone: `z-${rack}` } : {} }])),
    racks: {},
    policy: { ...DEFAULT_SITE_POLICY, ...(rollout ? { rollout } : {}) },
  }) as unknown as Design;

describe('planWaves', () => {
  it("splits the pending nodes into waves and records them; the run's rollout over the policy's", async () => {
    const store = await openSqliteStore(SQLITE_MEMORY);
    try {
      const { id } = await store.runs.create({ targets: ['a', 'b', 'c', 'd', 'e'] });
      await store.runs.setNodeResults(id, [...['a', 'b', 'c', 'e'].map((node) => ({ node, status: 'pending' as const })), { node: 'd', status: 'success' }]);
      const d = design({ a: 'r2', b: 'r1', c: 'r2', d: 'r1', e: null }, { by: 'rack', approval: 'each' });
      assert.equal(await planWaves(store.runs, id, d, { by: 'none' }), undefined, "none turns the policy's waves off");
      const planned = await planWaves(store.runs, id, d, { canary: 1, healthTimeoutSeconds: 0 });
      assert.deepEqual(planned, { count: 3, rollout: { by: 'rack', canary: 1, approval: 'each', healthTimeoutSeconds: 0, maxFailedNodes: 0 } });
      // Only pending nodes: d (settled at planning) is in no wave; the canary comes from rack r1, which it empties.
      assert.deepEqual(
        (await store.runs.waves(id, { limit: 10 })).map((w) => `${w.name}:${w.nodes}`),
        ['canary:1', 'rack r2:2', '(no rack):1'],
      );
      assert.deepEqual(
        (await store.runs.nodes(id, { wave: 0, limit: 10 })).map((r) => r.node),
        ['b'],
      );
      assert.deepEqual(await waveInfo(store.runs, id, 0), { index: 0, name: 'canary', nodes: 1 });
      assert.equal(await waveInfo(store.runs, id, 9), null);
      const byLabel = await planWaves(store.runs, id, design({ a: 'r2', b: 'r1', c: 'r2', d: 'r1', e: null }), { by: { label: 'zone' } });
      assert.equal(byLabel?.count, 3);
      assert.deepEqual(
        (await store.runs.waves(id, { limit: 10 })).map((w) => `${w.name}:${w.nodes}`),
        ['zone z-r1:1', 'zone z-r2:2', '(no zone):1'],
      );
    } finally {
      await store.close();
    }
  });
});

describe("checkWaveHealth (in the SDK's mock activity context)", () => {
  const quiet: Logger = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };
  const osd = { namespace: 'ceph', name: 'osd', nodeSelector: { 'ceph-osd': 'enabled' } };
  const node = (name: string, labels: Record<string, string>): NodeState => ({ name, resourceVersion: '1', labels, annotations: {}, taints: [] });
  const cluster = [node('n1', { 'ceph-osd': 'enabled' }), node('n2', {})];
  /** Wave 0 of run 1 is n1 and n2, both succeeded. */
  const store = {
    nodes: async (_run: number, q: { wave?: number; afterSeq?: number }) =>
      q.wave === 0 && (q.afterSeq ?? -1) < 0 ? ['n1', 'n2'].map((n, seq) => ({ seq, node: n, status: 'success', written: true, detail: null })) : [],
  } as unknown as RunStore;
  const nodes: NodeApi = {
    readNode: async (name) => cluster.find((n) => n.name === name) ?? Promise.reject(new Error(`no node ${name}`)),
    listNodes: () => [][Symbol.iterator]() as never,
    patchNode: async () => Promise.reject(new Error('the health gate writes no node')),
  };
  /** The OSD DaemonSet, and its pod on n1 Ready or not. */
  const workloads = (ready: boolean): WorkloadApi => {
    const pod: PodInfo = { namespace: 'ceph', name: 'osd-n1', nodeName: 'n1', ready, controller: { kind: 'DaemonSet', name: 'osd' } };
    return {
      listDaemonSets: async function* () {
        yield [osd];
      },
      listPods: async function* ({ nodeName }) {
        yield nodeName === undefined || nodeName === 'n1' ? [pod] : [];
      },
      listDisruptionBudgets: async function* () {
        yield [];
      },
    };
  };
  /** Runs the gate in a mock activity context; its heartbeats, and the environment (to cancel it). */
  function gate(deps: Parameters<typeof checkWaveHealth>[0], deadline: number, onBeat?: (env: MockActivityEnvironment) => void) {
    const env = new MockActivityEnvironment({ activityType: 'checkWaveHealth' }, { logger: quiet });
    const beats: unknown[] = [];
    env.on('heartbeat', (details: unknown) => {
      beats.push(details);
      onBeat?.(env);
    });
    return { beats, done: env.run(checkWaveHealth, deps, { run: 1, wave: 0, deadline }) };
  }

  it('passes once every DaemonSet pod the wave should run is Ready, heartbeating what it found', async () => {
    const { beats, done } = gate({ store, nodes, workloads: workloads(true) }, Date.now() + 60_000);
    assert.deepEqual(await done, { healthy: true, checked: 1 });
    assert.deepEqual(beats, [{ unhealthy: 0 }]);
  });

  it('at its deadline, answers with the verdict in words instead of looking again', async () => {
    const { beats, done } = gate({ store, nodes, workloads: workloads(false) }, Date.now());
    assert.deepEqual(await done, { healthy: false, unhealthy: 1, reason: '1 DaemonSet pod(s) not as they should be: ceph/osd on n1 not Ready' });
    assert.deepEqual(beats, [{ unhealthy: 1 }]);
  });

  it('waits between looks in the activity context: a cancellation ends the wait', async () => {
    const { beats, done } = gate({ store, nodes, workloads: workloads(false) }, Date.now() + 60_000, (env) => env.cancel());
    await assert.rejects(done, CancelledFailure);
    assert.deepEqual(beats, [{ unhealthy: 1 }]);
  });

  it('fails Forbidden, not retried, without workload access: a gate never passes unchecked', async () => {
    const { beats, done } = gate({ store, nodes }, Date.now() + 60_000);
    await assert.rejects(done, (err: unknown) => err instanceof ApplicationFailure && err.type === FailureType.Forbidden && err.nonRetryable);
    assert.deepEqual(beats, []);
  });
});
