import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseNodeFilter, selectNodes } from './node-filter.ts';
import type { NodeFilterSet } from './node-filter.ts';
import { nodeDoc, profileDoc, rackDoc, source } from '../../../test/kit/site/documents.ts';
import { validateSite } from './validate-site.ts';
import type { Design } from './validate-site.ts';

function design(): Design {
  const result = validateSite([
    source(
      'site.yaml',
      rackDoc('r1', { power: 'a', row: 'e' }),
      rackDoc('r2', { power: 'b', row: 'e' }),
      profileDoc('compute', '  metadata:\n    tags: [compute]\n    owner_data:\n      openstack-compute-node: enabled\n      sriov: enabled'),
      profileDoc('storage', '  metadata:\n    tags: [storage]\n    owner_data:\n      ceph-osd: enabled'),
      nodeDoc('c1', '  host_profile: compute\n  metadata:\n    rack: r1\n    tags: [gpu]'),
      nodeDoc('c2', "  host_profile: compute\n  metadata:\n    rack: r2\n    owner_data:\n      '!sriov': ''"),
      nodeDoc('s1', '  host_profile: storage\n  metadata:\n    rack: r1'),
      nodeDoc('s2', '  host_profile: storage\n  metadata:\n    rack: r2\n    tags: [gpu]'),
      nodeDoc('loose', ''),
    ),
  ]);
  assert.ok(result.ok);
  return result.design;
}

const one = (filter: Record<string, unknown>, type = 'union'): NodeFilterSet => {
  const parsed = parseNodeFilter({ filter_set_type: type, filter_set: [filter] });
  assert.ok(parsed.ok, parsed.ok ? '' : JSON.stringify(parsed.errors));
  return parsed.filter;
};

describe('selectNodes', () => {
  const d = design();
  const cases: [string, NodeFilterSet, string[]][] = [
    ['node_names', one({ filter_type: 'union', node_names: ['c1', 's2'] }), ['c1', 's2']],
    ['node_labels under union: any pair', one({ filter_type: 'union', node_labels: { sriov: 'enabled', 'ceph-osd': 'enabled' } }), ['c1', 's1', 's2']],
    [
      'node_labels under intersection: every pair',
      one({ filter_type: 'intersection', node_labels: { 'openstack-compute-node': 'enabled', sriov: 'enabled' } }),
      ['c1'],
    ],
    ['node_labels match generated labels too', one({ filter_type: 'union', node_labels: { 'relabel.airshipit.org/rack': 'r2' } }), ['c2', 's2']],
    ['rack_labels under union', one({ filter_type: 'union', rack_labels: { power: 'a', row: 'x' } }), ['c1', 's1']],
    ['rack_labels under intersection', one({ filter_type: 'intersection', rack_labels: { power: 'b', row: 'e' } }), ['c2', 's2']],
    ['node_tags under union', one({ filter_type: 'union', node_tags: ['gpu', 'storage'] }), ['c1', 's1', 's2']],
    ['node_tags under intersection', one({ filter_type: 'intersection', node_tags: ['gpu', 'storage'] }), ['s2']],
    ['criteria under intersection', one({ filter_type: 'intersection', rack_names: ['r1'], node_tags: ['compute'] }), ['c1']],
    ['criteria under union', one({ filter_type: 'union', rack_names: ['r1'], node_names: ['loose'] }), ['c1', 'loose', 's1']],
    ['empty criteria are ignored', one({ filter_type: 'intersection', rack_names: ['r2'], node_names: [], node_labels: {}, node_tags: null }), ['c2', 's2']],
    [
      'filter sets: intersection of filters',
      {
        filter_set_type: 'intersection',
        filter_set: [
          { filter_type: 'union', node_tags: ['gpu'] },
          { filter_type: 'union', rack_names: ['r2'] },
        ],
      },
      ['s2'],
    ],
    [
      'filter sets: union of filters',
      {
        filter_set_type: 'union',
        filter_set: [
          { filter_type: 'union', node_names: ['loose'] },
          { filter_type: 'union', rack_labels: { power: 'b' } },
        ],
      },
      ['c2', 'loose', 's2'],
    ],
  ];
  for (const [name, filter, expected] of cases) {
    it(name, () => assert.deepEqual(selectNodes(d, filter).nodes, expected));
  }

  it('returns node names missing from the design separately', () => {
    const selection = selectNodes(d, one({ filter_type: 'union', node_names: ['c1', 'ghost', 'ghost'] }));
    assert.deepEqual(selection, { nodes: ['c1'], unknownNodeNames: ['ghost'] });
  });
});

describe('parseNodeFilter rejects bad filters with a clear message', () => {
  const cases: [string, unknown, { path: string; message: string }[]][] = [
    [
      'unknown set type',
      { filter_set_type: 'union_all', filter_set: [{ filter_type: 'union', node_names: ['a'] }] },
      [{ path: 'filter_set_type', message: 'filter_set_type must be "union" or "intersection", not "union_all"' }],
    ],
    [
      'unknown filter type',
      { filter_set_type: 'union', filter_set: [{ filter_type: 'and', node_names: ['a'] }] },
      [{ path: 'filter_set[0].filter_type', message: 'filter_type must be "union" or "intersection", not "and"' }],
    ],
    [
      'unknown field',
      { filter_set_type: 'union', filter_set: [{ filter_type: 'union', node_label: { a: 'b' }, node_names: ['a'] }] },
      [
        {
          path: 'filter_set[0].node_label',
          message: 'unknown field "node_label" (allowed: filter_type, node_names, node_tags, node_labels, rack_names, rack_labels)',
        },
      ],
    ],
    [
      'a filter without criteria',
      { filter_set_type: 'union', filter_set: [{ filter_type: 'union', node_names: [] }] },
      [{ path: 'filter_set[0]', message: 'a filter needs at least one non-empty criterion (node_names, node_tags, node_labels, rack_names, rack_labels)' }],
    ],
    ['an empty set', { filter_set_type: 'union', filter_set: [] }, [{ path: 'filter_set', message: 'filter_set needs at least one filter' }]],
    [
      'a missing type and a wrong criterion type',
      { filter_set: [{ filter_type: 'union', node_names: 'a' }], extra: 1 },
      [
        { path: 'filter_set_type', message: 'filter_set_type is required ("union" or "intersection")' },
        { path: 'filter_set[0].node_names', message: 'Invalid input: expected array, received string' },
        { path: 'extra', message: 'unknown field "extra" (allowed: filter_set_type, filter_set)' },
      ],
    ],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => assert.deepEqual(parseNodeFilter(input), { ok: false, errors: expected }));
  }
});
