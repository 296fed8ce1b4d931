import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatAppliedRun } from '../core/plan/applied-run.ts';
import { APPLIED_ANNOTATION, OWNED_LABELS_ANNOTATION } from '../core/plan/constants.ts';
import { DEFAULT_SITE_POLICY, type SitePolicy } from '../core/site/label-policy.ts';
import type { Design } from '../core/site/validate-site.ts';
import type { NodeApi, NodeState } from '../kube/nodes.ts';
import type { DesignCache } from '../store/designs/design-cache.ts';
import { openSqliteStore, SQLITE_MEMORY } from '../store/sql/sqlite-store.ts';
import { DRIFT_SAMPLE_LIMIT } from '../contracts/drift-messages.ts';
import { DRIFT_PAGE_SIZE, detectDrift, driftedNodes } from './detect-drift.ts';

const name = (i: number) => `n${String(i).padStart(4, '0')}`;

function design(count: number, role: string, policy: SitePolicy = DEFAULT_SITE_POLICY): Design {
  const nodes = Object.fromEntries(
    Array.from({ length: count }, (_, i) => [name(i), { name: name(i), labels: { role, rack: 'r1' }, annotations: {}, taints: [] }]),
  );
  return { site: 's', nodes, racks: {}, hostProfiles: [], policy } as unknown as Design;
}

/** A node as a run at `revision` left it, with `labels` over the wanted ones. */
function node(i: number, revision: number | null, labels: Record<string, string>): NodeState {
  return {
    name: name(i),
    resourceVersion: '1',
    labels: { 'kubernetes.io/hostname': name(i), ...labels },
    annotations: {
      [OWNED_LABELS_ANNOTATION]: 'rack,role',
      ...(revision === null ? {} : { [APPLIED_ANNOTATION]: formatAppliedRun({ revision, run: revision * 10 }) }),
    },
    taints: [],
  };
}

