/**
 * The one facade over site documents and revisions shared by the CLI and the
 * HTTP API: validate, stage, commit, list, show, diff, tag. Whatever would
 * make the site invalid is refused whole, with every error, and nothing is
 * stored.
 */
import { FailureType } from '../core/failure-types.ts';
import type { SiteError } from '../core/site-error.ts';
import { validateSite, type SiteValidation } from '../core/validate-site.ts';
import { validateDocuments } from '../store/revision-checks.ts';
import { isStoreError, StoreErrorCode } from '../store/store-error.ts';
import type { Revision, RevisionStore, SourceFile } from '../store/revision-store.ts';
import { documentValidationError, RelabelError } from './relabel-error.ts';

const invalid = (errors: SiteError[], what: string): RelabelError => documentValidationError(what, errors);

/** Store errors as facade errors: NotFound → RevisionNotFound, the rest by their code. */
async function storeCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (isStoreError(err)) throw new RelabelError(err.code === StoreErrorCode.NotFound ? FailureType.RevisionNotFound : err.code, err.message);
    throw err;
  }
}

/** Builds the documents facade over a store. */
export function createDocuments(store: RevisionStore) {
  /** Files of the committed site with the buffer (and `extra`) laid over it, bucket by bucket. */
  async function prospective(extra?: { bucket: string; files: readonly SourceFile[] }): Promise<{ bucket: string; files: readonly SourceFile[] }[]> {
    const buckets = new Map<string, SourceFile[]>();
    const latest = await store.latestRevision();
    if (latest) {
      for (const d of await store.documents(latest.id)) {
        const files = buckets.get(d.bucket) ?? [];
        files.push({ source: d.source, text: d.text });
        buckets.set(d.bucket, files);
      }
    }
    for (const staged of await store.buffer()) buckets.set(staged.bucket, [...staged.files]);
    if (extra) buckets.set(extra.bucket, [...extra.files]);
    return [...buckets].sort(([a], [b]) => (a < b ? -1 : 1)).map(([bucket, files]) => ({ bucket, files }));
  }

  function validateBuckets(buckets: { bucket: string; files: readonly SourceFile[] }[]): SiteValidation {
    return validateDocuments(buckets.flatMap(({ bucket, files }) => files.map((f) => ({ bucket, source: f.source, text: f.text }))));
  }

  return {
    /** Validates files on their own, as one site (pure; stores nothing). */
    validate(files: readonly SourceFile[]): SiteValidation {
      return validateSite(files);
    },

    /**
     * Stages `files` as the whole content of `bucket`, after validating the
     * site they would make (committed site + buffer + this bucket). Invalid:
     * DocumentValidationFailed with every error, nothing staged.
     */
    async stage(bucket: string, files: readonly SourceFile[]) {
      if (files.length === 0) throw new RelabelError(FailureType.Invalid, `no documents given for bucket ${bucket}`);
      const result = validateBuckets(await prospective({ bucket, files }));
      if (!result.ok) throw invalid(result.errors, `bucket ${bucket} would make the site invalid`);
      return storeCall(() => store.stage(bucket, files));
    },

    /** The staged buckets. */
    buffer: () => store.buffer(),

    /** Drops the buffer; returns the buckets dropped. */
    discard: () => store.discardBuffer(),

    /**
     * Commits the buffer as a new revision after validating the whole site it
     * makes. Invalid: DocumentValidationFailed, nothing committed.
     */
    async commit(message?: string): Promise<Revision> {
      const buffered = await store.buffer();
      if (buffered.length === 0) throw new RelabelError(FailureType.EmptyBuffer, 'nothing is staged: stage documents before committing');
      const result = validateBuckets(await prospective());
      if (!result.ok) throw invalid(result.errors, 'the staged site is invalid');
      return storeCall(() => store.commit(message === undefined ? {} : { message }));
    },

    /** Every revision, oldest first. */
    list: () => store.listRevisions(),

    /** The latest revision, or null. */
    latest: () => store.latestRevision(),

    /** One revision with its tags; RevisionNotFound when absent. */
    show: (id: number) => storeCall(() => store.getRevision(id)),

    /** A revision's files. */
    files: (id: number) => storeCall(() => store.documents(id)),

    /** A revision's files and its validated design (or every error). */
    async rendered(id: number) {
      const docs = await storeCall(() => store.documents(id));
      return { documents: docs, validation: validateDocuments(docs) };
    },

    /** What changed between two revisions, by bucket and file. */
    diff: (from: number, to: number) => storeCall(() => store.diff(from, to)),

    /** Tags a revision (site-action-success, site-action-failure or free-form). */
    tag: (id: number, tag: string, data?: Record<string, unknown>) => storeCall(() => store.tag(id, tag, data)),

    /** Removes a tag; returns whether it was there. */
    untag: (id: number, tag: string) => storeCall(() => store.untag(id, tag)),
  };
}

/** The documents facade's type. */
export type Documents = ReturnType<typeof createDocuments>;
