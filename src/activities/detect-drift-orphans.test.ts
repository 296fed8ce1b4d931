import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatAppliedRun, type AppliedRun } from '../core/plan/applied-run.ts';
import { APPLIED_ANNOTATION, OWNED_LABELS_ANNOTATION } from '../core/plan/constants.ts';
import { DEFAULT_SITE_POLICY } from '../core/site/label-policy.ts';
import type { Design } from '../core/site/validate-site.ts';
import type { NodeApi, NodeState } from '../kube/nodes.ts';
import type { DesignCache } from '../store/designs/design-cache.ts';
import { openSqliteStore, SQLITE_MEMORY } from '../store/sql/sqlite-store.ts';
import { detectDrift, driftedNodes } from './detect-drift.ts';

const entry = (name: string, labels: Record<string, string>) => ({ name, labels, annotations: {}, taints: [] });
const set = (name: string, pool: string, labels: Record<string, string>) => ({
  ...entry(name, labels),
  selector: { matchLabels: { 'karpenter.sh/nodepool': pool } },
});

/** Site `s`: one named node, and two node sets selecting on the Karpenter pool. */
const design = {
  site: 's',
  nodes: { bm: entry('bm', { role: 'storage' }) },
  nodeSets: { general: set('general', 'general', { workload: 'batch' }), gpu: set('gpu', 'gpu', { workload: 'gpu' }) },
  racks: {},
  hostProfiles: [],
  policy: { ...DEFAULT_SITE_POLICY, drift: { action: 'report', orphans: 'release' } },
} as unknown as Design;
const cache: DesignCache = { get: async (r) => (r === 2 ? { ok: true, design } : { ok: false, errors: [] }) };

/** A node an update run wrote as `applied` says, carrying `labels` (owned: `owned`) besides what the cloud gave it. */
function written(name: string, pool: string | undefined, labels: Record<string, string>, applied: AppliedRun | null): NodeState {
  return {
    name,
    resourceVersion: '1',
    labels: { 'kubernetes.io/hostname': name, ...(pool ? { 'karpenter.sh/nodepool': pool } : {}), ...labels },
    annotations: {
      [OWNED_LABELS_ANNOTATION]: Object.keys(labels).sort().join(','),
      ...(applied ? { [APPLIED_ANNOTATION]: formatAppliedRun(applied) } : {}),
    },
    taints: [],
  };
}

function lister(cluster: NodeState[]): NodeApi {
  return {
    async *listNodes() {
      yield cluster;
    },
  } as unknown as NodeApi;
}

describe('detectDrift: nodes that left management, and members that moved', () => {
  it('a member whose set changed since its run is moved, not drifted; a member of its own set is in sync', async () => {
    const store = await openSqliteStore(SQLITE_MEMORY);
    const cluster = [
      written('bm', undefined, { role: 'storage' }, { revision: 2, run: 5, site: 's' }),
      // Written as a member of general; its pool label now says gpu: it is as general wants, gpu wants workload=gpu.
      written('kp-1', 'gpu', { workload: 'batch' }, { revision: 2, run: 5, site: 's', set: 'general' }),
      written('kp-2', 'general', { workload: 'batch' }, { revision: 2, run: 5, site: 's', set: 'general' }),
    ];
    const found = await detectDrift({ nodes: lister(cluster), store, designs: cache }, { key: 'm', workflowId: 'relabel-drift/s', revision: 2, design });
    assert.deepEqual(found.counts, { total: 3, missing: 0, unmanaged: 0, drifted: 0, moved: 1, pending: 0, in_sync: 2, orphaned: 0 });
    const [row] = await store.drift.nodes(found.report, { limit: 10 });
    assert.deepEqual(row && { node: row.node, state: row.state, nodeSet: row.nodeSet, lastSet: row.detail.lastSet, changes: row.detail.changes }, {
      node: 'kp-1',
      state: 'moved',
      nodeSet: 'gpu',
      lastSet: 'general',
      changes: 1,
    });
    assert.match(found.sample[0]?.detail ?? '', /member of node set general/);
    await store.close();
  });

  it("orphaned: this site's nodes no BaremetalNode names and no set matches, with the set or revision they last had; others' nodes are not looked at", async () => {
    const store = await openSqliteStore(SQLITE_MEMORY);
    const cluster = [
      written('bm', undefined, { role: 'storage' }, { revision: 2, run: 5, site: 's' }),
      // Its pool label changed to one no set selects.
      written('kp-1', 'retired', { workload: 'batch' }, { revision: 2, run: 5, site: 's', set: 'general' }),
      // A BaremetalNode taken out of the documents.
      written('bm-gone', undefined, { role: 'compute' }, { revision: 1, run: 3, site: 's' }),
      written('theirs', undefined, { role: 'x' }, { revision: 9, run: 90, site: 'other' }),
      written('plain', undefined, {}, null),
    ];
    const found = await detectDrift({ nodes: lister(cluster), store, designs: cache }, { key: 'o', workflowId: 'relabel-drift/s', revision: 2, design });
    assert.deepEqual(found.counts, { total: 3, missing: 0, unmanaged: 0, drifted: 0, moved: 0, pending: 0, in_sync: 1, orphaned: 2 });
    assert.equal(found.orphans, 'release');
    const rows = await store.drift.nodes(found.report, { states: ['orphaned'], limit: 10 });
    assert.deepEqual(
      rows.map((r) => [r.node, r.revision, r.detail.run, r.detail.lastSet]),
      [
        ['kp-1', 2, 5, 'general'],
        ['bm-gone', 1, 3, undefined],
      ],
    );
    assert.deepEqual(await driftedNodes(store, found.report, undefined, 'orphaned'), ['kp-1', 'bm-gone']);
    assert.match(found.sample.find((e) => e.node === 'bm-gone')?.detail ?? '', /last written by run 3 at revision 1 as a named node/);
    await store.close();
  });

  it('a record from before records named the site is this site’s only in a single-site cluster', async () => {
    const store = await openSqliteStore(SQLITE_MEMORY);
    const old = written('old', undefined, { role: 'compute' }, { revision: 1, run: 3 });
    const theirs = written('theirs', undefined, { role: 'x' }, { revision: 9, run: 90, site: 'other' });
    const alone = await detectDrift({ nodes: lister([old]), store, designs: cache }, { key: 'a', workflowId: 'relabel-drift/s', revision: 2, design });
    assert.equal(alone.counts.orphaned, 1, 'single-site: the site-less record is this site’s');
    const mixed = await detectDrift({ nodes: lister([old, theirs]), store, designs: cache }, { key: 'b', workflowId: 'relabel-drift/s', revision: 2, design });
    assert.equal(mixed.counts.orphaned, 0, 'another site’s records are in the cluster: a site-less record is nobody’s');
    await store.close();
  });
});
