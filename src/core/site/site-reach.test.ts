import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson, changedSourceDocuments, documentChanges, keyChanges, nodeChanges, siteDiff, type ValidSite } from './site-reach.ts';
import { validateSite, type SiteDocument } from './validate-site.ts';
import { nodeDoc, policyDoc, profileDoc, source, yamlDoc } from '../../../test/kit/site/documents.ts';

const region = yamlDoc('drydock/Region/v1', 'lab', '  tag_definitions: []');

/** A valid site of one host profile and the given nodes; fails the test when it does not validate. */
function site(profileBody: string, nodes: string[], extra: string[] = []): ValidSite {
  const result = validateSite([source('site.yaml', policyDoc('policy'), region, profileDoc('cp', profileBody), ...nodes, ...extra)]);
  assert.ok(result.ok, JSON.stringify(!result.ok && result.errors));
  return result;
}

const cpNode = (name: string, body = '  host_profile: cp') => nodeDoc(name, body);
const owner = (pairs: Record<string, string>) =>
  `  metadata:\n    owner_data:\n${Object.entries(pairs)
    .map(([k, v]) => `      ${k}: ${v}\n`)
    .join('')}`;

describe('keyChanges', () => {
  const cases: [string, Record<string, string>, Record<string, string>, ReturnType<typeof keyChanges>][] = [
    ['nothing differs', { a: '1' }, { a: '1' }, { gained: {}, changed: {}, lost: {} }],
    [
      'gained, changed and lost at once',
      { a: '1', b: '2' },
      { b: '3', c: '4' },
      { gained: { c: '4' }, changed: { b: { from: '2', to: '3' } }, lost: { a: '1' } },
    ],
    ['an empty value is a value', { a: '' }, { a: 'x' }, { gained: {}, changed: { a: { from: '', to: 'x' } }, lost: {} }],
  ];
  for (const [name, base, head, expected] of cases) it(name, () => assert.deepEqual(keyChanges(base, head), expected));
});

describe('canonicalJson', () => {
  it('is equal for equal values whatever the key order, and differs for any change', () => {
    assert.equal(canonicalJson({ a: 1, b: { c: [1, 2], d: null } }), canonicalJson({ b: { d: null, c: [1, 2] }, a: 1 }));
    assert.notEqual(canonicalJson({ a: [1, 2] }), canonicalJson({ a: [2, 1] }));
    assert.notEqual(canonicalJson({ a: '1' }), canonicalJson({ a: 1 }));
  });
});

describe('documentChanges', () => {
  const doc = (schema: string, name: string, data: unknown, index = 1): SiteDocument => ({ source: 'f.yaml', index, schema, name, data });
  it('names the rendered documents added, changed and removed by schema and name, sorted', () => {
    const base = [doc('x/B/v1', 'same', { a: 1 }), doc('x/A/v1', 'gone', {}), doc('x/A/v1', 'edited', { a: 1 })];
    const head = [doc('x/A/v1', 'edited', { a: 2 }), doc('x/B/v1', 'same', { a: 1 }), doc('x/A/v1', 'new', {})];
    assert.deepEqual(documentChanges(base, head), {
      added: [{ schema: 'x/A/v1', name: 'new' }],
      changed: [{ schema: 'x/A/v1', name: 'edited' }],
      removed: [{ schema: 'x/A/v1', name: 'gone' }],
    });
  });
  it('keeps a nameless document by its place', () => {
    assert.deepEqual(documentChanges([], [doc('x/A/v1', '', {}, 3)]).added, [{ schema: 'x/A/v1', name: '#3 of f.yaml' }]);
  });
});

describe('changedSourceDocuments', () => {
  it('reads only files whose text differs, and matches their documents by schema and name', () => {
    const base = [
      source('same.yaml', profileDoc('p', owner({ a: '1' }))),
      source('f.yaml', profileDoc('p', owner({ a: '1' })), profileDoc('q', owner({ b: '1' }))),
    ];
    const head = [
      source('same.yaml', profileDoc('p', owner({ a: '1' }))),
      source('f.yaml', `# a comment changes no document\n${profileDoc('q', owner({ b: '1' }))}${profileDoc('p', owner({ a: '2' }))}`),
      source('new.yaml', nodeDoc('n1', '  host_profile: p')),
    ];
    assert.deepEqual(changedSourceDocuments(base, head), [
      { source: 'f.yaml', schema: 'drydock/HostProfile/v1', name: 'p', layer: '', change: 'changed' },
      { source: 'new.yaml', schema: 'drydock/BaremetalNode/v1', name: 'n1', layer: '', change: 'added' },
    ]);
    assert.deepEqual(changedSourceDocuments(head, base).at(-1), {
      source: 'new.yaml',
      schema: 'drydock/BaremetalNode/v1',
      name: 'n1',
      layer: '',
      change: 'removed',
    });
  });
});

