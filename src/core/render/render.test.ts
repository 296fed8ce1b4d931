import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { renderDocuments, type RenderResult } from './render.ts';

type Doc = Record<string, unknown>;

const policy = (...layers: string[]): Doc => ({
  schema: 'deckhand/LayeringPolicy/v1',
  metadata: { schema: 'metadata/Control/v1', name: 'layering-policy' },
  data: { layerOrder: layers.length > 0 ? layers : ['global', 'type', 'site'] },
});

type Layering = { layer?: string; abstract?: boolean; parentSelector?: Record<string, string>; actions?: { method: string; path: string }[] };

function doc(
  schema: string,
  name: string,
  data: unknown,
  meta: { labels?: Record<string, string>; layering?: Layering; substitutions?: unknown[]; replacement?: boolean; storagePolicy?: string } = {},
): Doc {
  return {
    schema,
    metadata: {
      schema: 'metadata/Document/v1',
      name,
      ...(meta.labels ? { labels: meta.labels } : {}),
      layeringDefinition: { layer: 'site', ...meta.layering },
      storagePolicy: meta.storagePolicy ?? 'cleartext',
      ...(meta.substitutions ? { substitutions: meta.substitutions } : {}),
      ...(meta.replacement !== undefined ? { replacement: meta.replacement } : {}),
    },
    data,
  };
}

const HOST_FIELDS = [['data', 'metadata', 'owner_data']];
const readFields = (schema: string) => (schema === 'drydock/HostProfile/v1' ? HOST_FIELDS : []);
const render = (docs: Doc[]) => renderDocuments(docs, { readFields });

function byName(result: RenderResult): Record<string, unknown> {
  assert.deepEqual(result.problems, [], JSON.stringify(result.problems));
  return Object.fromEntries(result.documents.map((d) => [`${String(d.value['schema'])}|${String((d.value['metadata'] as Doc)['name'])}`, d.value['data']]));
}

function messages(result: RenderResult): string[] {
  return result.problems.map((p) => `${p.document} ${p.path.join('.')}: ${p.message}`);
}

const P = 'drydock/HostProfile/v1';
const global = (data: unknown, labels: Record<string, string> = { hosttype: 'cp-global' }) =>
  doc(P, 'cp-global', data, { labels, layering: { layer: 'global', abstract: true } });

