import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { PYYAML_OPTIONS } from './pyyaml-schema.ts';
import type { SiteSource } from './yaml-source.ts';
import { validateSite } from './validate-site.ts';

// A random site: host profiles whose parents may form chains, cycles or
// dangle; nodes on them; racks. Inheritance markers (`!k`, `!tag`, `'!'`)
// appear on every level.
type Layer = { parent?: string; owner: Record<string, string>; tags: string[]; rack?: string };
type Site = { profiles: [string, Layer][]; nodes: [string, Layer][]; racks: string[] };

const keys = ['a', 'b', 'c', 'd'];
const layer = (parents: fc.Arbitrary<string | undefined>): fc.Arbitrary<Layer> =>
  fc
    .record({
      parent: parents,
      owner: fc.dictionary(fc.constantFrom(...keys), fc.constantFrom('1', '2', '3'), { maxKeys: 3 }),
      deletions: fc.subarray(keys, { maxLength: 2 }),
      tags: fc.subarray(['t1', 't2', 't3', '!t1', '!t2'], { maxLength: 3 }),
      rack: fc.option(fc.constantFrom('r1', 'r2', '!'), { nil: undefined }),
    })
    .map(({ parent, owner, deletions, tags, rack }) => {
      const merged: Record<string, string> = { ...owner };
      // A layer may set a key or delete it, not both.
      for (const key of deletions) if (!(key in merged)) merged[`!${key}`] = '';
      const kept = tags.filter((tag) => !(tag.startsWith('!') && tags.includes(tag.slice(1))));
      return { ...(parent === undefined ? {} : { parent }), owner: merged, tags: kept, ...(rack === undefined ? {} : { rack }) };
    });

const profileNames = ['p0', 'p1', 'p2', 'p3', 'p4'];
const nodeArbitrary = fc.tuple(fc.constantFrom('n1', 'n2', 'n3', 'n4', 'n5', 'n6'), layer(fc.option(fc.constantFrom(...profileNames), { nil: undefined })));
const siteArbitrary = (allowBroken: boolean): fc.Arbitrary<Site> =>
  fc.record({
    profiles: fc.tuple(
      ...profileNames.map((name, i) => {
        // Without broken references, a profile's parent is an earlier one: acyclic.
        const candidates = allowBroken ? [...profileNames, 'missing'] : profileNames.slice(0, i);
        const parent = candidates.length === 0 ? fc.constant(undefined) : fc.option(fc.constantFrom(...candidates), { nil: undefined });
        return layer(parent).map((l): [string, Layer] => [name, l]);
      }),
    ),
    nodes: allowBroken
      ? fc.array(nodeArbitrary, { minLength: 1, maxLength: 6 }) // may repeat node names
      : fc.uniqueArray(nodeArbitrary, { selector: ([name]) => name, minLength: 1, maxLength: 6 }),
    racks: fc.constant(['r1', 'r2']),
  });

function documents(site: Site): { id: string; text: string }[] {
  const host = (schema: string, name: string, l: Layer) => ({
    id: `${schema}/${name}`,
    text: stringify(
      {
        schema,
        metadata: { schema: 'metadata/Document/v1', name },
        data: {
          ...(l.parent === undefined ? {} : { host_profile: l.parent }),
          metadata: { owner_data: l.owner, tags: l.tags, ...(l.rack === undefined ? {} : { rack: l.rack }) },
        },
      },
      PYYAML_OPTIONS,
    ),
  });
  return [
    ...site.profiles.map(([name, l]) => host('drydock/HostProfile/v1', name, l)),
    ...site.nodes.map(([name, l]) => host('drydock/BaremetalNode/v1', name, l)),
    ...site.racks.map((name) => ({
      id: `rack/${name}`,
      text: stringify({ schema: 'drydock/Rack/v1', metadata: { schema: 'metadata/Document/v1', name }, data: { labels: { zone: name } } }, PYYAML_OPTIONS),
    })),
  ];
}

