/**
 * Pure helpers shared by both backends: the deterministic text order and the
 * revision diff. No I/O.
 */
import { createHash } from 'node:crypto';
import type { BucketDiff, DiffStatus, RevisionDiff, SourceDiff } from './revision-store.ts';

/**
 * Total order on strings by UTF-16 code unit, independent of locale and of the
 * database's collation, so both backends list things identically.
 */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** SHA-256 of a file's text, hex: the key under which the stores keep content once. */
export function contentDigest(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** One file of one side of a diff, identified by its content digest. */
export interface DiffEntry {
  readonly bucket: string;
  readonly source: string;
  readonly digest: string;
}

function byBucket(entries: readonly DiffEntry[]): Map<string, Map<string, string>> {
  const buckets = new Map<string, Map<string, string>>();
  for (const { bucket, source, digest } of entries) {
    let sources = buckets.get(bucket);
    if (!sources) {
      sources = new Map();
      buckets.set(bucket, sources);
    }
    sources.set(source, digest);
  }
  return buckets;
}

function sourceStatus(before: string | undefined, after: string | undefined): DiffStatus {
  if (before === undefined) return 'added';
  if (after === undefined) return 'deleted';
  return before === after ? 'unchanged' : 'modified';
}

function diffBucket(bucket: string, before: Map<string, string> | undefined, after: Map<string, string> | undefined): BucketDiff {
  const names = new Set([...(before?.keys() ?? []), ...(after?.keys() ?? [])]);
  const sources: SourceDiff[] = [...names].sort(compareText).map((source) => ({ source, status: sourceStatus(before?.get(source), after?.get(source)) }));
  let status: DiffStatus;
  if (!before) status = 'added';
  else if (!after) status = 'deleted';
  else status = sources.every((s) => s.status === 'unchanged') ? 'unchanged' : 'modified';
  return { bucket, status, sources };
}

/**
 * Compare two revisions' files bucket by bucket and source by source.
 * A bucket is `added`/`deleted` when it has no files on one side, `modified`
 * when any of its sources differs, `unchanged` otherwise. Output is sorted by
 * bucket then source; input order does not matter.
 */
export function diffEntries(from: number, to: number, before: readonly DiffEntry[], after: readonly DiffEntry[]): RevisionDiff {
  const a = byBucket(before);
  const b = byBucket(after);
  const names = [...new Set([...a.keys(), ...b.keys()])].sort(compareText);
  return { from, to, buckets: names.map((name) => diffBucket(name, a.get(name), b.get(name))) };
}
