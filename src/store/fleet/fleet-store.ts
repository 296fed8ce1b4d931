/**
 * The fleet registry, kept by the store at the fleet's centre: each site's
 * name, the task queue its worker polls and its labels. Nothing else of a
 * site is here: its documents, runs and credentials stay with the site's
 * own worker and store, reached only through that task queue.
 */
import type { FleetSite } from '../../core/fleet/sites.ts';

/** A registered site, as the registry keeps it. */
export interface FleetSiteRecord extends FleetSite {
  addedAt: Date;
  /** Who registered it (absent: unknown). */
  addedBy?: string;
}

/** Most sites one {@link FleetStore.list} page holds. */
export const MAX_FLEET_PAGE = 1000;

/** The fleet registry. */
export interface FleetStore {
  /**
   * Registers `site`. Rejects with InvalidArgument for an entry the fleet's
   * rules refuse, and Conflict when its name or its task queue is already
   * registered; nothing is written then.
   */
  add(site: FleetSite, by?: string): Promise<FleetSiteRecord>;
  /** The site named `name`; null when none is. */
  get(name: string): Promise<FleetSiteRecord | null>;
  /** Up to `limit` sites (at most {@link MAX_FLEET_PAGE}) in name order, after `after` when given. */
  list(options?: { after?: string; limit?: number }): Promise<FleetSiteRecord[]>;
  /** Sites registered. */
  count(): Promise<number>;
  /** Unregisters `name`; false when it was not registered. */
  remove(name: string): Promise<boolean>;
}
