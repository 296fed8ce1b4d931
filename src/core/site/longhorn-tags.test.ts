import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { nodeTagsErrors } from './longhorn-tags.ts';

const nameSyntax =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const qualified = '(Longhorn: util.ValidateTags, a Kubernetes qualified name)';

// Each case: a rule as longhorn-manager v1.12 applies it to node tags, a value, and every defect relabel names.
const cases: [rule: string, value: string, errors: string[]][] = [
  [
    'T1 JSON syntax (GetNodeTagsFromAnnotation)',
    '["slow"',
    [`is not valid JSON (Expected ',' or ']' after array element in JSON at position 7 (line 1 column 8)); Longhorn discards it (GetNodeTagsFromAnnotation)`],
  ],
  [
    'T2 a JSON array (UnmarshalToNodeTags)',
    '{"a":1}',
    ['tags must be a JSON array of tags, not an object (Longhorn: UnmarshalToNodeTags reads it as a Go []string)'],
  ],
  [
    'T2 each tag a string (UnmarshalToNodeTags)',
    '["a",7,true]',
    [
      'tags[1] must be a string, not 7 (Longhorn: UnmarshalToNodeTags reads it as a Go []string)',
      'tags[2] must be a string, not true (Longhorn: UnmarshalToNodeTags reads it as a Go []string)',
    ],
  ],
  ['T2 null is no tags (UnmarshalToNodeTags)', 'null', []],
  [
    'T2 a null tag is the empty tag (UnmarshalToNodeTags, util.ValidateTags)',
    '[null]',
    [`tags[0]: tag null (Longhorn reads it as "") is not a valid Longhorn tag: name part must be non-empty; ${nameSyntax} ${qualified}`],
  ],
  [
    'T3 each tag a qualified name (util.ValidateTags)',
    '["slow",".*invalid-tag","Example.com/x","a/b/c"]',
    [
      `tags[1]: tag ".*invalid-tag" is not a valid Longhorn tag: ${nameSyntax} ${qualified}`,
      `tags[2]: tag "Example.com/x" is not a valid Longhorn tag: prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*') ${qualified}`,
      `tags[3]: tag "a/b/c" is not a valid Longhorn tag: a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName') ${qualified}`,
    ],
  ],
  [
    'T3 a tag name is at most 63 bytes (util.ValidateTags)',
    `["${'x'.repeat(64)}"]`,
    [`tags[0]: tag "${'x'.repeat(64)}" is not a valid Longhorn tag: name part must be no more than 63 bytes ${qualified}`],
  ],
  [
    'T4 a repeated tag (relabel, stricter)',
    '["slow","fast","slow"]',
    [`tags[2]: tag "slow" is listed twice (relabel's rule, stricter than Longhorn, which drops the repeat: util.ValidateTags)`],
  ],
  ['T5 any order (Longhorn sorts)', '["zeta","alpha","storage.example.com/fast"]', []],
];

describe('Longhorn node tags: one case per rule', () => {
  for (const [rule, value, errors] of cases) {
    it(rule, () => assert.deepEqual(nodeTagsErrors(value), errors));
  }
});

// Longhorn's tag syntax (Kubernetes' qualified name), generated from its grammar.
const alnum = fc.constantFrom(...'abcXYZ019');
const inner = fc.constantFrom(...'abcXYZ019-_.');
const name = fc.tuple(alnum, fc.array(inner, { maxLength: 20 }), alnum).map(([a, middle, z]) => `${a}${middle.join('')}${z}`);
const dnsLabel = fc
  .tuple(fc.constantFrom(...'ab9'), fc.array(fc.constantFrom(...'ab9-'), { maxLength: 8 }), fc.constantFrom(...'ab9'))
  .map(([a, m, z]) => `${a}${m.join('')}${z}`);
const prefix = fc.array(dnsLabel, { minLength: 1, maxLength: 3 }).map((labels) => labels.join('.'));
const tag = fc.oneof(
  name,
  alnum,
  fc.tuple(prefix, name).map(([p, n]) => `${p}/${n}`),
);

describe('Longhorn tag syntax (properties)', () => {
  it('every tag of the grammar is accepted, in any order', () => {
    fc.assert(fc.property(fc.uniqueArray(tag, { maxLength: 6 }), (tags) => assert.deepEqual(nodeTagsErrors(JSON.stringify(tags)), [])));
  });

  it('a character outside the grammar anywhere in a tag refuses it, naming the tag', () => {
    const bad = fc.constantFrom(' ', '*', ':', '@', 'é', '\u0000', '"');
    fc.assert(
      fc.property(tag, bad, fc.nat(), (good, char, at) => {
        const i = at % (good.length + 1);
        const broken = `${good.slice(0, i)}${char}${good.slice(i)}`;
        const errors = nodeTagsErrors(JSON.stringify(['ok', broken]));
        assert.equal(errors.length, 1);
        assert.ok(errors[0]?.startsWith(`tags[1]: tag ${JSON.stringify(broken)} is not a valid Longhorn tag: `), errors[0]);
      }),
    );
  });

  it('a tag starting or ending with -, _ or . is refused', () => {
    fc.assert(
      fc.property(name, fc.constantFrom('-', '_', '.'), fc.boolean(), (good, edge, atStart) => {
        const broken = atStart ? `${edge}${good}` : `${good}${edge}`;
        assert.equal(nodeTagsErrors(JSON.stringify([broken])).length, 1);
      }),
    );
  });
});
