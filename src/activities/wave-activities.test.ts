import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_SITE_POLICY } from '../core/site/label-policy.ts';
import type { Design } from '../core/site/validate-site.ts';
import { openSqliteStore, SQLITE_MEMORY } from '../store/sqlite-store.ts';
import { planWaves, waveInfo } from './wave-activities.ts';

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
