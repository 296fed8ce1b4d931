/**
 * Validated designs by revision, kept in the worker so that thousands of
 * relabelNode activities for one revision read and validate its documents
 * once. Revisions are immutable, so a cached design never goes stale.
 */
import type { SiteValidation } from '../core/validate-site.ts';
import { validateDocuments } from '../store/revision-checks.ts';
import type { RevisionStore } from '../store/revision-store.ts';

/** Looks up (validating at most once per revision) the design of a revision. */
export interface DesignCache {
  get(revision: number): Promise<SiteValidation>;
}

/** A {@link DesignCache} over `store` keeping the `size` most recently used revisions. */
export function createDesignCache(store: RevisionStore, size = 4): DesignCache {
  const entries = new Map<number, Promise<SiteValidation>>();
  return {
    get(revision) {
      let entry = entries.get(revision);
      if (entry) {
        entries.delete(revision);
      } else {
        entry = store.documents(revision).then(validateDocuments);
        // A failed read is not cached: the next attempt reads again.
        entry.catch(() => entries.delete(revision));
      }
      entries.set(revision, entry);
      while (entries.size > size) entries.delete(entries.keys().next().value as number);
      return entry;
    },
  };
}
