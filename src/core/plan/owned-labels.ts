/**
 * The ownership record: the label keys relabel set on a Node, kept on the
 * Node itself in the {@link OWNED_LABELS_ANNOTATION} annotation as a sorted,
 * comma-separated list (as Node Feature Discovery and Cluster API do).
 */
import { OWNED_LABELS_ANNOTATION } from './constants.ts';
import { isValidLabelKey } from './label-syntax.ts';

/** The owned keys read from a Node, and the entries that could not be. */
export type OwnedLabels = {
  /** Valid label keys listed, sorted, without duplicates. */
  owned: string[];
  /** Entries that are not label keys, as written (after trimming). */
  discarded: string[];
  /** The annotation's raw value, or null when the Node has none. */
  raw: string | null;
};

/**
 * Reads the ownership record from a Node's annotations.
 *
 * Tolerant of a hand-edited or corrupted value, and conservative about it:
 * whitespace around entries and empty entries are ignored (label keys
 * cannot contain either, so nothing is guessed), and an entry that is not a
 * valid label key is *discarded*, never interpreted — it cannot name a label
 * on the Node, so no label is ever removed on its account. Discarded entries
 * disappear from the record the next time it is written.
 */
export function readOwnedLabels(annotations: Readonly<Record<string, string>>): OwnedLabels {
  return readOwnedRecord(annotations, OWNED_LABELS_ANNOTATION, isValidLabelKey);
}

/**
 * Reads any of relabel's ownership records (labels, annotations, taints)
 * from a Node's annotations, as {@link readOwnedLabels} does: `valid` says
 * which entries name something that can be owned; the others are discarded.
 */
export function readOwnedRecord(annotations: Readonly<Record<string, string>>, record: string, valid: (entry: string) => boolean): OwnedLabels {
  const raw = Object.hasOwn(annotations, record) ? (annotations[record] ?? null) : null;
  if (raw === null) return { owned: [], discarded: [], raw };
  let byValue = recent.get(valid);
  if (byValue === undefined) recent.set(valid, (byValue = new Map()));
  let read = byValue.get(raw);
  if (read === undefined) {
    read = parseRecord(raw, valid);
    // Nodes alike carry the same record: a bounded memo spares re-reading it on each of thousands of nodes.
    if (byValue.size >= MEMO_SIZE) byValue.clear();
    byValue.set(raw, read);
  }
  return { owned: [...read.owned], discarded: [...read.discarded], raw };
}

/** Record values remembered per validity rule. */
const MEMO_SIZE = 256;

/** Recently read record values, by validity rule (each rule is a pure function of the entry). */
// eslint-disable-next-line no-restricted-syntax -- a bounded memo of a pure function: whichever workflow filled it, every caller gets the same answer.
const recent = new WeakMap<(entry: string) => boolean, Map<string, { owned: readonly string[]; discarded: readonly string[] }>>();

function parseRecord(raw: string, valid: (entry: string) => boolean): { owned: string[]; discarded: string[] } {
  const owned = new Set<string>();
  const discarded: string[] = [];
  for (const entry of raw.split(',').map((part) => part.trim())) {
    if (entry === '') continue;
    if (valid(entry)) owned.add(entry);
    else discarded.push(entry);
  }
  return { owned: [...owned].sort(), discarded };
}

/**
 * The annotation value recording `owned` (sorted, comma-separated), or null
 * when nothing is owned: the annotation is then removed rather than left
 * empty.
 */
export function formatOwnedLabels(owned: readonly string[]): string | null {
  if (owned.length === 0) return null;
  // Most callers pass keys already sorted and distinct: join them as they are.
  for (let i = 1; i < owned.length; i++) if (!((owned[i - 1] as string) < (owned[i] as string))) return [...new Set(owned)].sort().join(',');
  return owned.join(',');
}
