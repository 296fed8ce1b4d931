/**
 * Turning database rows into the store's public values, in the deterministic
 * order the interface promises. Pure.
 */
import type { Revision, RevisionTag, SourceFile, StagedBucket } from './revision-store.ts';
import { compareText } from './revision-diff.ts';
import { parseTagData } from '../store-validation.ts';
import { columnDate, columnNumber, columnString, columnStringOrNull, type SqlRow } from '../sql/sql-driver.ts';

/** A tag from a row with `tag`, `data` (JSON text) and `created_at`. */
export function buildTag(row: SqlRow): RevisionTag {
  return {
    tag: columnString(row, 'tag'),
    data: parseTagData(columnString(row, 'data')),
    createdAt: columnDate(row, 'created_at'),
  };
}

function groupBy<V>(rows: readonly SqlRow[], key: (row: SqlRow) => number, value: (row: SqlRow) => V): Map<number, V[]> {
  const groups = new Map<number, V[]>();
  for (const row of rows) {
    const k = key(row);
    const list = groups.get(k);
    if (list) list.push(value(row));
    else groups.set(k, [value(row)]);
  }
  return groups;
}

/**
 * Revisions from revision rows (`id`, `created_at`, `message`), distinct
 * (`revision_id`, `bucket`) rows and tag rows (`revision_id`, `tag`, `data`,
 * `created_at`). Output in ascending id; buckets and tags sorted by name.
 */
export function buildRevisions(revisions: readonly SqlRow[], buckets: readonly SqlRow[], tags: readonly SqlRow[]): Revision[] {
  const revisionId = (row: SqlRow) => columnNumber(row, 'revision_id');
  const bucketsById = groupBy(buckets, revisionId, (row) => columnString(row, 'bucket'));
  const tagsById = groupBy(tags, revisionId, buildTag);
  return revisions
    .map((row) => {
      const id = columnNumber(row, 'id');
      return {
        id,
        createdAt: columnDate(row, 'created_at'),
        message: columnStringOrNull(row, 'message'),
        buckets: [...new Set(bucketsById.get(id) ?? [])].sort(compareText),
        tags: (tagsById.get(id) ?? []).sort((a, b) => compareText(a.tag, b.tag)),
      };
    })
    .sort((a, b) => a.id - b.id);
}

/**
 * The staging buffer from bucket rows (`bucket`, `staged_at`) and file rows
 * (`bucket`, `source`, `text`). Buckets and files sorted by name.
 */
export function buildBuffer(buckets: readonly SqlRow[], files: readonly SqlRow[]): StagedBucket[] {
  const filesByBucket = new Map<string, SourceFile[]>();
  for (const row of files) {
    const bucket = columnString(row, 'bucket');
    const file = { source: columnString(row, 'source'), text: columnString(row, 'text') };
    const list = filesByBucket.get(bucket);
    if (list) list.push(file);
    else filesByBucket.set(bucket, [file]);
  }
  return buckets
    .map((row) => {
      const bucket = columnString(row, 'bucket');
      return {
        bucket,
        stagedAt: columnDate(row, 'staged_at'),
        files: (filesByBucket.get(bucket) ?? []).sort((a, b) => compareText(a.source, b.source)),
      };
    })
    .sort((a, b) => compareText(a.bucket, b.bucket));
}
