import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ECHO_MAX_CHARS } from '../plan/text.ts';
import { documentErrorsMessage, formatError, MAX_LISTED_ERRORS } from '../plan/site-error.ts';
import { MAX_ERRORS_PER_LABEL_MAP } from './document-check.ts';
import { MAX_ALIASES_PER_DOCUMENT, MAX_ALIASES_PER_OTHER_DOCUMENT } from './yaml-source.ts';
import { nodeDoc, policyDoc, profileDoc, rackDoc, source, yamlDoc } from '../../../test/kit/site/documents.ts';
import { validateSite } from './validate-site.ts';
import type { SiteSource } from './yaml-source.ts';

function errorsOf(sources: SiteSource[]): string[] {
  const result = validateSite(sources);
  assert.equal(result.ok, false, 'expected the site to be rejected');
  return result.ok ? [] : result.errors.map(formatError);
}

const rack = rackDoc('r1');
const valueMessage =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const nameMessage =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

// Each case: the sources, and every error expected, formatted. Node and
// profile bodies start at line 7 of their document (see test/kit/site/documents.ts).
const cases: { name: string; sources: SiteSource[]; expected: string[] }[] = [
  {
    name: 'label key syntax',
    sources: [source('n.yaml', nodeDoc('n1', '  metadata:\n    owner_data:\n      Ceph OSD: enabled'))],
    expected: [`n.yaml:9:7 drydock/BaremetalNode/v1 "n1" data.metadata.owner_data["Ceph OSD"]: Invalid value: "Ceph OSD": ${nameMessage}`],
  },
  {
    name: 'label value syntax',
    sources: [source('n.yaml', nodeDoc('n1', '  metadata:\n    owner_data:\n      ceph-osd: "yes please"'))],
    expected: [`n.yaml:9:17 drydock/BaremetalNode/v1 "n1" data.metadata.owner_data["ceph-osd"]: Invalid value: "yes please": ${valueMessage}`],
  },
  {
    name: 'kubelet-owned key',
    sources: [source('p.yaml', profileDoc('p1', '  metadata:\n    owner_data:\n      kubernetes.io/hostname: n1'))],
    expected: [
      'p.yaml:9:7 drydock/HostProfile/v1 "p1" data.metadata.owner_data["kubernetes.io/hostname"]: label "kubernetes.io/hostname" is owned by the kubelet; documents may not set it (relabel never writes or removes it)',
    ],
  },
  {
    name: 'host profile cycle, reported once per member and not again for nodes',
    sources: [source('p.yaml', profileDoc('b', '  host_profile: a'), profileDoc('a', '  host_profile: b'), nodeDoc('n1', '  host_profile: a'))],
    expected: [
      'p.yaml:7:17 drydock/HostProfile/v1 "b" data.host_profile: host profile inheritance cycle: a -> b -> a',
      'p.yaml:14:17 drydock/HostProfile/v1 "a" data.host_profile: host profile inheritance cycle: a -> b -> a',
    ],
  },
  {
    name: 'dangling host profile, on a node and on a profile',
    sources: [source('s.yaml', profileDoc('p1', '  host_profile: nope'), nodeDoc('n1', '  host_profile: computee'))],
    expected: [
      's.yaml:7:17 drydock/HostProfile/v1 "p1" data.host_profile: host profile "nope" is not defined (no drydock/HostProfile/v1 document named "nope")',
      's.yaml:14:17 drydock/BaremetalNode/v1 "n1" data.host_profile: host profile "computee" is not defined (no drydock/HostProfile/v1 document named "computee")',
    ],
  },
  {
    name: 'duplicate node names, across files, each naming the other',
    sources: [source('a.yaml', nodeDoc('n1', '')), source('b.yaml', '# comment\n', nodeDoc('n1', ''))],
    expected: [
      'a.yaml:5:9 drydock/BaremetalNode/v1 "n1" metadata.name: duplicate drydock/BaremetalNode/v1 "n1": also defined at b.yaml:6:9',
      'b.yaml:6:9 drydock/BaremetalNode/v1 "n1" metadata.name: duplicate drydock/BaremetalNode/v1 "n1": also defined at a.yaml:5:9',
    ],
  },
  {
    name: 'bad YAML in one file does not hide errors in another',
    sources: [
      source('bad.yaml', 'schema: drydock/BaremetalNode/v1\nmetadata: {name: n1\n'),
      source('n.yaml', nodeDoc('n2', '  metadata:\n    owner_data:\n      ok: "-bad"')),
    ],
    expected: [
      'bad.yaml:3:1 drydock/BaremetalNode/v1 "n1": Flow map in block collection must be sufficiently indented and end with a }',
      `n.yaml:9:11 drydock/BaremetalNode/v1 "n2" data.metadata.owner_data.ok: Invalid value: "-bad": ${valueMessage}`,
    ],
  },
  {
    name: 'unknown field where relabel interprets, reported at the key',
    sources: [source('n.yaml', nodeDoc('n1', '  metadata:\n    owner-data:\n      a: b'))],
    expected: ['n.yaml:8:5 drydock/BaremetalNode/v1 "n1" data.metadata["owner-data"]: unknown field "owner-data"'],
  },
  {
    name: 'non-string label value',
    sources: [source('n.yaml', nodeDoc('n1', '  metadata:\n    owner_data:\n      ceph-osd: true'))],
    expected: ['n.yaml:9:17 drydock/BaremetalNode/v1 "n1" data.metadata.owner_data["ceph-osd"]: label values must be strings; quote it in YAML (e.g. "true")'],
  },
  {
    name: 'unquoted ! key and bare ! rack',
    sources: [source('n.yaml', nodeDoc('n1', '  metadata:\n    rack: !\n    tags:\n      - !masters'))],
    expected: [
      `n.yaml:8:11 drydock/BaremetalNode/v1 "n1": a bare '!' is a YAML tag, not a value (quote values that start with '!', e.g. '!ceph-osd', or '!' to unset)`,
      `n.yaml:10:9 drydock/BaremetalNode/v1 "n1": Unresolved tag: !masters (quote values that start with '!', e.g. '!ceph-osd')`,
    ],
  },
  {
    name: 'document label conflicting with a generated label',
    sources: [source('s.yaml', rack, nodeDoc('n1', '  metadata:\n    rack: r1\n    owner_data:\n      relabel.airshipit.org/rack: r2'))],
    expected: [
      's.yaml:17:7 drydock/BaremetalNode/v1 "n1" data.metadata.owner_data["relabel.airshipit.org/rack"]: label "relabel.airshipit.org/rack"="r2" conflicts with generated value "r1" (from rack "r1") on node "n1"; a document may not override a generated label',
    ],
  },
  {
    name: 'protected key',
    sources: [
      source(
        's.yaml',
        policyDoc('policy', { protected_keys: 'protected_keys: [feature.node.kubernetes.io/]' }),
        nodeDoc('n1', '  metadata:\n    owner_data:\n      feature.node.kubernetes.io/cpu: x'),
      ),
    ],
    expected: [
      's.yaml:21:7 drydock/BaremetalNode/v1 "n1" data.metadata.owner_data["feature.node.kubernetes.io/cpu"]: label "feature.node.kubernetes.io/cpu" is protected by the label policy; relabel never writes or removes it',
    ],
  },
  {
    name: 'two policies',
    sources: [source('a.yaml', policyDoc('p1')), source('b.yaml', policyDoc('p2'))],
    expected: [
      'a.yaml:2:1 relabel/LabelPolicy/v1 "p1": a site has at most one relabel/LabelPolicy/v1 document; another is at b.yaml:2',
      'b.yaml:2:1 relabel/LabelPolicy/v1 "p2": a site has at most one relabel/LabelPolicy/v1 document; another is at a.yaml:2',
    ],
  },
  {
    name: 'setting and deleting the same key',
    sources: [source('p.yaml', profileDoc('p1', "  metadata:\n    owner_data:\n      a: b\n      '!a': ''"))],
    expected: ['p.yaml:10:7 drydock/HostProfile/v1 "p1" data.metadata.owner_data["!a"]: both "a" and "!a" are given; set the key or delete it, not both'],
  },
  {
    name: 'node name that cannot be a Kubernetes Node name',
    sources: [source('n.yaml', nodeDoc('Cab23', ''))],
    expected: [
      `n.yaml:5:9 drydock/BaremetalNode/v1 "Cab23" metadata.name: a Kubernetes Node name is required: Invalid value: "Cab23": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    ],
  },
  {
    name: 'policy: unknown relabel schema, missing field, bad concurrency',
    sources: [
      source(
        'p.yaml',
        yamlDoc('relabel/LabelPolicy/v2', 'x', ''),
        policyDoc('p', { lift_uninitialized_taint: '', default_concurrency: 'default_concurrency: 0' }),
      ),
    ],
    expected: [
      'p.yaml:2:9 relabel/LabelPolicy/v2 "x" schema: unknown relabel schema "relabel/LabelPolicy/v2" (known: relabel/LabelPolicy/v1, relabel/LabelPlugin/v1, relabel/NodeSet/v1)',
      'p.yaml:13:3 relabel/LabelPolicy/v1 "p" data.lift_uninitialized_taint: missing required field "lift_uninitialized_taint" (expected boolean)',
      'p.yaml:17:24 relabel/LabelPolicy/v1 "p" data.default_concurrency: Too small: expected number to be >=1',
    ],
  },
  {
    name: 'a conflict in a shared profile is reported once, naming the nodes',
    sources: [
      source(
        's.yaml',
        rackDoc('r1'),
        rackDoc('r2'),
        profileDoc('p1', '  metadata:\n    owner_data:\n      relabel.airshipit.org/rack: r1'),
        ...['n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7'].map((n) => nodeDoc(n, `  host_profile: p1\n  metadata:\n    rack: r2`)),
      ),
    ],
    expected: [
      's.yaml:23:7 drydock/HostProfile/v1 "p1" data.metadata.owner_data["relabel.airshipit.org/rack"]: label "relabel.airshipit.org/rack"="r1" conflicts with generated value "r2" (from rack "r2") on nodes "n1", "n2", "n3", "n4", "n5" and 2 more; a document may not override a generated label',
    ],
  },
  {
    name: 'policy: bad label domain, protected entry hiding a generated label',
    sources: [source('p.yaml', policyDoc('p', { label_domain: 'label_domain: Labels.Example', protected_keys: 'protected_keys: [tag.Labels.Example/]' }))],
    expected: [
      `p.yaml:7:17 relabel/LabelPolicy/v1 "p" data.label_domain: Invalid value: "Labels.Example": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      `p.yaml:9:20 relabel/LabelPolicy/v1 "p" data.protected_keys[0]: Invalid value: "tag.Labels.Example/": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
      'p.yaml:9:20 relabel/LabelPolicy/v1 "p" data.protected_keys[0]: protected entry "tag.Labels.Example/" covers generated label "tag.Labels.Example/*", which relabel could then never write; turn that generator off or unprotect it',
    ],
  },
  {
    name: 'a tag that cannot name a generated label',
    sources: [source('n.yaml', nodeDoc('n1', '  metadata:\n    tags: [fast disk]'))],
    expected: [
      `n.yaml:8:12 drydock/BaremetalNode/v1 "n1" data.metadata.tags[0]: tag "fast disk" cannot name generated label "tag.relabel.airshipit.org/fast disk": Invalid value: "tag.relabel.airshipit.org/fast disk": ${nameMessage}`,
    ],
  },
  {
    name: 'two regions, and a duplicated YAML key',
    sources: [
      source('r.yaml', yamlDoc('drydock/Region/v1', 'a', ''), yamlDoc('drydock/Region/v1', 'b', '')),
      source('n.yaml', nodeDoc('n1', '  metadata:\n    owner_data: {a: x, a: y}')),
    ],
    expected: [
      'n.yaml:8:24 drydock/BaremetalNode/v1 "n1": Map keys must be unique',
      'r.yaml:2:1 drydock/Region/v1 "a": a site has at most one drydock/Region/v1 document; another is at r.yaml:8',
      'r.yaml:8:1 drydock/Region/v1 "b": a site has at most one drydock/Region/v1 document; another is at r.yaml:2',
    ],
  },
  {
    name: 'a document that is not a mapping',
    sources: [source('x.yaml', '---\n- a\n- b\n')],
    expected: ['x.yaml:2:1 document 1: a document must be a mapping with schema, metadata and data'],
  },
];

describe('validateSite rejects each class of bad input, with exact locations', () => {
  for (const { name, sources, expected } of cases) {
    it(name, () => assert.deepEqual(errorsOf(sources), expected));
  }
});

describe('validateSite on valid input', () => {
  const site = [
    source(
      'site.yaml',
      rackDoc('r1', { 'power-domain': 'pd-a' }),
      rackDoc('r2', { 'power-domain': 'pd-b' }),
      profileDoc(
        'base',
        "  metadata:\n    rack: r1\n    tags: [a, b]\n    owner_data:\n      x: '1'\n      y: '2'\n      z: '3'\n" +
          '    annotations:\n      example.com/a: one\n      example.com/b: two\n' +
          '    taints:\n      - {key: example.com/gpu, value: "yes", effect: NoSchedule}\n      - {key: example.com/gpu, effect: NoExecute}\n' +
          '      - {key: example.com/slow, effect: PreferNoSchedule}',
      ),
      profileDoc(
        'child',
        "  host_profile: base\n  metadata:\n    rack: r2\n    tags: ['!a', c]\n    owner_data:\n      '!y': ''\n      z: '30'\n" +
          "    annotations:\n      '!example.com/a': ''\n      example.com/b: child\n" +
          "    taints:\n      - {key: '!example.com/gpu', effect: NoExecute}\n      - {key: '!example.com/slow'}\n      - {key: example.com/gpu, value: 'no', effect: NoSchedule}",
      ),
      nodeDoc(
        'n1',
        "  host_profile: child\n  metadata:\n    rack: '!'\n    tags: [d]\n    owner_data:\n      w: '0'\n    annotations:\n      example.com/c: node",
      ),
      nodeDoc('n2', '  host_profile: child'),
      yamlDoc('drydock/NetworkLink/v1', 'oob', '  mtu: 1500\n  unknown_to_us: [1, 2]'),
    ),
  ];

  it('inherits annotations and taints as owner_data: child wins, !key deletes (a taint deletion with an effect only that one)', () => {
    const result = validateSite(site);
    assert.ok(result.ok, result.ok ? '' : result.errors.map(formatError).join('\n'));
    assert.deepEqual(result.design.nodes['n1']?.annotations, { 'example.com/b': 'child', 'example.com/c': 'node' });
    assert.deepEqual(result.design.nodes['n1']?.taints, [{ key: 'example.com/gpu', value: 'no', effect: 'NoSchedule' }]);
    assert.deepEqual(result.design.nodes['n2']?.annotations, { 'example.com/b': 'child' });
  });

  it('resolves Drydock inheritance: child wins, !key deletes, tags merge, rack ! unsets', () => {
    const result = validateSite(site);
    assert.ok(result.ok, result.ok ? '' : result.errors.map(formatError).join('\n'));
    assert.deepEqual(result.design.nodes['n1'], {
      name: 'n1',
      hostProfile: 'child',
      profileChain: ['child', 'base'],
      rack: null,
      tags: ['b', 'c', 'd'],
      ownerData: { w: '0', x: '1', z: '30' },
      labels: {
        'relabel.airshipit.org/host-profile': 'child',
        'tag.relabel.airshipit.org/b': 'true',
        'tag.relabel.airshipit.org/c': 'true',
        'tag.relabel.airshipit.org/d': 'true',
        w: '0',
        x: '1',
        z: '30',
      },
      labelSources: {
        'relabel.airshipit.org/host-profile': { kind: 'generated', generator: 'host_profile' },
        'tag.relabel.airshipit.org/b': { kind: 'generated', generator: 'tag' },
        'tag.relabel.airshipit.org/c': { kind: 'generated', generator: 'tag' },
        'tag.relabel.airshipit.org/d': { kind: 'generated', generator: 'tag' },
        w: { kind: 'node' },
        x: { kind: 'host_profile', profile: 'base', depth: 2 },
        z: { kind: 'host_profile', profile: 'child', depth: 1 },
      },
      annotations: { 'example.com/b': 'child', 'example.com/c': 'node' },
      taints: [{ key: 'example.com/gpu', value: 'no', effect: 'NoSchedule' }],
    });
    assert.equal(result.design.nodes['n2']?.rack, 'r2');
    assert.equal(result.design.nodes['n2']?.labels['power-domain'], 'pd-b');
    assert.equal(result.design.nodes['n2']?.labels['relabel.airshipit.org/rack'], 'r2');
    assert.deepEqual(result.design.nodes['n2']?.labelSources['power-domain'], { kind: 'rack', rack: 'r2' });
    assert.deepEqual(result.design.nodes['n2']?.labelSources['relabel.airshipit.org/rack'], { kind: 'generated', generator: 'rack' });
    assert.deepEqual(result.design.hostProfiles, ['base', 'child']);
    assert.equal(result.design.site, 'default');
  });

  it('passes documents of other schemas through untouched', () => {
    const result = validateSite(site);
    assert.ok(result.ok);
    const link = result.documents.find((d) => d.schema === 'drydock/NetworkLink/v1');
    assert.deepEqual(link, { source: 'site.yaml', index: 7, schema: 'drydock/NetworkLink/v1', name: 'oob', data: { mtu: 1500, unknown_to_us: [1, 2] } });
  });

  it('generates only the labels the policy switches on, under its domain', () => {
    const policy = policyDoc('policy', {
      label_domain: 'label_domain: labels.example.com',
      generated_labels: 'generated_labels: {rack: true, host_profile: false, tags: false, rack_labels: false, site: true}',
    });
    const result = validateSite([
      source('s.yaml', policy, rackDoc('r1', { a: 'b' }), yamlDoc('drydock/Region/v1', 'lab1', ''), nodeDoc('n1', '  metadata:\n    rack: r1\n    tags: [t]')),
    ]);
    assert.ok(result.ok, result.ok ? '' : result.errors.map(formatError).join('\n'));
    assert.deepEqual(result.design.nodes['n1']?.labels, { 'labels.example.com/rack': 'r1', 'labels.example.com/site': 'lab1' });
    assert.equal(result.design.policy.defaultConcurrency, 4);
  });

  it('takes a rack with no Rack document as Drydock does: the rack label, no rack labels', () => {
    const result = validateSite([source('s.yaml', profileDoc('p1', '  metadata:\n    rack: r9'), nodeDoc('n1', '  host_profile: p1'))]);
    assert.ok(result.ok, result.ok ? '' : result.errors.map(formatError).join('\n'));
    assert.equal(result.design.nodes['n1']?.rack, 'r9');
    assert.equal(result.design.nodes['n1']?.labels['relabel.airshipit.org/rack'], 'r9');
    assert.deepEqual(result.design.racks, {});
  });

  it('keeps the region of the lowest layer when a global and a site region are given, as Drydock keeps the last', () => {
    const layered = (name: string, layer: string) =>
      yamlDoc('drydock/Region/v1', name, '').replace(`  name: ${name}\n`, `  name: ${name}\n  layeringDefinition: {layer: ${layer}}\n`);
    const policy = '---\nschema: deckhand/LayeringPolicy/v1\nmetadata: {schema: metadata/Control/v1, name: lp}\ndata: {layerOrder: [global, type, site]}\n';
    const result = validateSite([source('s.yaml', policy, layered('the-site', 'site'), layered('region-profile', 'global'))]);
    assert.ok(result.ok, result.ok ? '' : result.errors.map(formatError).join('\n'));
    assert.equal(result.design.site, 'the-site');
  });

  it('ignores abstract (layering template) documents', () => {
    const abstract = nodeDoc('template', '').replace('  name: template\n', '  name: template\n  layeringDefinition: {abstract: true, layer: global}\n');
    const result = validateSite([source('s.yaml', abstract)]);
    assert.ok(result.ok);
    assert.deepEqual(Object.keys(result.design.nodes), []);
  });

  it('is all-or-nothing: one bad document means no design at all', () => {
    const result = validateSite([...site, source('bad.yaml', nodeDoc('n3', '  host_profile: missing'))]);
    assert.equal(result.ok, false);
    assert.equal('design' in result, false);
  });
});

describe('validateSite on amplifying input', () => {
  const head = (name: string) =>
    `schema: drydock/BaremetalNode/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: ${name}\ndata:\n  host_profile: p\n  metadata:\n    owner_data:\n`;

  it(`refuses a document with more than ${MAX_ALIASES_PER_DOCUMENT} aliases unread`, () => {
    let text = `${head('n1')}      k0: &a "x!"\n`;
    for (let i = 1; i <= MAX_ALIASES_PER_DOCUMENT + 1; i++) text += `      k${i}: *a\n`;
    const result = validateSite([{ source: 'a.yaml', text }]);
    assert.ok(!result.ok);
    assert.deepEqual(
      result.errors.map((e) => [e.line, e.message]),
      [
        [
          10 + MAX_ALIASES_PER_DOCUMENT,
          `too many YAML aliases: a document relabel reads may use at most ${MAX_ALIASES_PER_DOCUMENT} (this one is refused unread)`,
        ],
      ],
    );
  });

  it(`reads up to ${MAX_ALIASES_PER_OTHER_DOCUMENT} aliases in a document of a schema relabel does not read`, () => {
    let text = '---\nschema: pegleg/SoftwareVersions/v1\nmetadata: {schema: metadata/Document/v1, name: versions}\ndata:\n  base: &a {tag: v1}\n';
    for (let i = 1; i <= MAX_ALIASES_PER_OTHER_DOCUMENT; i++) text += `  c${i}: *a\n`;
    assert.ok(validateSite([{ source: 'v.yaml', text }]).ok);
    const refused = validateSite([{ source: 'v.yaml', text: `${text}  over: *a\n` }]);
    assert.ok(
      !refused.ok && refused.errors.some((e) => e.message.startsWith(`too many YAML aliases: a document may use at most ${MAX_ALIASES_PER_OTHER_DOCUMENT}`)),
    );
  });

  it('echoes an aliased large value cut, in errors of bounded size', () => {
    let text = `${head('n1')}      k0: &a "${'v'.repeat(200_000)}!"\n`;
    for (let i = 1; i <= MAX_ALIASES_PER_DOCUMENT; i++) text += `      k${i}: *a\n`;
    const result = validateSite([{ source: 'a.yaml', text }]);
    assert.ok(!result.ok);
    const invalid = result.errors.filter((e) => e.message.startsWith('Invalid value: '));
    // Two messages per value (too long, bad syntax), at most the map's listed errors.
    assert.equal(invalid.length, MAX_ERRORS_PER_LABEL_MAP);
    for (const e of invalid) assert.ok(e.message.includes(`"${'v'.repeat(ECHO_MAX_CHARS)}…" (200001 characters)`), e.message.slice(0, 400));
    const message = documentErrorsMessage('bucket b', result.errors);
    assert.ok(message.length < 150_000, `${message.length} characters`);
  });

  it(`lists ${MAX_ERRORS_PER_LABEL_MAP} errors of a label map and counts the rest`, () => {
    let text = head('n1');
    for (let i = 0; i < 5000; i++) text += `      "bad key ${i}": "v"\n`;
    const result = validateSite([{ source: 'a.yaml', text }]);
    assert.ok(!result.ok);
    const last = result.errors.find((e) => e.message.includes('not listed'));
    assert.equal(last?.message, `${5000 - MAX_ERRORS_PER_LABEL_MAP} more error(s) in this map are not listed (at most ${MAX_ERRORS_PER_LABEL_MAP} are)`);
  });

  it(`lists at most ${MAX_LISTED_ERRORS} errors in a message, counting all`, () => {
    let text = '';
    for (let i = 0; i < 300; i++) text += `---\n${head(`n${i}`)}      "bad key": "v"\n`;
    const result = validateSite([{ source: 'a.yaml', text }]);
    assert.ok(!result.ok);
    const lines = documentErrorsMessage('bucket b', result.errors).split('\n');
    assert.equal(lines[0], `bucket b: ${result.errors.length} document error(s):`);
    assert.equal(lines.length, 1 + MAX_LISTED_ERRORS + 1);
    assert.equal(lines.at(-1), `… and ${result.errors.length - MAX_LISTED_ERRORS} more error(s), not listed (at most ${MAX_LISTED_ERRORS} are)`);
  });

  it('refuses nested aliases that would expand exponentially', () => {
    // Ten levels of ten aliases each: 10^10 values if expanded.
    let text = `${head('n1')}      k: v\n  x0: &a0 [v, v, v, v, v, v, v, v, v, v]\n`;
    for (let level = 1; level < 10; level++)
      text += `  x${level}: &a${level} [${Array(10)
        .fill(`*a${level - 1}`)
        .join(', ')}]\n`;
    const result = validateSite([{ source: 'a.yaml', text }]);
    assert.ok(!result.ok);
    assert.deepEqual(
      result.errors.map((e) => e.message),
      ['cannot read the document: Excessive alias count indicates a resource exhaustion attack'],
    );
  });

  it('finds duplicate keys of a large mapping', () => {
    let text = head('n1');
    for (let i = 0; i < 20_000; i++) text += `      k${i}: v\n`;
    text += '      k7: w\n';
    const result = validateSite([{ source: 'a.yaml', text }]);
    assert.ok(!result.ok);
    assert.deepEqual(
      result.errors.map((e) => [e.line, e.column, e.message]),
      [[9 + 20_000, 7, 'Map keys must be unique']],
    );
  });
});
