import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatError } from '../plan/site-error.ts';
import { nodeDoc, nodeSetDoc, policyDoc, profileDoc, rackDoc, source, yamlDoc } from '../../../test/kit/site/documents.ts';
import { validateSite } from './validate-site.ts';
import type { SiteSource } from './yaml-source.ts';

function errorsOf(sources: SiteSource[]): string[] {
  const result = validateSite(sources);
  assert.equal(result.ok, false, 'expected the site to be rejected');
  return result.ok ? [] : result.errors.map(formatError);
}

const base = [
  policyDoc('policy'),
  rackDoc('r1', { 'example.com/row': 'a' }),
  rackDoc('r2', { 'example.com/aisle': 'b' }),
  profileDoc('spare', '  metadata:\n    owner_data:\n      spare: "yes"'),
  profileDoc('worker', '  metadata:\n    owner_data:\n      role: worker\n    tags: [compute]'),
  nodeDoc('bm-1', '  host_profile: worker\n  metadata:\n    rack: r1\n    owner_data:\n      disk: ssd'),
].join('');

const karpenter = nodeSetDoc(
  'general',
  [
    '  selector:',
    '    matchLabels:',
    '      karpenter.sh/nodepool: general',
    '  host_profile: worker',
    '  metadata:',
    '    owner_data:',
    '      workload: batch',
    '    annotations:',
    '      example.com/owner: team-a',
    '    taints:',
    '      - {key: dedicated, value: batch, effect: NoSchedule}',
  ].join('\n'),
);

describe('node sets at validation', () => {
  it('resolves a set once, like a node: inheritance, generated labels, provenance', () => {
    const result = validateSite([source('site.yaml', base, karpenter)]);
    assert.ok(result.ok, result.ok ? '' : result.errors.map(formatError).join('\n'));
    const set = result.design.nodeSets?.['general'];
    assert.ok(set);
    assert.deepEqual(set.selector, { matchLabels: { 'karpenter.sh/nodepool': 'general' } });
    assert.deepEqual(set.labels, {
      'relabel.airshipit.org/host-profile': 'worker',
      role: 'worker',
      'tag.relabel.airshipit.org/compute': 'true',
      workload: 'batch',
    });
    assert.deepEqual(set.labelSources['workload'], { kind: 'node_set', set: 'general' });
    assert.deepEqual(set.labelSources['role'], { kind: 'host_profile', profile: 'worker', depth: 1 });
    assert.deepEqual(set.annotations, { 'example.com/owner': 'team-a' });
    assert.deepEqual(set.taints, [{ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }]);
    assert.deepEqual(Object.keys(result.design.nodes), ['bm-1']);
  });

  it('a design without sets has no nodeSets field', () => {
    const result = validateSite([source('site.yaml', base)]);
    assert.ok(result.ok);
    assert.equal(Object.hasOwn(result.design, 'nodeSets'), false);
  });

  const refused: { name: string; set: string; expected: string[] }[] = [
    {
      name: 'a selector reading a key a node sets',
      set: nodeSetDoc('s', '  selector:\n    matchLabels:\n      disk: ssd'),
      expected: ['disk', 'drydock/BaremetalNode/v1 "bm-1"'],
    },
    {
      name: 'a selector reading a key a profile sets',
      set: nodeSetDoc('s', '  selector:\n    matchExpressions:\n      - {key: spare, operator: Exists}'),
      expected: ['spare', 'drydock/HostProfile/v1 "spare"'],
    },
    {
      name: 'a selector reading a key another set sets',
      set: nodeSetDoc('s', '  selector:\n    matchLabels:\n      workload: batch'),
      expected: ['workload', 'relabel/NodeSet/v1 "general"'],
    },
    {
      name: 'a selector reading a rack label',
      set: nodeSetDoc('s', '  selector:\n    matchLabels:\n      example.com/aisle: b'),
      expected: ['example.com/aisle', 'drydock/Rack/v1 "r2"'],
    },
    {
      name: 'a selector reading a generated label',
      set: nodeSetDoc('s', '  selector:\n    matchLabels:\n      tag.relabel.airshipit.org/gpu: "true"'),
      expected: ['tag.relabel.airshipit.org/gpu', 'label domain'],
    },
  ];
  for (const { name, set, expected } of refused) {
    it(`refuses ${name}, naming the document and key`, () => {
      const errors = errorsOf([source('site.yaml', base, karpenter, set)]);
      assert.equal(errors.length, 1, errors.join('\n'));
      assert.match(errors[0] ?? '', /relabel\/NodeSet\/v1 "s" data\.selector\./);
      for (const part of expected) assert.ok(errors[0]?.includes(part), errors[0]);
      assert.ok(errors[0]?.includes('which relabel owns'), errors[0]);
    });
  }

  it('refuses a selector in a label plugin namespace', () => {
    const plugin = yamlDoc('relabel/LabelPlugin/v1', 'nics', '  source: json\n  path: /etc/relabel/nics.json\n  namespaces: ["nic.example.com/*"]');
    const set = nodeSetDoc('s', '  selector:\n    matchLabels:\n      nic.example.com/speed: "25g"');
    const errors = errorsOf([source('site.yaml', base, plugin, set)]);
    assert.equal(errors.length, 1, errors.join('\n'));
    assert.ok(errors[0]?.includes('namespace "nic.example.com/*" of relabel/LabelPlugin/v1 "nics"'), errors[0]);
  });

  it('refuses malformed selectors, unknown operators and missing host profiles at their fields', () => {
    const bad = [
      nodeSetDoc('no-selector', '  host_profile: worker'),
      nodeSetDoc('bad-op', '  selector:\n    matchExpressions:\n      - {key: zone, operator: Gt, values: ["1"]}'),
      nodeSetDoc('no-values', '  selector:\n    matchExpressions:\n      - {key: zone, operator: In}'),
      nodeSetDoc('no-profile', '  selector:\n    matchLabels: {zone: a}\n  host_profile: missing'),
      nodeSetDoc('empty', '  selector: {}'),
    ];
    const errors = errorsOf([source('sets.yaml', base, ...bad)]);
    const expected = [
      /"no-selector" data: missing required field "selector"/,
      /"bad-op" data\.selector\.matchExpressions\[0\]\.operator: unknown operator "Gt"/,
      /"no-values" data\.selector\.matchExpressions\[0\]\.operator: operator In needs at least one value/,
      /"no-profile" data\.host_profile: host profile "missing" is not defined/,
      /"empty" data\.selector: a selector needs at least one requirement/,
    ];
    assert.equal(errors.length, expected.length, errors.join('\n'));
    for (const re of expected)
      assert.ok(
        errors.some((e) => re.test(e)),
        `${re}\n${errors.join('\n')}`,
      );
  });

  it('refuses two sets of one name', () => {
    const errors = errorsOf([source('site.yaml', base, karpenter, karpenter)]);
    assert.equal(errors.length, 2, errors.join('\n'));
    assert.ok(errors.every((e) => e.includes('duplicate relabel/NodeSet/v1 "general"')));
  });
});
