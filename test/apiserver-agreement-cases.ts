/**
 * Generators of the Node contents the API-server agreement test asks about
 * (see cluster/apiserver-agreement.test.ts), biased towards the edges of
 * Kubernetes' rules: name parts of 62-64 bytes, prefixes of 252-254 bytes,
 * dots, dashes and underscores at the ends, upper case, empty prefixes,
 * extra slashes, multi-byte characters (the limits are in bytes), the
 * characters Go lower-cases to ASCII, and annotation sets a few bytes either
 * side of 256 KiB.
 */
import fc from 'fast-check';
import {
  APPLIED_ANNOTATION,
  OWNED_ANNOTATIONS_ANNOTATION,
  OWNED_LABELS_ANNOTATION,
  OWNED_TAINTS_ANNOTATION,
  RECORD_ANNOTATIONS,
} from '../src/core/plan/constants.ts';
import { KUBELET_LABEL_KEYS, NODE_CONFIG_ANNOTATIONS } from '../src/core/plan/label-keys.ts';
import { ANNOTATIONS_MAX_BYTES } from '../src/core/site/node-metadata-checks.ts';
import { MAX_RECORD_NAME } from '../src/core/plan/applied-run.ts';
import { UNINITIALIZED_TAINT_KEY } from '../src/core/plan/constants.ts';

/** A taint as a document writes it and the API server receives it. */
export type CaseTaint = { key: string; value?: string; effect?: string };

/** What one case puts on the Node. */
export type NodeCase = { labels: Record<string, string>; annotations: Record<string, string>; taints: CaseTaint[] };

/** The applied-run record at its longest, as the test writes it on every Node. */
export const LONGEST_APPLIED = `revision=${Number.MAX_SAFE_INTEGER},run=${Number.MAX_SAFE_INTEGER},site=${'s'.repeat(MAX_RECORD_NAME)},set=${'x'.repeat(MAX_RECORD_NAME)}`;

const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
const ALNUM = [...'abcxyzABCXYZ0189'];
const LOWER_ALNUM = [...'abcxyz0189'];
const INNER = [...ALNUM, '-', '_', '.'];
// Characters that break a shape, or sit at its edge: Go lower-cases U+212A to "k" and U+0130 to "i".
const ODD = ['-', '_', '.', ' ', '/', 'A', 'Z', 'é', '€', '😀', '\u212A', '\u0130', '\u212B', ':', '@', '*', '\n', '\t'];

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

function stringOf(chars: readonly string[], length: number): fc.Arbitrary<string> {
  return fc.array(fc.constantFrom(...chars), { minLength: length, maxLength: length }).map((a) => a.join(''));
}

/** A string of `length` characters: `ends` at both ends, `middle` inside. */
function shaped(length: number, ends: readonly string[], middle: readonly string[]): fc.Arbitrary<string> {
  if (length === 0) return fc.constant('');
  if (length === 1) return fc.constantFrom(...ends);
  return fc.tuple(fc.constantFrom(...ends), stringOf(middle, length - 2), fc.constantFrom(...ends)).map((p) => p.join(''));
}

/** `arbitrary`, sometimes with a character replaced by, or preceded by, an odd one (at an end, often). */
function mutated(arbitrary: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const edit = fc.record({ at: fc.oneof(fc.constant(0), fc.constant(-1), fc.nat()), char: fc.constantFrom(...ODD), insert: fc.boolean() });
  const edited = fc.tuple(arbitrary, fc.array(edit, { minLength: 1, maxLength: 2 })).map(([s, edits]) => {
    let out = [...s];
    for (const { at, char, insert } of edits) {
      const i = out.length === 0 ? 0 : at === -1 ? out.length - 1 : at % out.length;
      out = insert ? [...out.slice(0, i), char, ...out.slice(i)] : [...out.slice(0, i), char, ...out.slice(i + 1)];
    }
    return out.join('');
  });
  return fc.oneof({ weight: 4, arbitrary }, { weight: 2, arbitrary: edited });
}

const nameLength = fc.oneof(fc.constantFrom(1, 2, 62, 63, 64), fc.integer({ min: 0, max: 12 }));

/** A label-key name part (or label value): often valid, often 62-64 long, sometimes broken. */
export const namePart = mutated(nameLength.chain((n) => shaped(n, ALNUM, INNER)));