// Spreads documents, in the given order, over files by the given assignment.
function sources(docs: readonly { text: string }[], fileOf: readonly number[]): SiteSource[] {
  const files = new Map<number, string[]>();
  docs.forEach((doc, i) => {
    const file = fileOf[i % fileOf.length] ?? 0;
    files.set(file, [...(files.get(file) ?? []), `---\n${doc.text}`]);
  });
  return [...files].map(([file, texts]) => ({ source: `f${file}.yaml`, text: texts.join('') }));
}

// Reference model of Drydock inheritance, written independently (recursive,
// over plain objects) from the implementation.
function modelOwnerData(site: Site, node: Layer): Record<string, string> {
  const profiles = new Map(site.profiles);
  const effective = (l: Layer): Record<string, string> => {
    const parent = l.parent === undefined ? {} : effective(profiles.get(l.parent) as Layer);
    const result: Record<string, string> = {};
    for (const [k, v] of Object.entries(parent)) if (!(`!${k}` in l.owner)) result[k] = v;
    for (const [k, v] of Object.entries(l.owner)) if (!k.startsWith('!')) result[k] = v;
    return result;
  };
  return effective(node);
}

const permutation = <T>(items: readonly T[]) => fc.shuffledSubarray([...items], { minLength: items.length, maxLength: items.length });

describe('design resolution', () => {
  it('matches a reference model of Drydock inheritance', () => {
    fc.assert(
      fc.property(siteArbitrary(false), (site) => {
        const result = validateSite(sources(documents(site), [0]));
        assert.ok(result.ok, result.ok ? '' : JSON.stringify(result.errors));
        for (const [name, node] of site.nodes) {
          assert.deepEqual(result.design.nodes[name]?.ownerData, modelOwnerData(site, node));
        }
      }),
      { numRuns: 200 },
    );
  });

  it('gives the same design whatever the order of documents and files', () => {
    const scenario = siteArbitrary(false).chain((site) => {
      const docs = documents(site);
      return fc.tuple(fc.constant(docs), permutation(docs), fc.array(fc.nat(3), { minLength: 1, maxLength: 6 }));
    });
    fc.assert(
      fc.property(scenario, ([docs, reordered, fileOf]) => {
        const reference = validateSite(sources(docs, [0]));
        const shuffled = validateSite(sources(reordered, fileOf));
        assert.ok(reference.ok && shuffled.ok);
        assert.deepEqual(shuffled.design, reference.design);
        assert.equal(JSON.stringify(shuffled.design), JSON.stringify(reference.design));
      }),
      { numRuns: 200 },
    );
  });

  it('reports the same errors (cycles, dangling references, duplicates) whatever the order', () => {
    const scenario = siteArbitrary(true).chain((site) => {
      const docs = documents(site);
      return fc.tuple(fc.constant(docs), permutation(docs), fc.array(fc.nat(3), { minLength: 1, maxLength: 6 }));
    });
    // Positions move with the documents, so they are left out of the comparison.
    const summary = (result: ReturnType<typeof validateSite>) =>
      result.ok ? [] : result.errors.map((e) => `${e.document.name} ${e.path}: ${e.message.replace(/: also defined at .*/, '')}`).sort();
    fc.assert(
      fc.property(scenario, ([docs, reordered, fileOf]) => {
        const reference = validateSite(sources(docs, [0]));
        const shuffled = validateSite(sources(reordered, fileOf));
        assert.equal(shuffled.ok, reference.ok);
        assert.deepEqual(summary(shuffled), summary(reference));
        if (reference.ok && shuffled.ok) assert.deepEqual(shuffled.design, reference.design);
      }),
      { numRuns: 200 },
    );
  });

  it('reports identical, sorted errors when only the order of files changes', () => {
    const scenario = siteArbitrary(true).chain((site) => {
      const files = sources(documents(site), [0, 1, 2]);
      return fc.tuple(fc.constant(files), permutation(files));
    });
    fc.assert(
      fc.property(scenario, ([files, reordered]) => {
        // `documents` lists documents in input order by design; the rest must not move.
        const outcome = (result: ReturnType<typeof validateSite>) => (result.ok ? result.design : result.errors);
        assert.deepEqual(outcome(validateSite(reordered)), outcome(validateSite(files)));
      }),
      { numRuns: 100 },
    );
  });
});