describe('nodeChanges and siteDiff', () => {
  it('counts the labels each node gains, changes and loses, and names the changed document a label is read from', () => {
    const base = site(owner({ zone: 'west', tier: 'gold' }), [cpNode('n1'), cpNode('n2', `  host_profile: cp\n${owner({ own: 'x' })}`)]);
    const head = site(owner({ zone: 'east', rack: 'r1' }), [cpNode('n1'), cpNode('n2', `  host_profile: cp\n${owner({ own: 'x' })}`)]);
    const cause = { source: 'site.yaml', schema: 'drydock/HostProfile/v1', name: 'cp', layer: '', change: 'changed' } as const;
    const unrelated = { source: 'site.yaml', schema: 'drydock/BaremetalNode/v1', name: 'n2', layer: '', change: 'changed' } as const;
    const diff = siteDiff(base, head, [cause, unrelated]);
    assert.equal(diff.reached, true);
    assert.deepEqual(
      diff.nodes.map((n) => [n.name, n.change, n.labels]),
      ['n1', 'n2'].map((name) => [name, 'changed', { gained: { rack: 'r1' }, changed: { zone: { from: 'west', to: 'east' } }, lost: { tier: 'gold' } }]),
    );
    // n2's own document changed too, but no label it changed is read from it.
    assert.deepEqual(
      diff.nodes.map((n) => n.causes),
      [[cause], [cause]],
    );
    assert.deepEqual(diff.keys, {
      labels: { gained: 2, changed: 2, lost: 2 },
      annotations: { gained: 0, changed: 0, lost: 0 },
      taints: { gained: 0, changed: 0, lost: 0 },
    });
    assert.deepEqual(diff.documents.changed, [{ schema: 'drydock/HostProfile/v1', name: 'cp' }]);
  });

  it('reports taints and annotations, and a node added or removed with every key', () => {
    const tainted = `  host_profile: cp\n  metadata:\n    annotations: {example.com/a: '1'}\n    taints:\n      - {key: example.com/t, value: v, effect: NoSchedule}`;
    const base = site(owner({ zone: 'west' }), [cpNode('n1'), cpNode('gone')]);
    const head = site(owner({ zone: 'west' }), [cpNode('n1', tainted), cpNode('new')]);
    const changes = nodeChanges(base.design, head.design);
    assert.deepEqual(
      changes.map((n) => [n.name, n.change]),
      [
        ['gone', 'removed'],
        ['n1', 'changed'],
        ['new', 'added'],
      ],
    );
    const n1 = changes.find((n) => n.name === 'n1');
    assert.deepEqual(n1?.taints.gained, { 'example.com/t:NoSchedule': 'v' });
    assert.deepEqual(n1?.annotations.gained, { 'example.com/a': '1' });
    assert.deepEqual(n1?.labels, { gained: {}, changed: {}, lost: {} });
    assert.equal(changes.find((n) => n.name === 'gone')?.labels.lost['zone'], 'west');
    assert.equal(changes.find((n) => n.name === 'new')?.labels.gained['zone'], 'west');
  });

  it('is unreached when nothing rendered differs, and an absent side has no documents and no nodes', () => {
    const one = site(owner({ zone: 'west' }), [cpNode('n1')]);
    const same = siteDiff(one, site(owner({ zone: 'west' }), [cpNode('n1')]));
    assert.equal(same.reached, false);
    assert.deepEqual(same.nodes, []);
    const added = siteDiff(undefined, one);
    assert.equal(added.reached, true);
    assert.deepEqual(
      added.nodes.map((n) => [n.name, n.change]),
      [['n1', 'added']],
    );
    assert.equal(added.documents.added.length, one.documents.length);
  });
});
