import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { PYYAML_OPTIONS } from './pyyaml-schema.ts';
import { formatLabelSource, type LabelSource } from './label-provenance.ts';
import { validateSite, type Design } from './validate-site.ts';

// A random valid site: an acyclic chain of host profiles with owner_data
// (sets and `!k` deletions), nodes with owner_data, tags and racks, racks
// with labels, and a policy switching generators on and off. Owner keys,
// rack label keys and generated keys are disjoint except `shared`, which a
// node, a profile and a rack may all give with the same value.
type Layer = { parent?: string; owner: Record<string, string>; tags: string[]; rack?: string };
type Site = {
  profiles: [string, Layer][];
  nodes: [string, Layer][];
  racks: [string, Record<string, string>][];
  generators: { rack: boolean; host_profile: boolean; tags: boolean; rack_labels: boolean; site: boolean };
};

const ownerKeys = ['a', 'b', 'c', 'shared'];
const value = (key: string) => (key === 'shared' ? fc.constant('same') : fc.constantFrom('1', '2'));
const ownerData = fc
  .record({
    set: fc.subarray(ownerKeys, { maxLength: 3 }).chain((keys) => fc.tuple(...keys.map((k) => value(k).map((v): [string, string] => [k, v])))),
    deleted: fc.subarray(ownerKeys, { maxLength: 2 }),
  })
  .map(({ set, deleted }) => {
    const owner: Record<string, string> = Object.fromEntries(set);
    for (const key of deleted) if (!(key in owner)) owner[`!${key}`] = '';
    return owner;
  });
const profileNames = ['p0', 'p1', 'p2', 'p3'];
const layer = (parents: readonly string[]) =>
  fc.record({
    parent: parents.length === 0 ? fc.constant(undefined) : fc.option(fc.constantFrom(...parents), { nil: undefined }),
    owner: ownerData,
    tags: fc.subarray(['t1', 't2'], { maxLength: 2 }),
    rack: fc.option(fc.constantFrom('r1', 'r2'), { nil: undefined }),
  });
const siteArbitrary: fc.Arbitrary<Site> = fc.record({
  profiles: fc.tuple(...profileNames.map((name, i) => layer(profileNames.slice(0, i)).map((l): [string, Layer] => [name, strip(l)]))),
  nodes: fc.uniqueArray(fc.tuple(fc.constantFrom('n1', 'n2', 'n3', 'n4'), layer(profileNames).map(strip)), {
    selector: ([n]) => n,
    minLength: 1,
    maxLength: 4,
  }),
  racks: fc.tuple(
    ...['r1', 'r2'].map((name) =>
      fc
        .record({ zone: fc.option(fc.constantFrom('z1', 'z2'), { nil: undefined }), shared: fc.option(fc.constant('same'), { nil: undefined }) })
        .map((labels): [string, Record<string, string>] => [
          name,
          Object.fromEntries(Object.entries(labels).filter(([, v]) => v !== undefined)) as Record<string, string>,
        ]),
    ),
  ),
  generators: fc.record({ rack: fc.boolean(), host_profile: fc.boolean(), tags: fc.boolean(), rack_labels: fc.boolean(), site: fc.boolean() }),
});

function strip(l: { parent: string | undefined; owner: Record<string, string>; tags: string[]; rack: string | undefined }): Layer {
  return { ...(l.parent === undefined ? {} : { parent: l.parent }), owner: l.owner, tags: l.tags, ...(l.rack === undefined ? {} : { rack: l.rack }) };
}

function siteText(site: Site): { source: string; text: string }[] {
  const doc = (schema: string, name: string, data: unknown) =>
    `---\n${stringify({ schema, metadata: { schema: 'metadata/Document/v1', name }, data }, PYYAML_OPTIONS)}`;
  const host = (schema: string, name: string, l: Layer) =>
    doc(schema, name, {
      ...(l.parent === undefined ? {} : { host_profile: l.parent }),
      metadata: { owner_data: l.owner, tags: l.tags, ...(l.rack === undefined ? {} : { rack: l.rack }) },
    });
  const policy = {
    generated_labels: site.generators,
    protected_keys: [],
    reconcile_os_arch_aliases: true,
    lift_uninitialized_taint: false,
    default_concurrency: 4,
  };
  const text = [
    doc('drydock/Region/v1', 'lab', {}),
    doc('relabel/LabelPolicy/v1', 'policy', policy),
    ...site.racks.map(([name, labels]) => doc('drydock/Rack/v1', name, { labels })),
    ...site.profiles.map(([name, l]) => host('drydock/HostProfile/v1', name, l)),
    ...site.nodes.map(([name, l]) => host('drydock/BaremetalNode/v1', name, l)),
  ].join('');
  return [{ source: 'site.yaml', text }];
}

function design(site: Site): Design {
  const result = validateSite(siteText(site));
  assert.ok(result.ok, result.ok ? '' : JSON.stringify(result.errors.map((e) => e.message)));
  return result.design;
}

