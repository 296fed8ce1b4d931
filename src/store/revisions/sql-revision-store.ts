/**
 * The revisions part of the store ({@link RevisionStore}), written once over a
 * {@link SqlDriver} so the SQLite and PostgreSQL backends cannot drift apart.
 *
 * Content is kept once per SHA-256 digest (`contents`); revisions and the
 * buffer hold (bucket, source, digest) rows. Revision ids are read from the
 * table under the write lock, never from memory, so concurrent committers in
 * different processes get consecutive, distinct ids.
 */
import type { CommitOptions, Revision, RevisionStore, SourceFile, StagedBucket, StageOptions, TagData } from './revision-store.ts';
import { SiteActionTag } from './revision-store.ts';
import { StoreError, StoreErrorCode } from '../store-error.ts';
import { compareText, contentDigest, diffEntries, type DiffEntry } from './revision-diff.ts';
import { assertBucketName, assertMessage, assertRevisionId, assertTagName, serializeTagData, validateBucketList, validateFiles } from '../store-validation.ts';
import { columnString, type SqlDriver, type SqlSession, type TableNames } from '../sql/sql-driver.ts';
import { buildBuffer, buildRevisions, buildTag } from './revision-rows.ts';
import { assertRevisionExists, lastRevisionId, notFound } from './revision-lookups.ts';

/** A buffer as one comparable text: each bucket with its staging time and its files' digests. */
function bufferKey(buffer: readonly StagedBucket[]): string {
  return buffer
    .map((b) => [b.bucket, b.stagedAt.getTime(), ...b.files.map((f) => `${f.source}=${contentDigest(f.text)}`).sort(compareText)].join('\t'))
    .sort(compareText)
    .join('\n');
}

/** The buffer's files with their texts. */
function bufferTexts(s: SqlSession, t: TableNames) {
  return s.all(
    `SELECT f.bucket, f.source, c.text FROM ${t.bufferFiles} f
     JOIN ${t.contents} c ON c.digest = f.digest`,
  );
}

/** Revision `id` read in session `s`; NotFound when absent. */
async function readRevision(s: SqlSession, t: TableNames, id: number): Promise<Revision> {
  const [revision] = buildRevisions(
    await s.all(`SELECT id, created_at, message FROM ${t.revisions} WHERE id = ?`, [id]),
    await s.all(`SELECT DISTINCT revision_id, bucket FROM ${t.revisionFiles} WHERE revision_id = ?`, [id]),
    await s.all(`SELECT revision_id, tag, data, created_at FROM ${t.revisionTags} WHERE revision_id = ?`, [id]),
  );
  if (!revision) throw await notFound(s, t, id);
  return revision;
}

/** Drop contents no longer referenced by any revision or staged file. */
async function prune(s: SqlSession, t: TableNames, digests: readonly string[]): Promise<void> {
  for (const digest of new Set(digests)) {
    await s.run(
      `DELETE FROM ${t.contents} WHERE digest = ?
       AND NOT EXISTS (SELECT 1 FROM ${t.revisionFiles} WHERE digest = ?)
       AND NOT EXISTS (SELECT 1 FROM ${t.bufferFiles} WHERE digest = ?)`,
      [digest, digest, digest],
    );
  }
}

