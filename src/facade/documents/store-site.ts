/**
 * The site a store holds: the `drydock/Region/v1` name of its latest
 * committed revision ('default' without one). Schedules and drift reports
 * are per site, and a store holds one site.
 */
import { FailureType } from '../../core/plan/failure-types.ts';
import type { DesignCache } from '../../store/designs/design-cache.ts';
import type { Store } from '../../store/store.ts';
import { documentValidationError, RelabelError } from '../relabel-error.ts';

/**
 * The store's site and latest revision. With `expected`, refuses
 * (InvalidArgument, "unknown site") a name that is not that site.
 * NoCommittedRevision before any commit; DocumentValidationFailed when the
 * latest revision's documents are invalid.
 */
export async function storeSite(store: Store, designs: DesignCache, expected?: string): Promise<{ site: string; revision: number }> {
  const latest = await store.revisions.latest();
  if (!latest) throw new RelabelError(FailureType.NoCommittedRevision, 'no revision has been committed yet, so the store has no site');
  const validation = await designs.get(latest.id);
  if (!validation.ok) throw documentValidationError(`revision ${latest.id}`, validation.errors);
  const site = validation.design.site;
  if (expected !== undefined && expected !== site) {
    throw new RelabelError(
      FailureType.InvalidArgument,
      `unknown site ${JSON.stringify(expected.slice(0, 100))}: this store's site is ${site} (latest revision ${latest.id})`,
    );
  }
  return { site, revision: latest.id };
}