/** A DNS-1123 subdomain of `length` characters: lower-case alphanumeric ends, dots and dashes inside. */
function subdomain(length: number): fc.Arbitrary<string> {
  const marks = fc.array(fc.tuple(fc.nat(), fc.constantFrom('.', '-')), { maxLength: Math.ceil(length / 8) });
  return fc.tuple(shaped(length, LOWER_ALNUM, LOWER_ALNUM), marks).map(([s, list]) => {
    const out = [...s];
    for (const [at, mark] of list) {
      const i = at % out.length;
      const near = [out[i - 1], out[i + 1]];
      // Inside only, and a dot never next to a dot or a dash: the result stays valid.
      if (i > 0 && i < out.length - 1 && !near.includes('.') && (mark === '-' || !near.includes('-'))) out[i] = mark;
    }
    return out.join('');
  });
}

const prefixLength = fc.oneof(fc.constantFrom(1, 63, 64, 252, 253, 254), fc.integer({ min: 1, max: 20 }));

/** A label-key prefix: often a valid subdomain, often 252-254 long, sometimes broken. */
export const prefix = mutated(prefixLength.chain(subdomain));

const specialKeys = [
  ...KUBELET_LABEL_KEYS,
  ...RECORD_ANNOTATIONS,
  ...NODE_CONFIG_ANNOTATIONS,
  UNINITIALIZED_TAINT_KEY,
  'node.kubernetes.io/not-ready',
  'node.cloudprovider.kubernetes.io/uninitialized',
  'node-role.kubernetes.io/worker',
  'Kubernetes.io/hostname',
  'Relabel.airshipit.org/owned-labels',
];

/** A key (label, annotation or taint): with and without prefix, empty prefix, extra slashes, relabel's special keys. */
export const key: fc.Arbitrary<string> = fc
  .oneof(
    { weight: 3, arbitrary: namePart },
    { weight: 5, arbitrary: fc.tuple(prefix, namePart).map(([p, n]) => `${p}/${n}`) },
    { weight: 1, arbitrary: namePart.map((n) => `/${n}`) },
    { weight: 1, arbitrary: fc.tuple(prefix, namePart, namePart).map(([p, a, b]) => `${p}/${a}/${b}`) },
    { weight: 1, arbitrary: fc.constantFrom(...specialKeys) },
  )
  // A key starting with "!" is a deletion in a document, not a key.
  .filter((k) => !k.startsWith('!'));

/**
 * An annotation key: as `key`, its prefix often upper-cased (the API server ignores an annotation
 * key's case), and often one of relabel's records or the Node configuration annotations.
 */
export const annotationKey: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.tuple(key, fc.constantFrom('as is', 'upper prefix', 'upper all', 'mixed')).map(([k, how]) => {
      const slash = k.indexOf('/');
      if (how === 'upper all') return k.toUpperCase();
      if (how === 'upper prefix' && slash > 0) return `${k.slice(0, slash).toUpperCase()}${k.slice(slash)}`;
      if (how === 'mixed') return [...k].map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c)).join('');
      return k;
    }),
  },
  { weight: 1, arbitrary: fc.constantFrom(...RECORD_ANNOTATIONS, ...NODE_CONFIG_ANNOTATIONS) },
);

/** A taint key: as `key`, and often one of the taints Kubernetes or relabel keeps for itself. */
const taintKey = fc.oneof(
  { weight: 10, arbitrary: key },
  { weight: 1, arbitrary: fc.constantFrom(UNINITIALIZED_TAINT_KEY, 'node.kubernetes.io/unreachable', 'node.cloudprovider.kubernetes.io/uninitialized') },
);

/** A label or taint value. */
export const labelValue = fc.oneof(fc.constant(''), namePart);

// JSON among them, for the annotations the API server decodes.
const annotationValue = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.constantFrom('', '[]', 'null', '{}', '[{"key":"a","effect":"NoSchedule"}]'),
);

function entries<T>(keys: fc.Arbitrary<string>, values: fc.Arbitrary<T>, max: number): fc.Arbitrary<Record<string, T>> {
  return fc
    .uniqueArray(keys, { minLength: 1, maxLength: max })
    .chain((ks) => fc.tuple(...ks.map((k) => values.map((v): [string, T] => [k, v]))))
    .map((pairs) => Object.fromEntries(pairs));
}

