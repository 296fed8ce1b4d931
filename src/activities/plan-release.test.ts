import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApplicationFailure } from '@temporalio/common';
import { formatAppliedRun, type AppliedRun } from '../core/plan/applied-run.ts';
import { APPLIED_ANNOTATION, OWNED_LABELS_ANNOTATION, UNINITIALIZED_TAINT_KEY } from '../core/plan/constants.ts';
import { DEFAULT_SITE_POLICY } from '../core/site/label-policy.ts';
import type { Design } from '../core/site/validate-site.ts';
import type { NodeApi, NodeState } from '../kube/nodes.ts';
import { openSqliteStore, SQLITE_MEMORY } from '../store/sql/sqlite-store.ts';
import { planRun, type RunPlan } from './plan-run.ts';

const design = {
  site: 's',
  nodes: { bm: { name: 'bm', labels: { role: 'storage' }, annotations: {}, taints: [] } },
  nodeSets: { general: { name: 'general', labels: { workload: 'batch' }, annotations: {}, taints: [], selector: { matchLabels: { pool: 'general' } } } },
  racks: {},
  hostProfiles: [],
  policy: { ...DEFAULT_SITE_POLICY, liftUninitializedTaint: true, maxRemovalFraction: 0.5 },
} as unknown as Design;

/** A node relabel wrote: `owned` labels (listed in its record) over a label of its own, and the record `applied`. */
function node(name: string, owned: Record<string, string>, applied: AppliedRun | null, extra: Record<string, string> = {}): NodeState {
  return {
    name,
    resourceVersion: '3',
    labels: { 'kubernetes.io/hostname': name, ...extra, ...owned },
    annotations: { [OWNED_LABELS_ANNOTATION]: Object.keys(owned).sort().join(','), ...(applied ? { [APPLIED_ANNOTATION]: formatAppliedRun(applied) } : {}) },
    // The join taint is not relabel's to lift in a release: it is not in the records.
    taints: [{ key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' }],
  };
}

const mine = (set?: string): AppliedRun => ({ revision: 2, run: 5, site: 's', ...(set ? { set } : {}) });

function lister(cluster: NodeState[]): NodeApi {
  return {
    async *listNodes() {
      yield cluster;
    },
  } as unknown as NodeApi;
}

/** Plans a release run over `targets` against `cluster`; the store, the run and the plan (or the refusal). */
async function release(cluster: NodeState[], targets: string[], allowMassRemoval = false) {
  const store = await openSqliteStore(SQLITE_MEMORY);
  const run = await store.runs.create({ targets, revision: 2 });
  const input = { run: run.id, revision: 2, design, dryRun: false, release: true, ...(allowMassRemoval ? { allowMassRemoval } : {}) };
  const plan: RunPlan | Error = await planRun({ nodes: lister(cluster), store: store.runs }, input).catch((err: unknown) => err as Error);
  const rows = await store.runs.nodes(run.id, { limit: 100 });
  await store.close();
  return { plan, rows };
}

describe('planRun with release', () => {
  // Two orphans among the site's nodes: 4 of the site's 10 owned labels.
  const cluster = [
    node('kp-1', { workload: 'batch', tier: 'a' }, mine('general'), { pool: 'retired' }),
    node('bm-gone', { role: 'compute', rack: 'r1' }, mine()),
    node('bm', { role: 'storage', rack: 'r2', zone: 'z' }, mine()),
    node('kp-2', { workload: 'batch', tier: 'b', x: '1' }, mine('general'), { pool: 'general' }),
    node('theirs', { role: 'x' }, { revision: 9, run: 90, site: 'other' }),
    node('plain', {}, null),
  ];

  it('plans each orphan to want nothing: pending for its apply, which reads release from its row; never lifts the join taint', async () => {
    const { plan, rows } = await release(cluster, ['kp-1', 'bm-gone']);
    assert.ok(!(plan instanceof Error), String(plan));
    assert.deepEqual(
      rows.map((r) => [r.node, r.status, r.detail]),
      [
        ['kp-1', 'pending', { release: true }],
        ['bm-gone', 'pending', { release: true }],
      ],
    );
    assert.equal(plan.toChange, 2);
    // The brake weighs the site's owned labels (those of `theirs` are not the site's): 4 of 10.
    assert.deepEqual({ owned: plan.removal.owned, removed: plan.removal.removed, exceeded: plan.removal.exceeded }, { owned: 10, removed: 4, exceeded: false });
  });

  it('refuses the whole run, nothing written, when a target is unknown, not this site’s, or still in the design, naming each', async () => {
    const { plan, rows } = await release(cluster, ['kp-1', 'ghost', 'theirs', 'plain', 'bm', 'kp-2']);
    assert.ok(plan instanceof ApplicationFailure);
    assert.equal(plan.type, 'InvalidTargets');
    assert.equal(plan.nonRetryable, true);
    for (const words of [
      /node ghost is not in the cluster/,
      /node theirs carries the record of site other/,
      /node plain carries no applied-run record/,
      /node bm is named by a BaremetalNode/,
      /node kp-2 is a member of node set general/,
    ])
      assert.match(plan.message, words);
    assert.deepEqual(
      rows.map((r) => [r.node, r.status, r.detail?.error?.type]),
      ['kp-1', 'ghost', 'theirs', 'plain', 'bm', 'kp-2'].map((n) => [n, 'failure', 'InvalidTargets']),
    );
    assert.match(rows[1]?.detail?.error?.message ?? '', /node ghost is not in the cluster; nothing was written/);
  });

  it('the removal brake: a release of most of the site’s owned labels is refused unless allowed', async () => {
    const orphans = [node('o1', { a: '1', b: '1' }, mine()), node('o2', { a: '1', b: '1' }, mine()), node('bm', { role: 'storage' }, mine())];
    const refused = await release(orphans, ['o1', 'o2']);
    assert.ok(refused.plan instanceof ApplicationFailure);
    assert.equal(refused.plan.type, 'MassRemovalRefused');
    assert.match(refused.plan.message, /would remove 4 of 5 owned labels/);
    assert.ok(refused.rows.every((r) => r.status === 'failure'));
    const allowed = await release(orphans, ['o1', 'o2'], true);
    assert.ok(!(allowed.plan instanceof Error));
    assert.equal(allowed.plan.toChange, 2);
  });
});
