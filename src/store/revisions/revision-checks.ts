/**
 * The checks a run's revision must pass, read from the store, shared by the
 * facade (which refuses before starting) and the activities (which the
 * workflow runs as the authority): a committed revision exists, the asked
 * one exists, and some revision took part in a site action. Plus validation
 * of a revision's documents, with files named `bucket/source`.
 */
import { FailureType } from '../../core/plan/failure-types.ts';
import { validateSite, type SiteValidation } from '../../core/site/validate-site.ts';
import type { SiteSource } from '../../core/site/yaml-source.ts';
import { isStoreError, StoreErrorCode } from '../store-error.ts';
import type { RevisionDocument } from './revision-store.ts';
import type { Store } from '../store.ts';

/** The revision a run may apply, or why it may not. */
export type RunnableRevision =
  | { ok: true; revision: number }
  | {
      ok: false;
      type: typeof FailureType.NoCommittedRevision | typeof FailureType.RevisionNotFound | typeof FailureType.NoSiteActionRevision;
      message: string;
    };

/**
 * Resolves `revision` (the latest committed one when absent) and checks it
 * may be applied, in Shipyard's order. Reads only.
 */
export async function runnableRevision(store: Store, revision?: number): Promise<RunnableRevision> {
  const latest = await store.revisions.latest();
  if (!latest) {
    return { ok: false, type: FailureType.NoCommittedRevision, message: 'no committed revision of the site documents: stage and commit documents first' };
  }
  let id = latest.id;
  if (revision !== undefined) {
    try {
      id = (await store.revisions.get(revision)).id;
    } catch (err) {
      if (!isStoreError(err, StoreErrorCode.NotFound)) throw err;
      return { ok: false, type: FailureType.RevisionNotFound, message: `revision ${revision} does not exist (latest is ${latest.id})` };
    }
  }
  if (!(await store.revisions.hasSiteAction())) {
    return {
      ok: false,
      type: FailureType.NoSiteActionRevision,
      message: 'no revision has participated in a site action (tagged site-action-success or site-action-failure): deploy the site first',
    };
  }
  return { ok: true, revision: id };
}

/** Stored documents as the sources of one site, each file named `bucket/source`. */
export function validationSources(docs: readonly RevisionDocument[]): SiteSource[] {
  return docs.map((d) => ({ source: `${d.bucket}/${d.source}`, text: d.text }));
}

/** Validates stored documents as one site; files are named `bucket/source`. */
export function validateDocuments(docs: readonly RevisionDocument[]): SiteValidation {
  return validateSite(validationSources(docs));
}
