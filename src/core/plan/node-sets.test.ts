import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { selectorMatches, type LabelSelector } from './label-selector.ts';
import { conflictMessage, expandNodeSets, membershipOf, type ClusterNode, type SetDesign } from './node-sets.ts';
import { labelsArb, selectorArb } from '../../../test/kit/plan/selector-arbitraries.ts';

type Entry = { name: string; labels: Record<string, string>; annotations: Record<string, string>; taints: never[] };
const entry = (name: string, labels: Record<string, string>): Entry => ({ name, labels, annotations: {}, taints: [] });
const set = (name: string, selector: LabelSelector, labels: Record<string, string>) => ({ ...entry(name, labels), selector });

const design: SetDesign<Entry> & { site: string } = {
  site: 'lab',
  nodes: { 'bm-1': entry('bm-1', { role: 'storage' }) },
  nodeSets: {
    general: set('general', { matchLabels: { 'karpenter.sh/nodepool': 'general' } }, { workload: 'batch' }),
    md0: set('md0', { matchExpressions: [{ key: 'cluster.x-k8s.io/deployment-name', operator: 'In', values: ['md-0'] }] }, { workload: 'web' }),
    zone: set('zone', { matchLabels: { zone: 'z9' } }, { tier: 'edge' }),
  },
};

const cluster: ClusterNode[] = [
  { name: 'ip-10-0-0-1', labels: { 'karpenter.sh/nodepool': 'general' } },
  { name: 'md-0-abcde', labels: { 'cluster.x-k8s.io/deployment-name': 'md-0' } },
  { name: 'both', labels: { 'karpenter.sh/nodepool': 'general', 'cluster.x-k8s.io/deployment-name': 'md-0' } },
  { name: 'bm-1', labels: { 'karpenter.sh/nodepool': 'general' } },
  { name: 'other', labels: { 'karpenter.sh/nodepool': 'gpu' } },
];

describe('node-set membership', () => {
  it('a named node wins; one set makes a member; two sets a conflict; none is left alone', () => {
    assert.deepEqual(membershipOf(design, cluster[0] as ClusterNode), { kind: 'member', set: 'general' });
    assert.deepEqual(membershipOf(design, cluster[2] as ClusterNode), { kind: 'conflict', sets: ['general', 'md0'] });
    assert.deepEqual(membershipOf(design, cluster[3] as ClusterNode), { kind: 'named', sets: ['general'] });
    assert.deepEqual(membershipOf(design, cluster[4] as ClusterNode), { kind: 'none' });
  });

  it('expands the design with the members, counting them per set', () => {
    const expanded = expandNodeSets(design, cluster);
    assert.deepEqual(Object.keys(expanded.design.nodes), ['bm-1', 'ip-10-0-0-1', 'md-0-abcde']);
    assert.deepEqual(expanded.design.nodes['ip-10-0-0-1'], entry('ip-10-0-0-1', { workload: 'batch' }));
    assert.equal(expanded.design.nodes['md-0-abcde']?.labels, design.nodeSets?.['md0']?.labels, 'the set entry is shared, not copied');
    assert.deepEqual(expanded.members, { general: 1, md0: 1, zone: 0 });
    assert.deepEqual(expanded.conflicts, [{ node: 'both', sets: ['general', 'md0'] }]);
    assert.deepEqual(expanded.shadowed, [{ node: 'bm-1', sets: ['general'] }]);
    assert.equal(expanded.design.site, 'lab');
    assert.equal(conflictMessage('both', ['general', 'md0']).includes('general, md0'), true);
  });

  it('leaves a design without sets as it is', () => {
    const plain = { nodes: design.nodes };
    const expanded = expandNodeSets(plain, cluster);
    assert.equal(expanded.design, plain);
    assert.deepEqual(expanded.members, {});
  });

  it('for random selectors and nodes: every member matches exactly its set, the rest as reported, whatever the order', () => {
    const arb = fc.record({
      selectors: fc.array(selectorArb, { minLength: 1, maxLength: 4 }),
      nodes: fc.uniqueArray(fc.record({ name: fc.stringMatching(/^[a-z][a-z0-9]{0,6}$/), labels: labelsArb }), { selector: (n) => n.name, maxLength: 30 }),
      named: fc.array(fc.nat(29), { maxLength: 3 }),
    });
    fc.assert(
      fc.property(arb, ({ selectors, nodes, named }) => {
        const nodeSets = Object.fromEntries(selectors.map((selector, i) => [`s${i}`, set(`s${i}`, selector, { [`k${i}`]: 'v' })]));
        const namedNodes = Object.fromEntries(named.flatMap((i) => (nodes[i] ? [[nodes[i].name, entry(nodes[i].name, {})]] : [])));
        const d: SetDesign<Entry> = { nodes: namedNodes, nodeSets };
        const one = expandNodeSets(d, nodes);
        const other = expandNodeSets(d, [...nodes].reverse());
        assert.deepEqual(one, other);
        for (const node of nodes) {
          const matching = selectors.flatMap((s, i) => (selectorMatches(s, node.labels) ? [`s${i}`] : []));
          const got = one.design.nodes[node.name];
          if (Object.hasOwn(namedNodes, node.name)) assert.equal(got, namedNodes[node.name]);
          else if (matching.length === 1) assert.deepEqual(got?.labels, { [`k${matching[0]?.slice(1)}`]: 'v' });
          else assert.equal(got, undefined);
          assert.equal(
            one.conflicts.some((c) => c.node === node.name),
            !Object.hasOwn(namedNodes, node.name) && matching.length > 1,
          );
        }
        const total = Object.values(one.members).reduce((a, b) => a + b, 0);
        assert.equal(total + Object.keys(namedNodes).length, Object.keys(one.design.nodes).length);
      }),
    );
  });
});