describe('renderDocuments', () => {
  it('renders an unlayered site to itself: the same documents, nothing copied', () => {
    const docs = [policy(), doc(P, 'a', { x: 1 }), doc('drydock/BaremetalNode/v1', 'n1', { host_profile: 'a' })];
    const result = render(docs);
    assert.equal(result.layered, false);
    assert.deepEqual(
      result.documents.map((d) => d.value),
      docs,
    );
    assert.ok(result.documents.every((d, i) => d.value === docs[i]));
  });

  it('layers three layers by parentSelector: merge, then replace and delete at paths, applied in order', () => {
    const type = doc(
      P,
      'cp-type',
      { interfaces: { pxe: 'type' }, metadata: { owner_data: { t: 'type' } } },
      {
        labels: { hosttype: 'cp-type' },
        layering: { layer: 'type', abstract: true, parentSelector: { hosttype: 'cp-global' }, actions: [{ method: 'merge', path: '.' }] },
      },
    );
    const site = doc(
      P,
      'cp',
      { interfaces: { bond0: 'site' }, metadata: { owner_data: { s: 'site' } } },
      {
        layering: {
          parentSelector: { hosttype: 'cp-type' },
          actions: [
            { method: 'replace', path: '.interfaces' },
            { method: 'delete', path: '.storage' },
            { method: 'merge', path: '.metadata' },
          ],
        },
      },
    );
    const rendered = byName(
      render([
        site,
        type,
        policy(),
        global({ interfaces: { pxe: 'global', oob: 'g' }, storage: { lvm: 1 }, metadata: { owner_data: { g: 'global', t: 'was' } } }),
      ]),
    );
    assert.deepEqual(rendered, {
      'deckhand/LayeringPolicy/v1|layering-policy': { layerOrder: ['global', 'type', 'site'] },
      [`${P}|cp`]: { interfaces: { bond0: 'site' }, metadata: { owner_data: { g: 'global', t: 'type', s: 'site' } } },
    });
  });

  it('takes the parent in the nearest layer when parents in several layers match, and names the chain', () => {
    const typeParent = doc(P, 'type-parent', { from: 'type' }, { labels: { role: 'cp' }, layering: { layer: 'type' } });
    const child = doc(P, 'child', { own: 1 }, { layering: { parentSelector: { role: 'cp' }, actions: [{ method: 'merge', path: '.' }] } });
    const result = render([policy(), global({ from: 'global' }, { role: 'cp' }), typeParent, child]);
    assert.deepEqual(byName(result)[`${P}|child`], { from: 'type', own: 1 });
    assert.deepEqual(result.documents.find((d) => d.document === 3)?.chain, [3, 2]);
  });

  it('leaves abstract and replaced documents out, and a replacement stands in for its parent for every other child', () => {
    const parent = doc(P, 'cp-global', { a: 1, b: 1 }, { labels: { hosttype: 'cp-global' }, layering: { layer: 'global' } });
    const replacement = doc(
      P,
      'cp-global',
      { b: 2 },
      { replacement: true, layering: { parentSelector: { hosttype: 'cp-global' }, actions: [{ method: 'merge', path: '.' }] } },
    );
    const other = doc(P, 'other', { c: 3 }, { layering: { parentSelector: { hosttype: 'cp-global' }, actions: [{ method: 'merge', path: '.' }] } });
    const rendered = byName(render([policy(), other, replacement, parent]));
    assert.deepEqual(rendered[`${P}|cp-global`], { a: 1, b: 2 });
    assert.deepEqual(rendered[`${P}|other`], { a: 1, b: 2, c: 3 });
    assert.equal(Object.keys(rendered).length, 3);
  });

  it('substitutes: several dests, a pattern, recursion to a depth, a cut of the source by src.pattern and match_group', () => {
    const source = doc('pegleg/CommonAddresses/v1', 'addresses', { dns: { servers: '10.0.0.1,10.0.0.2' }, endpoint: 'host:8080' });
    const secret = doc('deckhand/Passphrase/v1', 'pw', 'hunter2', { storagePolicy: 'encrypted' });
    const dest = doc(
      'armada/Chart/v1',
      'chart',
      { a: { dns: 'x' }, url: 'http://USER:PASSWORD@h', deep: { one: 'PASSWORD', two: { three: 'PASSWORD' } }, port: 'PORT' },
      {
        substitutions: [
          { src: { schema: 'pegleg/CommonAddresses/v1', name: 'addresses', path: '.dns.servers' }, dest: [{ path: '.a.dns' }, { path: '.b[1].dns' }] },
          { src: { schema: 'deckhand/Passphrase/v1', name: 'pw', path: '.' }, dest: { path: '.url', pattern: 'PASS(WORD)' } },
          { src: { schema: 'deckhand/Passphrase/v1', name: 'pw', path: '.' }, dest: { path: '.deep', pattern: 'PASSWORD', recurse: { depth: 1 } } },
          {
            src: { schema: 'pegleg/CommonAddresses/v1', name: 'addresses', path: '.endpoint', pattern: '^(.*):(.*)$', match_group: 2 },
            dest: { path: '.port' },
          },
        ],
      },
    );
    const result = render([policy(), dest, source, secret]);
    assert.deepEqual(byName(result)['armada/Chart/v1|chart'], {
      a: { dns: '10.0.0.1,10.0.0.2' },
      b: [{}, { dns: '10.0.0.1,10.0.0.2' }],
      url: 'http://USER:hunter2@h',
      deep: { one: 'hunter2', two: { three: 'PASSWORD' } },
      port: '8080',
    });
    const chart = result.documents.find((d) => d.document === 1)?.value['metadata'] as Doc;
    assert.equal(chart['storagePolicy'], 'encrypted', 'a document holding a secret is marked encrypted, as Deckhand marks it');
  });

  it('marks a document encrypted once it takes a value from an encrypted one, and so the documents taking values from it, each with its secret paths hidden', () => {
    const secret = doc('deckhand/Passphrase/v1', 'pw', 'hunter2', { storagePolicy: 'encrypted' });
    const middle = doc(
      'x/Conf/v1',
      'conf',
      { pw: null },
      { substitutions: [{ src: { schema: 'deckhand/Passphrase/v1', name: 'pw', path: '.' }, dest: { path: '.pw' } }] },
    );
    const last = doc(
      'x/Chart/v1',
      'chart',
      { v: null },
      { substitutions: [{ src: { schema: 'x/Conf/v1', name: 'conf', path: '.pw' }, dest: [{ path: '.v' }] }] },
    );
    const result = renderDocuments([policy(), last, middle, secret], { readFields, redact: (p) => `#${p}` });
    const metadataOf = (name: string) => result.documents.find((d) => (d.value['metadata'] as Doc)['name'] === name)?.value['metadata'] as Doc;
    for (const name of ['conf', 'chart']) assert.equal(metadataOf(name)['storagePolicy'], 'encrypted', name);
    assert.deepEqual(metadataOf('conf')['substitutions'], [{ src: { schema: 'deckhand/Passphrase/v1', name: 'pw', path: '#.' }, dest: { path: '#.pw' } }]);
    assert.deepEqual(metadataOf('chart')['substitutions'], [{ src: { schema: 'x/Conf/v1', name: 'conf', path: '#.pw' }, dest: [{ path: '#.v' }] }]);
    assert.deepEqual(byName(result)['x/Chart/v1|chart'], { v: 'hunter2' });
  });

  it('renders substitution sources before the documents that read them, whatever the order, layered sources included', () => {
    const parent = doc('x/Source/v1', 'src-global', { value: 'global' }, { labels: { n: 'src' }, layering: { layer: 'global' } });
    const source = doc('x/Source/v1', 'src', { extra: 1 }, { layering: { parentSelector: { n: 'src' }, actions: [{ method: 'merge', path: '.' }] } });
    const dest = doc(
      'x/Dest/v1',
      'dest',
      { v: null },
      { substitutions: [{ src: { schema: 'x/Source/v1', name: 'src', path: '.value' }, dest: { path: '.v' } }] },
    );
    assert.deepEqual(byName(render([policy(), dest, source, parent]))['x/Dest/v1|dest'], { v: 'global' });
  });

  it('makes a substitution whose source is absent as Deckhand does when not failing on missing sources, unless it writes a field relabel reads', () => {
    const absent = (path: string) => ({ src: { schema: 'deckhand/Passphrase/v1', name: 'absent', path: '.' }, dest: { path } });
    const chart = doc('armada/Chart/v1', 'c', { keep: 1 }, { substitutions: [absent('.password')] });
    assert.deepEqual(byName(render([policy(), chart]))['armada/Chart/v1|c'], { keep: 1 });
    const profile = doc(P, 'p', {}, { substitutions: [absent('.metadata.owner_data')] });
    assert.deepEqual(messages(render([policy(), profile])), [
      '1 metadata.substitutions.0.src: no concrete document [deckhand/Passphrase/v1] "absent" to substitute from, and it would write .metadata.owner_data, which relabel reads',
    ]);
  });

  it('refuses every error Deckhand raises, naming the document and field', () => {
    const child = (name: string, selector: Record<string, string>, extra: Partial<Layering> = {}) =>
      doc(P, name, {}, { layering: { parentSelector: selector, actions: [{ method: 'merge', path: '.' }], ...extra } });
    const cases: [Doc[], string][] = [
      [
        [child('c', { a: 'b' })],
        '0 metadata.layeringDefinition.parentSelector: has a parentSelector, but the site has no deckhand/LayeringPolicy/v1 to order its layers',
      ],
      [[policy(), policy()], '1 schema: a second layering policy (the first is [deckhand/LayeringPolicy/v1, ] "layering-policy"): a site has one'],
      [
        [policy(), doc(P, 'x', {}, { layering: { layer: 'region' } })],
        '1 metadata.layeringDefinition.layer: layer "region" is not in the layering policy\'s layerOrder (global, type, site)',
      ],
      [
        [policy(), doc('other/Kind/v1', 'p', {}, { labels: { a: 'b' }, layering: { layer: 'global' } }), child('c', { a: 'b' })],
        '2 metadata.layeringDefinition.parentSelector: the parentSelector selects [other/Kind/v1, global] "p", whose schema is not this document\'s: a parent must be of the same schema',
      ],
      [
        [policy(), doc(P, 'p', {}, { labels: { a: 'b' }, layering: { layer: 'site' } }), child('c', { a: 'b' })],
        '2 metadata.layeringDefinition.parentSelector: the parentSelector selects [drydock/HostProfile/v1, site] "p", which is not in a layer above "site" (layerOrder site)',
      ],
      [
        [
          policy(),
          doc(P, 'p1', {}, { labels: { a: 'b' }, layering: { layer: 'global' } }),
          doc(P, 'p2', {}, { labels: { a: 'b' }, layering: { layer: 'global' } }),
          child('c', { a: 'b' }),
        ],
        '3 metadata.layeringDefinition.parentSelector: the parentSelector selects 2 parents where one is needed ([drydock/HostProfile/v1, global] "p1", [drydock/HostProfile/v1, global] "p2")',
      ],
      [
        [policy(), doc(P, 'r', {}, { replacement: true })],
        '1 metadata.replacement: a replacement document needs a parent (a parentSelector selecting the document it replaces)',
      ],
      [
        [policy(), child('c', { a: 'b' }, { actions: [{ method: 'copy', path: '.' }] })],
        '1 metadata.layeringDefinition.actions.0.method: method must be one of merge, replace, delete',
      ],
      [
        [
          policy(),
          doc(P, 'p', { a: 1 }, { labels: { a: 'b' }, layering: { layer: 'global' } }),
          child('c', { a: 'b' }, { actions: [{ method: 'replace', path: '.missing' }] }),
        ],
        '2 metadata.layeringDefinition.actions.0: replace .missing: this document has nothing at that path (layering onto [drydock/HostProfile/v1, global] "p")',
      ],
      [
        [
          policy(),
          doc('x/A/v1', 'a', {}, { substitutions: [{ src: { schema: 'x/B/v1', name: 'b', path: '.' }, dest: { path: '.b' } }] }),
          doc('x/B/v1', 'b', {}, { substitutions: [{ src: { schema: 'x/A/v1', name: 'a', path: '.' }, dest: { path: '.a' } }] }),
        ],
        '1 metadata: layering and substitution form a cycle: [x/A/v1, site] "a" → [x/B/v1, site] "b" → [x/A/v1, site] "a"',
      ],
      [
        [
          policy(),
          doc('x/A/v1', 'a', { s: 1 }, { substitutions: [{ src: { schema: 'x/A/v1', name: 'b', path: '.' }, dest: { path: '.s', pattern: 'X' } }] }),
          doc('x/A/v1', 'b', 'v'),
        ],
        '1 metadata.substitutions.0.dest: substituting from [x/A/v1, site] "b": the destination holds no string to find pattern "X" in',
      ],
    ];
    for (const [docs, expected] of cases) assert.deepEqual(messages(render(docs)), [expected]);
  });

  it('refuses two documents of one schema and name neither of which replaces the other, each naming the other', () => {
    const result = render([policy(), doc(P, 'p', {}, { layering: { layer: 'global' } }), doc(P, 'p', {}, { layering: { layer: 'site', abstract: true } })]);
    assert.deepEqual(
      result.problems.map((p) => p.document),
      [1, 2],
    );
    assert.deepEqual(result.documents, []);
  });
});