/** Staging, the buffer and commits. */
function bufferMethods(driver: SqlDriver, t: TableNames): Pick<RevisionStore, 'stage' | 'buffer' | 'discardBuffer' | 'commit'> {
  return {
    async stage(bucket: string, files: readonly SourceFile[], options: StageOptions = {}) {
      assertBucketName(bucket);
      const valid = validateFiles(bucket, files);
      const stagedAt = new Date();
      await driver.write(async (s) => {
        if (options.expectBuffer !== undefined) {
          const now = bufferKey(buildBuffer(await s.all(`SELECT bucket, staged_at FROM ${t.buffer}`), await bufferTexts(s, t)));
          if (now !== bufferKey(options.expectBuffer)) {
            throw new StoreError(StoreErrorCode.Conflict, `the buffer changed since it was read; nothing staged for bucket '${bucket}'`);
          }
        }
        const whole = options.replaceBuffer === true;
        const old = await s.all(`SELECT DISTINCT digest FROM ${t.bufferFiles}${whole ? '' : ' WHERE bucket = ?'}`, whole ? [] : [bucket]);
        await s.run(`DELETE FROM ${t.bufferFiles}${whole ? '' : ' WHERE bucket = ?'}`, whole ? [] : [bucket]);
        if (whole) await s.run(`DELETE FROM ${t.buffer}`);
        await s.run(
          `INSERT INTO ${t.buffer} (bucket, staged_at) VALUES (?, ?)
           ON CONFLICT (bucket) DO UPDATE SET staged_at = excluded.staged_at`,
          [bucket, stagedAt.toISOString()],
        );
        for (const file of valid) {
          const digest = contentDigest(file.text);
          await s.run(`INSERT INTO ${t.contents} (digest, text) VALUES (?, ?) ON CONFLICT (digest) DO NOTHING`, [digest, file.text]);
          await s.run(`INSERT INTO ${t.bufferFiles} (bucket, source, digest) VALUES (?, ?, ?)`, [bucket, file.source, digest]);
        }
        await prune(
          s,
          t,
          old.map((row) => columnString(row, 'digest')),
        );
      });
      return { bucket, files: valid, stagedAt };
    },

    buffer() {
      return driver.read(async (s) => buildBuffer(await s.all(`SELECT bucket, staged_at FROM ${t.buffer}`), await bufferTexts(s, t)));
    },

    discardBuffer() {
      return driver.write(async (s) => {
        const buckets = await s.all(`SELECT bucket FROM ${t.buffer}`);
        const old = await s.all(`SELECT DISTINCT digest FROM ${t.bufferFiles}`);
        await s.run(`DELETE FROM ${t.bufferFiles}`);
        await s.run(`DELETE FROM ${t.buffer}`);
        await prune(
          s,
          t,
          old.map((row) => columnString(row, 'digest')),
        );
        return buckets.map((row) => columnString(row, 'bucket')).sort(compareText);
      });
    },

    async commit(options: CommitOptions = {}) {
      assertMessage(options.message);
      const wanted = options.buckets === undefined ? undefined : validateBucketList(options.buckets);
      return driver.write(async (s) => {
        const staged = (await s.all(`SELECT bucket FROM ${t.buffer}`)).map((r) => columnString(r, 'bucket'));
        if (staged.length === 0) {
          throw new StoreError(StoreErrorCode.EmptyBuffer, 'nothing to commit: the staging buffer is empty');
        }
        const missing = wanted?.filter((bucket) => !staged.includes(bucket)) ?? [];
        if (missing.length > 0) {
          throw new StoreError(
            StoreErrorCode.EmptyBuffer,
            `nothing staged for bucket(s) ${missing.map((b) => `'${b}'`).join(', ')}; ` +
              `staged: ${staged
                .sort(compareText)
                .map((b) => `'${b}'`)
                .join(', ')}`,
          );
        }
        const last = await lastRevisionId(s, t);
        const next = last + 1;
        await s.run(`INSERT INTO ${t.revisions} (id, created_at, message) VALUES (?, ?, ?)`, [next, new Date().toISOString(), options.message ?? null]);
        await s.run(
          `INSERT INTO ${t.revisionFiles} (revision_id, bucket, source, digest)
           SELECT ?, bucket, source, digest FROM ${t.revisionFiles} WHERE revision_id = ?`,
          [next, last],
        );
        for (const bucket of wanted ?? staged) {
          await s.run(`DELETE FROM ${t.revisionFiles} WHERE revision_id = ? AND bucket = ?`, [next, bucket]);
          await s.run(
            `INSERT INTO ${t.revisionFiles} (revision_id, bucket, source, digest)
             SELECT ?, bucket, source, digest FROM ${t.bufferFiles} WHERE bucket = ?`,
            [next, bucket],
          );
          await s.run(`DELETE FROM ${t.bufferFiles} WHERE bucket = ?`, [bucket]);
          await s.run(`DELETE FROM ${t.buffer} WHERE bucket = ?`, [bucket]);
        }
        return readRevision(s, t, next);
      });
    },
  };
}