/** The site without the entry `source` names for `key` on node `node`. */
function withoutSource(site: Site, node: string, key: string, source: LabelSource, chain: readonly string[]): Site {
  const next = structuredClone(site);
  const dropKey = (l: Layer) => {
    delete l.owner[key];
  };
  switch (source.kind) {
    case 'node':
      dropKey(next.nodes.find(([n]) => n === node)?.[1] as Layer);
      break;
    case 'host_profile':
      assert.equal(chain[source.depth - 1], source.profile, 'the depth names the profile in the chain');
      dropKey(next.profiles.find(([p]) => p === source.profile)?.[1] as Layer);
      break;
    case 'rack':
      delete next.racks.find(([r]) => r === source.rack)?.[1][key];
      break;
    case 'generated':
      next.generators[source.generator === 'tag' ? 'tags' : source.generator] = false;
      break;
    case 'plugin':
      assert.fail('no plugin gives labels here');
  }
  return next;
}

describe('label provenance', () => {
  it('gives every desired key exactly one source, consistent with the documents', () => {
    fc.assert(
      fc.property(siteArbitrary, (site) => {
        const d = design(site);
        for (const node of Object.values(d.nodes)) {
          assert.deepEqual(Object.keys(node.labelSources), Object.keys(node.labels));
          for (const [key, source] of Object.entries(node.labelSources)) {
            const wanted = node.labels[key];
            if (source.kind === 'node') assert.equal(site.nodes.find(([n]) => n === node.name)?.[1].owner[key], wanted);
            if (source.kind === 'host_profile') {
              assert.equal(node.profileChain[source.depth - 1], source.profile);
              assert.equal(site.profiles.find(([p]) => p === source.profile)?.[1].owner[key], wanted);
            }
            if (source.kind === 'rack') assert.equal(new Map(site.racks).get(source.rack)?.[key], wanted);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('removing the source of a label removes the label, changes its value, or leaves another source giving it', () => {
    const scenario = siteArbitrary.chain((site) => {
      const d = design(site);
      const labelled = Object.values(d.nodes).flatMap((n) => Object.keys(n.labels).map((key) => ({ node: n.name, key })));
      return fc.tuple(fc.constant(site), labelled.length === 0 ? fc.constant(undefined) : fc.constantFrom(...labelled));
    });
    fc.assert(
      fc.property(scenario, ([site, pick]) => {
        if (pick === undefined) return;
        const before = design(site).nodes[pick.node];
        assert.ok(before);
        const source = before.labelSources[pick.key] as LabelSource;
        const after = design(withoutSource(site, pick.node, pick.key, source, before.profileChain)).nodes[pick.node];
        const then = after?.labelSources[pick.key];
        const changed = then === undefined || after?.labels[pick.key] !== before.labels[pick.key] || formatLabelSource(then) !== formatLabelSource(source);
        assert.ok(changed, `${pick.node} ${pick.key} still from ${formatLabelSource(source)} after removing it`);
      }),
      { numRuns: 300 },
    );
  });

  it('attributes a key given alike by several sources to owner_data, then the rack, then the generator', () => {
    const site: Site = {
      profiles: [
        ['p0', { owner: { shared: 'same' }, tags: [] }],
        ['p1', { parent: 'p0', owner: {}, tags: [] }],
        ['p2', { owner: {}, tags: [] }],
        ['p3', { owner: {}, tags: [] }],
      ],
      nodes: [
        ['n1', { parent: 'p1', owner: {}, tags: [], rack: 'r1' }],
        ['n2', { parent: 'p2', owner: { shared: 'same' }, tags: [], rack: 'r1' }],
        ['n3', { parent: 'p2', owner: {}, tags: [], rack: 'r1' }],
      ],
      racks: [
        ['r1', { shared: 'same' }],
        ['r2', {}],
      ],
      generators: { rack: true, host_profile: true, tags: true, rack_labels: true, site: true },
    };
    const d = design(site);
    assert.deepEqual(d.nodes['n1']?.labelSources['shared'], { kind: 'host_profile', profile: 'p0', depth: 2 });
    assert.deepEqual(d.nodes['n2']?.labelSources['shared'], { kind: 'node' });
    assert.deepEqual(d.nodes['n3']?.labelSources['shared'], { kind: 'rack', rack: 'r1' });
    assert.equal(formatLabelSource({ kind: 'host_profile', profile: 'p0', depth: 2 }), 'host profile p0 (depth 2)');
    assert.equal(formatLabelSource({ kind: 'plugin', plugin: 'nfd' }), 'plugin nfd');
    assert.equal(formatLabelSource({ kind: 'generated', generator: 'tag' }), 'generated (tag)');
    // A host profile's sources are one shared object across its nodes.
    assert.equal(d.nodes['n2']?.labelSources['relabel.airshipit.org/site'], d.nodes['n3']?.labelSources['relabel.airshipit.org/site']);
  });
});