describe('renderDocuments, properties', () => {
  const labels = fc.constantFrom('a', 'b', 'c');
  // Sites of a policy, abstract global parents, type children and site grandchildren, and substitutions between them.
  const site = fc
    .record({
      globals: fc.uniqueArray(labels, { minLength: 1 }),
      types: fc.array(fc.record({ parent: labels, value: fc.integer({ min: 0, max: 9 }), abstract: fc.boolean() }), { maxLength: 4 }),
      subs: fc.array(fc.record({ from: fc.nat(3), to: fc.nat(3) }), { maxLength: 3 }),
    })
    .map(({ globals, types, subs }) => {
      const docs: Doc[] = [policy()];
      for (const g of globals)
        docs.push(doc(P, `g-${g}`, { g, shared: { from: g } }, { labels: { parent: g }, layering: { layer: 'global', abstract: true } }));
      types.forEach((t, i) => {
        const from = subs.find((s) => s.to === i && s.from < i);
        docs.push(
          doc(
            P,
            `t-${i}`,
            { value: t.value, shared: { own: i } },
            {
              labels: { type: String(i) },
              layering: {
                layer: 'type',
                abstract: t.abstract,
                ...(globals.includes(t.parent) ? { parentSelector: { parent: t.parent }, actions: [{ method: 'merge', path: '.' }] } : {}),
              },
              ...(from !== undefined && !(types[from.from]?.abstract ?? true)
                ? { substitutions: [{ src: { schema: P, name: `t-${from.from}`, path: '.value' }, dest: { path: '.copied' } }] }
                : {}),
            },
          ),
        );
        docs.push(
          doc(
            P,
            `s-${i}`,
            { site: i },
            {
              layering: {
                parentSelector: { type: String(i) },
                actions: [
                  { method: 'merge', path: '.' },
                  { method: 'delete', path: '.value' },
                ],
              },
            },
          ),
        );
      });
      return docs;
    });

  it('gives the same documents whatever the order of the inputs', () => {
    fc.assert(
      fc.property(
        site.chain((docs) => fc.tuple(fc.constant(docs), fc.shuffledSubarray(docs, { minLength: docs.length, maxLength: docs.length }))),
        ([docs, shuffled]) => {
          assert.deepEqual(byName(render(shuffled)), byName(render(docs)));
        },
      ),
    );
  });

  it('never renders an abstract document', () => {
    fc.assert(
      fc.property(site, (docs) => {
        const result = render(docs);
        for (const d of result.documents) assert.notEqual(((d.value['metadata'] as Doc)['layeringDefinition'] as Doc | undefined)?.['abstract'], true);
      }),
    );
  });

  it('renders an unlayered site to itself', () => {
    const unlayered = fc.array(
      fc.record({ name: fc.string({ minLength: 1, maxLength: 5 }), data: fc.jsonValue() }).map(({ name, data }) => doc(P, name, data)),
      { maxLength: 6 },
    );
    fc.assert(
      fc.property(unlayered, fc.boolean(), (docs, withPolicy) => {
        const input = withPolicy ? [policy(), ...docs] : docs;
        const result = render(input);
        assert.deepEqual(
          result.documents.map((d) => d.value),
          input,
        );
      }),
    );
  });
});