const effect = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...EFFECTS) },
  { weight: 1, arbitrary: fc.constantFrom('', 'noschedule', 'Sometimes', 'NoScheduleNoAdmit', ' NoSchedule') },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

const taint: fc.Arbitrary<CaseTaint> = fc
  .record({ key: taintKey, value: fc.option(labelValue, { nil: undefined }), effect })
  .map(({ key: k, value, effect: e }) => ({ key: k, ...(value === undefined ? {} : { value }), ...(e === undefined ? {} : { effect: e }) }));

const taints = fc.tuple(fc.array(taint, { minLength: 1, maxLength: 2 }), fc.boolean()).map(([list, duplicate]) => {
  const [first, second] = list;
  // Sometimes the same key and effect twice, which Kubernetes refuses.
  if (duplicate && first !== undefined && second !== undefined)
    list[1] = { ...second, key: first.key, ...(first.effect === undefined ? {} : { effect: first.effect }) };
  return list;
});

/** Bytes the records take that the test writes besides the case (see the test's casePatch). */
function recordBytes(c: NodeCase): number {
  const record = (k: string, list: string[]) => (list.length === 0 ? 0 : bytes(k) + bytes([...list].sort().join(',')));
  return (
    record(OWNED_LABELS_ANNOTATION, Object.keys(c.labels)) +
    record(OWNED_ANNOTATIONS_ANNOTATION, Object.keys(c.annotations)) +
    record(
      OWNED_TAINTS_ANNOTATION,
      c.taints.map((t) => `${t.key}:${t.effect ?? ''}`),
    ) +
    bytes(APPLIED_ANNOTATION) +
    bytes(LONGEST_APPLIED)
  );
}

/** A value of exactly `size` UTF-8 bytes, of `fill` characters as far as they go, then ASCII. */
function valueOfBytes(size: number, fill: string): string {
  const count = Math.floor(size / bytes(fill));
  return fill.repeat(count) + 'x'.repeat(size - count * bytes(fill));
}

/** Annotations (with a label and a taint, sometimes) that total a few bytes either side of 256 KiB with relabel's records. */
const annotationSizes: fc.Arbitrary<NodeCase> = fc
  .record({
    keys: fc.uniqueArray(fc.constantFrom('example.com/a', 'Example.com/big', 'b', 'x.example/Long_Name-1'), { minLength: 1, maxLength: 3 }),
    small: fc.string({ maxLength: 30 }),
    labels: fc.constantFrom<Record<string, string>[]>({}, { 'example.com/l1': 'v' }, { l2: '', 'example.com/l3': 'yes' }),
    taints: fc.constantFrom<CaseTaint[][]>([], [{ key: 'example.com/t', effect: 'NoSchedule' }]),
    delta: fc.oneof({ weight: 5, arbitrary: fc.integer({ min: -3, max: 3 }) }, { weight: 1, arbitrary: fc.integer({ min: -5000, max: 5000 }) }),
    fill: fc.constantFrom('x', 'é', '€', '😀'),
  })
  .map(({ keys, small, labels, taints: list, delta, fill }) => {
    const annotations: Record<string, string> = Object.fromEntries(keys.map((k) => [k, small]));
    const last = keys[keys.length - 1] ?? 'b';
    const c: NodeCase = { labels: { ...labels }, annotations, taints: [...list] };
    const used = Object.entries(annotations).reduce((sum, [k, v]) => sum + bytes(k) + (k === last ? 0 : bytes(v)), 0) + recordBytes(c);
    annotations[last] = valueOfBytes(ANNOTATIONS_MAX_BYTES + delta - used, fill);
    return c;
  });

/** The four families of cases the agreement test asks about. */
export function caseArbitraries(): Record<'labels' | 'annotationKeys' | 'annotationSizes' | 'taints', fc.Arbitrary<NodeCase>> {
  return {
    labels: entries(key, labelValue, 2).map((labels) => ({ labels, annotations: {}, taints: [] })),
    annotationKeys: entries(annotationKey, annotationValue, 3).map((annotations) => ({ labels: {}, annotations, taints: [] })),
    annotationSizes,
    taints: taints.map((list) => ({ labels: {}, annotations: {}, taints: list })),
  };
}
