/** Unit tests of what one node wants: the design's labels with its plugin labels joined in. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { PlanPolicy } from './label-plan.ts';
import { nodeWants, withPluginLabels, type PlannedDesign } from './node-wants.ts';

const policy: PlanPolicy & { liftUninitializedTaint: boolean } = { reconcileOsArchAliases: true, protectedKeys: [], liftUninitializedTaint: true };

const design: PlannedDesign<typeof policy> = {
  site: 'atl',
  policy,
  nodes: {
    n1: {
      labels: { 'a/k': 'doc', 'a/only': 'd' },
      annotations: { 'example.com/note': 'x' },
      taints: [{ key: 'example.com/gpu', value: 'yes', effect: 'NoSchedule' }],
    },
  },
};

describe('nodeWants', () => {
  it("joins a node's plugin labels into its design labels and carries its annotations, taints and the policy", () => {
    const wants = nodeWants(design, 'n1', [
      { plugin: 'zeta', labels: { 'a/k': 'z', 'c/new': 'z' } },
      { plugin: 'alpha', labels: { 'b/x': 'a' } },
    ]);
    assert.deepEqual(wants, {
      labels: { 'a/k': 'doc', 'a/only': 'd', 'b/x': 'a', 'c/new': 'z' },
      annotations: { 'example.com/note': 'x' },
      taints: [{ key: 'example.com/gpu', value: 'yes', effect: 'NoSchedule' }],
      policy,
      conflicts: [{ key: 'a/k', plugin: 'zeta', value: 'z', kept: 'doc', keptFrom: 'document' }],
      plugins: { 'b/x': 'alpha', 'c/new': 'zeta' },
    });
    assert.equal(wants?.policy.liftUninitializedTaint, true, "the design's own policy type is kept");
  });

  it('wants the document labels alone without plugin labels, and nothing of a node the design does not hold', () => {
    assert.deepEqual(nodeWants(design, 'n1')?.labels, { 'a/k': 'doc', 'a/only': 'd' });
    assert.deepEqual(nodeWants(design, 'n1')?.conflicts, []);
    assert.equal(nodeWants(design, 'n2', [{ plugin: 'p', labels: { 'a/b': 'c' } }]), undefined);
    assert.equal(nodeWants(design, 'toString'), undefined, 'an inherited property is not a node');
  });

  it('keeps every document label, and every label it adds comes from a plugin (property)', () => {
    const labels = fc.dictionary(fc.constantFrom('a/k', 'b/k', 'c/k', 'd/k'), fc.constantFrom('1', '2'));
    fc.assert(
      fc.property(labels, fc.array(fc.record({ plugin: fc.constantFrom('p', 'q', 'r'), labels }), { maxLength: 3 }), (doc, entries) => {
        const wants = nodeWants({ site: 's', policy, nodes: { n: { labels: doc, annotations: {}, taints: [] } } }, 'n', entries);
        assert.ok(wants);
        for (const [key, value] of Object.entries(doc)) assert.equal(wants.labels[key], value);
        for (const key of Object.keys(wants.labels))
          if (!Object.hasOwn(doc, key)) assert.ok(entries.some((e) => e.plugin === wants.plugins[key] && e.labels[key] === wants.labels[key]));
      }),
    );
  });
});

describe('plugin labels joined with document labels', () => {
  it('documents win, then the plugin whose name sorts first; each conflict is returned', () => {
    const joined = withPluginLabels({ 'a/k': 'doc', 'a/only': 'd' }, [
      { plugin: 'zeta', labels: { 'a/k': 'z', 'b/x': 'z', 'c/new': 'z' } },
      { plugin: 'alpha', labels: { 'a/k': 'doc', 'b/x': 'a' } },
    ]);
    assert.deepEqual(joined.labels, { 'a/k': 'doc', 'a/only': 'd', 'b/x': 'a', 'c/new': 'z' });
    assert.deepEqual(joined.conflicts, [
      { key: 'a/k', plugin: 'zeta', value: 'z', kept: 'doc', keptFrom: 'document' },
      { key: 'b/x', plugin: 'zeta', value: 'z', kept: 'a', keptFrom: 'plugin alpha' },
    ]);
    assert.deepEqual(joined.plugins, { 'b/x': 'alpha', 'c/new': 'zeta' }, 'a key the documents give with the same value stays theirs');
    assert.deepEqual(withPluginLabels({ 'a/k': 'doc' }, []).plugins, {});
  });
});
