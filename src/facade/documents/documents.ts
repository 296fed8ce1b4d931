/**
 * The one facade over site documents and revisions shared by the CLI and the
 * HTTP API: validate, stage, commit, list, show, diff, tag. As Shipyard
 * does it: staging checks each document of the bucket on its own (so a site
 * can be staged one bucket at a time, whatever refers to what); a commit
 * validates the whole site the buffer makes, and refuses it on any error
 * unless forced. What is refused stores nothing and lists every error.
 */
import { FailureType } from '../../core/plan/failure-types.ts';
import type { SiteError } from '../../core/plan/site-error.ts';
import { validateDocumentsAlone } from '../../core/site/validate-documents.ts';
import { validateSite, type SiteValidation } from '../../core/site/validate-site.ts';
import { keepCommittedDesign, type DesignMemory } from '../../store/designs/design-cache.ts';
import { validateDocuments } from '../../store/revisions/revision-checks.ts';
import { isStoreError, StoreErrorCode } from '../../store/store-error.ts';
import type { Revision, RevisionDocument, SourceFile } from '../../store/revisions/revision-store.ts';
import type { Store } from '../../store/store.ts';
import { createConfigdocs } from './configdocs.ts';
import { documentValidationError, RelabelError } from '../relabel-error.ts';

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

/** Builds the documents facade over a store; a commit's design is remembered in `designs` when given (the facade's own cache). */
export function createDocuments(store: Store, designs?: Pick<DesignMemory, 'remember'>) {
  /** Files of the committed site with the buffer laid over it, bucket by bucket. */
  async function prospective(): Promise<{ bucket: string; files: readonly SourceFile[] }[]> {
    const buckets = new Map<string, SourceFile[]>();
    const latest = await store.revisions.latest();
    if (latest) {
      for (const d of await store.revisions.documents(latest.id)) {
        const files = buckets.get(d.bucket) ?? [];
        files.push({ source: d.source, text: d.text });
        buckets.set(d.bucket, files);
      }
    }
    for (const staged of await store.revisions.buffer()) buckets.set(staged.bucket, [...staged.files]);
    return [...buckets].sort(([a], [b]) => (a < b ? -1 : 1)).map(([bucket, files]) => ({ bucket, files }));
  }

  const asDocuments = (buckets: { bucket: string; files: readonly SourceFile[] }[]): RevisionDocument[] =>
    buckets.flatMap(({ bucket, files }) => files.map((f) => ({ bucket, source: f.source, text: f.text })));

  /** Checks a bucket's documents each on its own (YAML, schema, label syntax, names given twice); throws every error. */
  function checkAlone(bucket: string, files: readonly SourceFile[]): void {
    if (files.length === 0) throw new RelabelError(FailureType.Invalid, `no documents given for bucket ${bucket}`);
    const result = validateDocumentsAlone(files.map((f) => ({ source: `${bucket}/${f.source}`, text: f.text })));
    if (!result.ok) throw invalid(result.errors, `bucket ${bucket} has invalid documents`);
  }

  /** The staged buckets' names and every error of the site they would make (with its files and validation); EmptyBuffer when nothing is staged. */
  async function checkBuffer(): Promise<{ buckets: string[]; errors: SiteError[]; files: RevisionDocument[]; validation: SiteValidation }> {
    const buffered = await store.revisions.buffer();
    if (buffered.length === 0) throw new RelabelError(FailureType.EmptyBuffer, 'nothing is staged: stage documents before committing');
    const files = asDocuments(await prospective());
    const validation = validateDocuments(files);
    return { buckets: buffered.map((b) => b.bucket), errors: validation.ok ? [] : validation.errors, files, validation };
  }

  return {
    /** Validates files on their own, as one site (pure; stores nothing). */
    validate(files: readonly SourceFile[]): SiteValidation {
      return validateSite(files);
    },

    /**
     * Stages `files` as the whole content of `bucket` after checking each
     * document on its own: YAML, schema, label syntax, names given twice in
     * the bucket. References to other documents (in this bucket or another,
     * staged or not) are not checked here but at commit. Invalid:
     * DocumentValidationFailed with every error, nothing staged.
     */
    async stage(bucket: string, files: readonly SourceFile[]) {
      checkAlone(bucket, files);
      return storeCall(() => store.revisions.stage(bucket, files));
    },

    /** Shipyard's named versions, collection status and buffer modes over the same store and checks. */
    configdocs: createConfigdocs(store, { check: checkAlone, call: storeCall }),

    /** The staged buckets. */
    buffer: () => store.revisions.buffer(),

    /** Drops the buffer; returns the buckets dropped. */
    discard: () => store.revisions.discardBuffer(),

    /**
     * What a commit would find (Shipyard's dry run): the staged buckets and
     * every error of the site the buffer makes (committed site with the
     * staged buckets laid over it). Commits nothing. EmptyBuffer when
     * nothing is staged.
     */
    checkCommit: async () => {
      const { buckets, errors } = await checkBuffer();
      return { buckets, errors };
    },

    /**
     * Commits the buffer as a new revision after validating the whole site it
     * makes: references across documents and buckets, inheritance, conflicts,
     * site-wide uniqueness. Invalid: DocumentValidationFailed, nothing
     * committed, the buffer kept. With `force`, commits anyway and returns
     * the errors as `warnings` (an update run refuses such a revision until
     * a later one fixes them).
     */
    async commit(options: { message?: string; force?: boolean } = {}): Promise<{ revision: Revision; warnings: SiteError[] }> {
      const { errors, files, validation } = await checkBuffer();
      if (errors.length > 0 && options.force !== true) throw invalid(errors, 'the staged site is invalid');
      const revision = await storeCall(() => store.revisions.commit(options.message === undefined ? {} : { message: options.message }));
      // The site was validated just now: runs of this revision read its design instead of validating again.
      if (validation.ok && (await keepCommittedDesign(store, revision.id, files, validation.design))) designs?.remember(revision.id, validation.design);
      return { revision, warnings: errors };
    },

    /** Every revision, oldest first. */
    list: () => store.revisions.list(),

    /** The latest revision, or null. */
    latest: () => store.revisions.latest(),

    /** One revision with its tags; RevisionNotFound when absent. */
    show: (id: number) => storeCall(() => store.revisions.get(id)),

    /** A revision's files. */
    files: (id: number) => storeCall(() => store.revisions.documents(id)),

    /** A revision's files and its validated design (or every error). */
    async rendered(id: number) {
      const docs = await storeCall(() => store.revisions.documents(id));
      return { documents: docs, validation: validateDocuments(docs) };
    },

    /** What changed between two revisions, by bucket and file. */
    diff: (from: number, to: number) => storeCall(() => store.revisions.diff(from, to)),

    /** Tags a revision (site-action-success, site-action-failure or free-form). */
    tag: (id: number, tag: string, data?: Record<string, unknown>) => storeCall(() => store.revisions.tag(id, tag, data)),

    /** Removes a tag; returns whether it was there. */
    untag: (id: number, tag: string) => storeCall(() => store.revisions.untag(id, tag)),
  };
}

/** The documents facade's type. */
export type Documents = ReturnType<typeof createDocuments>;
