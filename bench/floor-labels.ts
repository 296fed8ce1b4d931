/**
 * The 16 labels and the annotation of the floors: the plain-client floor
 * (bench/bench-nodes.ts) writes these keys, and the engine floor and Node Feature
 * Discovery write the same keys with values tagged per pass, so that every
 * pass changes every node.
 */

/** The label keys the plain-client floor writes. */
export const FLOOR_LABEL_KEYS = Array.from({ length: 16 }, (_, i) => `floor.example.com/label-${i}`);

/** The annotation the plain-client floor writes beside its labels: the keys it owns. */
export const FLOOR_OWNED_ANNOTATION = 'floor.example.com/owned';

/** The labels and annotation of the pass tagged `tag`. */
export function floorValues(tag: string): { labels: Record<string, string>; annotations: Record<string, string> } {
  return {
    labels: Object.fromEntries(FLOOR_LABEL_KEYS.map((k, i) => [k, `value-${i}-${tag}`])),
    annotations: { [FLOOR_OWNED_ANNOTATION]: FLOOR_LABEL_KEYS.join(',') },
  };
}