/** Committed revisions, their documents and their differences. */
function revisionReads(driver: SqlDriver, t: TableNames): Pick<RevisionStore, 'latest' | 'get' | 'list' | 'documents' | 'diff'> {
  return {
    latest() {
      return driver.read(async (s) => {
        const last = await lastRevisionId(s, t);
        return last === 0 ? null : readRevision(s, t, last);
      });
    },

    async get(id: number) {
      assertRevisionId(id);
      return driver.read((s) => readRevision(s, t, id));
    },

    list() {
      return driver.read(async (s) =>
        buildRevisions(
          await s.all(`SELECT id, created_at, message FROM ${t.revisions} ORDER BY id`),
          await s.all(`SELECT DISTINCT revision_id, bucket FROM ${t.revisionFiles}`),
          await s.all(`SELECT revision_id, tag, data, created_at FROM ${t.revisionTags}`),
        ),
      );
    },

    async documents(id: number) {
      assertRevisionId(id);
      return driver.read(async (s) => {
        await assertRevisionExists(s, t, id);
        const rows = await s.all(
          `SELECT f.bucket, f.source, c.text FROM ${t.revisionFiles} f
           JOIN ${t.contents} c ON c.digest = f.digest WHERE f.revision_id = ?`,
          [id],
        );
        return rows
          .map((r) => ({
            bucket: columnString(r, 'bucket'),
            source: columnString(r, 'source'),
            text: columnString(r, 'text'),
          }))
          .sort((a, b) => compareText(a.bucket, b.bucket) || compareText(a.source, b.source));
      });
    },

    async diff(from: number, to: number) {
      assertRevisionId(from, true);
      assertRevisionId(to, true);
      return driver.read(async (s) => {
        const side = async (id: number): Promise<DiffEntry[]> => {
          if (id === 0) return [];
          await assertRevisionExists(s, t, id);
          const rows = await s.all(`SELECT bucket, source, digest FROM ${t.revisionFiles} WHERE revision_id = ?`, [id]);
          return rows.map((r) => ({
            bucket: columnString(r, 'bucket'),
            source: columnString(r, 'source'),
            digest: columnString(r, 'digest'),
          }));
        };
        return diffEntries(from, to, await side(from), await side(to));
      });
    },
  };
}

/** Tags on committed revisions. */
function tagMethods(driver: SqlDriver, t: TableNames): Pick<RevisionStore, 'tag' | 'untag' | 'hasSiteAction'> {
  return {
    async tag(id: number, tag: string, data?: TagData) {
      assertRevisionId(id);
      assertTagName(tag);
      const json = serializeTagData(tag, data);
      return driver.write(async (s) => {
        await assertRevisionExists(s, t, id);
        await s.run(
          `INSERT INTO ${t.revisionTags} (revision_id, tag, data, created_at) VALUES (?, ?, ?, ?)
           ON CONFLICT (revision_id, tag) DO UPDATE SET data = excluded.data, created_at = excluded.created_at`,
          [id, tag, json, new Date().toISOString()],
        );
        const [row] = await s.all(`SELECT tag, data, created_at FROM ${t.revisionTags} WHERE revision_id = ? AND tag = ?`, [id, tag]);
        if (!row) throw new Error(`tag '${tag}' of revision ${id} vanished inside its own transaction`);
        return buildTag(row);
      });
    },

    async untag(id: number, tag: string) {
      assertRevisionId(id);
      assertTagName(tag);
      return driver.write(async (s) => {
        await assertRevisionExists(s, t, id);
        const removed = await s.run(`DELETE FROM ${t.revisionTags} WHERE revision_id = ? AND tag = ?`, [id, tag]);
        return removed > 0;
      });
    },

    hasSiteAction() {
      return driver.read(async (s) => {
        const rows = await s.all(`SELECT 1 AS found FROM ${t.revisionTags} WHERE tag IN (?, ?) LIMIT 1`, [SiteActionTag.success, SiteActionTag.failure]);
        return rows.length > 0;
      });
    },
  };
}

/** The {@link RevisionStore} over `driver` (whose `read`/`write` refuse once the owning store is closed). */
export function sqlRevisionStore(driver: SqlDriver): RevisionStore {
  const t = driver.tables;
  return { ...bufferMethods(driver, t), ...revisionReads(driver, t), ...tagMethods(driver, t) };
}