describe('detectDrift (bulk)', () => {
  it('classifies every design node from one paginated LIST, stores the rows not in sync, and returns bounded counts, sample and groups', async () => {
    const store = await openSqliteStore(SQLITE_MEMORY);
    // Revision 1 wanted role=old, revision 2 wants role=new.
    const designs: Record<number, Design> = { 1: design(1000, 'old'), 2: design(1000, 'new', { ...DEFAULT_SITE_POLICY, drift: { action: 'heal' } }) };
    const cache: DesignCache = { get: async (r) => (designs[r] ? { ok: true, design: designs[r] } : { ok: false, errors: [] }) };
    const cluster: NodeState[] = [];
    for (let i = 0; i < 1000; i++) {
      if (i < 300)
        cluster.push(node(i, 1, { role: 'old', rack: i < 150 ? 'r9' : 'r1' })); // 150 drifted at 1, 150 pending
      else if (i < 800)
        cluster.push(node(i, 2, { role: 'new', rack: i < 400 ? 'tampered' : 'r1' })); // 100 drifted at 2, 400 in sync
      else if (i < 850)
        cluster.push(node(i, 7, { role: 'new', rack: 'r1' })); // revision 7 is unknown: unmanaged
      else if (i < 900) cluster.push(node(i, null, { role: 'new', rack: 'r1' })); // unmanaged
      // 900…999 missing
    }
    for (let i = 0; i < 200; i++) {
      // Another site's nodes: not looked at (and, being there, they make the site-less records above nobody's orphans).
      const other = node(5000 + i, 1, { role: 'x' });
      cluster.push({ ...other, annotations: { ...other.annotations, [APPLIED_ANNOTATION]: formatAppliedRun({ revision: 1, run: 10, site: 'other' }) } });
    }
    const pageSizes: number[] = [];
    const nodes = {
      async *listNodes({ pageSize }: { pageSize: number }) {
        pageSizes.push(pageSize);
        for (let i = 0; i < cluster.length; i += pageSize) yield cluster.slice(i, i + pageSize);
      },
    } as unknown as NodeApi;
    const found = await detectDrift({ nodes, store, designs: cache }, { key: 'k', workflowId: 'relabel-drift/s', revision: 2, design: designs[2] as Design });
    assert.deepEqual(pageSizes, [DRIFT_PAGE_SIZE], 'one paginated LIST');
    assert.deepEqual(found.counts, { total: 1000, drifted: 250, moved: 0, pending: 150, unmanaged: 100, missing: 100, in_sync: 400, orphaned: 0 });
    assert.equal(found.action, 'heal');
    assert.deepEqual(found.groups, [
      { revision: 1, nodes: 150 },
      { revision: 2, nodes: 100 },
    ]);
    assert.equal(found.sample.length, DRIFT_SAMPLE_LIMIT);
    assert.ok(
      found.sample.every((s) => s.state === 'drifted'),
      'drifted first',
    );
    assert.equal(found.sample[0]?.detail, 'label rack changed (wants r1, has r9)');
    assert.ok(JSON.stringify(found).length < 5000, 'the result stays small');
    const report = await store.drift.getReport(found.report);
    assert.deepEqual(report.counts, found.counts);
    assert.equal((await store.drift.nodes(found.report, { limit: 5000 })).length, 600, 'one row per node not in sync');
    assert.equal((await driftedNodes(store, found.report, 1)).length, 150);
    assert.deepEqual((await driftedNodes(store, found.report, 2)).slice(0, 2), [name(300), name(301)]);
    const unknown = await store.drift.nodes(found.report, { states: ['unmanaged'], revision: 7, limit: 1 });
    assert.match(unknown[0]?.detail.note ?? '', /names revision 7/);
    const [missing] = await store.drift.nodes(found.report, { states: ['missing'], limit: 1 });
    assert.equal(missing?.node, name(900));

    // A retried detection (same key) rewrites the same report.
    const again = await detectDrift({ nodes, store, designs: cache }, { key: 'k', workflowId: 'relabel-drift/s', revision: 2, design: designs[2] as Design });
    assert.equal(again.report, found.report);
    assert.equal((await store.drift.nodes(found.report, { limit: 5000 })).length, 600);
    await store.close();
  });

  it('wants plugin labels as the run applied them: from the set its run pinned, and the newest set for the latest revision', async () => {
    const store = await openSqliteStore(SQLITE_MEMORY);
    const d = design(3, 'new');
    const cache: DesignCache = { get: async (r) => (r === 2 ? { ok: true, design: d } : { ok: false, errors: [] }) };
    const run = await store.runs.create({ targets: [name(0), name(1), name(2)] });
    const gpu = (value: string) => ({
      site: 's',
      digest: value,
      parts: [
        {
          plugin: 'gpus',
          digest: value,
          polledAt: new Date(),
          labels: {
            [name(0)]: { 'feature.example.com/gpu': value },
            [name(1)]: { 'feature.example.com/gpu': value },
            [name(2)]: { 'feature.example.com/gpu': value },
          },
        },
      ],
    });
    const first = await store.plugins.saveSet(gpu('a100'));
    await store.plugins.pinRun(run.id, first.id);
    await store.plugins.saveSet(gpu('h100')); // newer output, not yet applied by any run
    const applied = (i: number, value: string | undefined): NodeState => ({
      name: name(i),
      resourceVersion: '1',
      labels: { 'kubernetes.io/hostname': name(i), role: 'new', rack: 'r1', ...(value ? { 'feature.example.com/gpu': value } : {}) },
      annotations: { [OWNED_LABELS_ANNOTATION]: 'feature.example.com/gpu,rack,role', [APPLIED_ANNOTATION]: formatAppliedRun({ revision: 2, run: run.id }) },
      taints: [],
    });
    // As the run left it; a plugin label edited by hand; a plugin label removed by hand.
    const cluster = [applied(0, 'a100'), applied(1, 'edited'), applied(2, undefined)];
    const nodes = {
      async *listNodes() {
        yield cluster;
      },
    } as unknown as NodeApi;
    const found = await detectDrift({ nodes, store, designs: cache }, { key: 'p', workflowId: 'relabel-drift/s', revision: 2, design: d });
    assert.deepEqual(found.counts, { total: 3, drifted: 2, moved: 0, pending: 1, unmanaged: 0, missing: 0, in_sync: 0, orphaned: 0 });
    const rows = await store.drift.nodes(found.report, { limit: 10 });
    assert.deepEqual(
      rows.map((r) => [r.node, r.state, (r.detail.keys?.labels ?? []).map((k) => k.key)]),
      [
        [name(0), 'pending', []],
        [name(1), 'drifted', ['feature.example.com/gpu']],
        [name(2), 'drifted', ['feature.example.com/gpu']],
      ],
    );
    await store.close();
  });
});
