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
import { selectorOwnershipErrorsOf, validateSite, type SiteValidation } from '../../core/site/validate-site.ts';
import { keepCommittedDesign, type DesignMemory } from '../../store/designs/design-cache.ts';
import { validateDocuments, validationSources } from '../../store/revisions/revision-checks.ts';
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
  /** Files of the committed site with the buffer laid over it (unless `withBuffer` is false), bucket by bucket. */
  async function prospective(withBuffer = true): Promise<{ bucket: string; files: readonly SourceFile[] }[]> {
    const buckets = new Map<string, SourceFile[]>();
    const latest = await store.revisions.latest();
    if (latest) {
      for (const d of await store.revisions.documents(latest.id)) {
        const files = buckets.get(d.bucket) ?? [];
        files.push({ source: d.source, text: d.text });
        buckets.set(d.bucket, files);
      }
    }
    if (withBuffer) for (const staged of await store.revisions.buffer()) buckets.set(staged.bucket, [...staged.files]);
    return [...buckets].sort(([a], [b]) => (a < b ? -1 : 1)).map(([bucket, files]) => ({ bucket, files }));
  }

  const asDocuments = (buckets: { bucket: string; files: readonly SourceFile[] }[]): RevisionDocument[] =>
    buckets.flatMap(({ bucket, files }) => files.map((f) => ({ bucket, source: f.source, text: f.text })));

  /**
   * Checks a bucket's documents each on its own (YAML, schema, label
   * syntax, names given twice); throws every error, returns the warnings.
   */
  function checkAlone(bucket: string, files: readonly SourceFile[]): SiteError[] {
    if (files.length === 0) throw new RelabelError(FailureType.Invalid, `no documents given for bucket ${bucket}`);
    const result = validateDocumentsAlone(files.map((f) => ({ source: `${bucket}/${f.source}`, text: f.text })));
    if (!result.ok) throw invalid(result.errors, `bucket ${bucket} has invalid documents`);
    return result.warnings ?? [];
  }

  /**
   * Refuses `files` as bucket `bucket` when they make a node-set selector
   * read a key relabel owns in the site they would make (the committed one
   * with the buffer laid over it, `withBuffer` false: without it, and this
   * bucket): the errors the site has without them are not theirs to answer.
   */
  async function checkSelectors(bucket: string, files: readonly SourceFile[], withBuffer = true): Promise<void> {
    const buckets = (await prospective(withBuffer)).filter((b) => b.bucket !== bucket);
    const sourcesOf = (all: { bucket: string; files: readonly SourceFile[] }[]) => validationSources(asDocuments(all));
    const identity = (e: SiteError) => `${e.document.schema} ${e.document.name} ${e.path} ${e.message}`;
    const before = new Set(selectorOwnershipErrorsOf(sourcesOf(await prospective(withBuffer))).map(identity));
    const added = selectorOwnershipErrorsOf(sourcesOf([...buckets, { bucket, files }])).filter((e) => !before.has(identity(e)));
    if (added.length > 0) throw invalid(added, `bucket ${bucket} makes a node set select on a label relabel owns`);
  }

  /** The staged buckets' names and every error and warning of the site they would make (with its files and validation); EmptyBuffer when nothing is staged. */
  async function checkBuffer(): Promise<{
    buckets: string[];
    errors: SiteError[];
    warnings: SiteError[];
    files: RevisionDocument[];
    validation: SiteValidation;
  }> {
    const buffered = await store.revisions.buffer();
    if (buffered.length === 0) throw new RelabelError(FailureType.EmptyBuffer, 'nothing is staged: stage documents before committing');
    const files = asDocuments(await prospective());
    const validation = validateDocuments(files);
    const errors = validation.ok ? [] : validation.errors;
    return { buckets: buffered.map((b) => b.bucket), errors, warnings: validation.ok ? (validation.warnings ?? []) : [], files, validation };
  }

  return {
    /** Validates files on their own, as one site (pure; stores nothing). */
    validate(files: readonly SourceFile[]): SiteValidation {
      return validateSite(files);
    },

    /**
     * Stages `files` as the whole content of `bucket` after checking each
     * document on its own: YAML, schema, label syntax, names given twice in
     * the bucket; and, of the site they would make with the committed
     * documents and the buffer, that no node-set selector reads a key
     * relabel owns (see `checkSelectors`). Other references to other
     * documents (in this bucket or another, staged or not) are not checked
     * here but at commit. Invalid: DocumentValidationFailed with every
     * error, nothing staged. Returns the staged bucket and its `warnings`
     * (a selector on a label Cluster API keeps on Machines only).
     */
    async stage(bucket: string, files: readonly SourceFile[]) {
      const warnings = checkAlone(bucket, files);
      await checkSelectors(bucket, files);
      return { ...(await storeCall(() => store.revisions.stage(bucket, files))), warnings };
    },

    /** Shipyard's named versions, collection status and buffer modes over the same store and checks. */
    configdocs: createConfigdocs(store, {
      check: async (bucket, files, withBuffer) => {
        checkAlone(bucket, files);
        await checkSelectors(bucket, files, withBuffer);
      },
      call: storeCall,
    }),

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
      const { buckets, errors, warnings } = await checkBuffer();
      return { buckets, errors, warnings };
    },

    /**
     * Commits the buffer as a new revision after validating the whole site it
     * makes: references across documents and buckets, inheritance, conflicts,
     * site-wide uniqueness. Invalid: DocumentValidationFailed, nothing
     * committed, the buffer kept. With `force`, commits anyway and returns
     * the errors as `warnings` (an update run refuses such a revision until
     * a later one fixes them). `warnings` are then those errors (`forced`
     * of them), followed by the site's own warnings (a selector on a label
     * Cluster API keeps on Machines only), which refuse nothing.
     */
    async commit(options: { message?: string; force?: boolean } = {}): Promise<{ revision: Revision; warnings: SiteError[]; forced: number }> {
      const { errors, warnings, files, validation } = await checkBuffer();
      if (errors.length > 0 && options.force !== true) throw invalid(errors, 'the staged site is invalid');
      const revision = await storeCall(() => store.revisions.commit(options.message === undefined ? {} : { message: options.message }));
      // The site was validated just now: runs of this revision read its design instead of validating again.
      if (validation.ok && (await keepCommittedDesign(store, revision.id, files, validation.design))) designs?.remember(revision.id, validation.design);
      return { revision, warnings: [...errors, ...warnings], forced: errors.length };
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
