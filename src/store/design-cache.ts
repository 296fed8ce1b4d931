/**
 * Validated designs by revision, kept in a long-lived process (the worker,
 * the API server) so that the thousands of nodes of a run, and every request
 * about one revision, read and validate its documents once. Revisions are
 * immutable, so a cached design never goes stale.
 */
import type { Design, SiteValidation } from '../core/site/validate-site.ts';
import { validateDocuments } from './revision-checks.ts';
import type { RevisionStore } from './revision-store.ts';

/** A revision's design, or every error found in its documents. */
export type DesignResult = { ok: true; design: Design } | Extract<SiteValidation, { ok: false }>;

/** Looks up (validating at most once per revision) the design of a revision. */
export interface DesignCache {
  get(revision: number): Promise<DesignResult>;
}

/** A {@link DesignCache} over `store` keeping the `size` most recently used revisions. */
export function createDesignCache(store: RevisionStore, size = 4): DesignCache {
  const entries = new Map<number, Promise<DesignResult>>();
  return {
    get(revision) {
      let entry = entries.get(revision);
      if (entry) {
        entries.delete(revision);
      } else {
        // Only the design is kept: the parsed documents of a large site weigh hundreds of MiB.
        entry = store.documents(revision).then((docs): DesignResult => {
          const v = validateDocuments(docs);
          return v.ok ? { ok: true, design: v.design } : v;
        });
        // A failed read is not cached: the next attempt reads again.
        entry.catch(() => entries.delete(revision));
      }
      entries.set(revision, entry);
      while (entries.size > size) entries.delete(entries.keys().next().value as number);
      return entry;
    },
  };
}
