/**
 * The {@link Store} over any {@link SqlDriver}: each part built from its own
 * SQL module over one driver, so closing the store closes them all.
 */
import type { Store } from '../store.ts';
import { closableDriver, type SqlDriver } from './sql-driver.ts';
import { sqlRevisionStore } from '../revisions/sql-revision-store.ts';
import { sqlDesignStore } from '../designs/sql-design-store.ts';
import { sqlRunStore } from '../runs/sql-run-store.ts';
import { sqlActionStore } from '../runs/sql-action-store.ts';
import { sqlDriftStore } from '../drift/sql-drift-store.ts';
import { sqlPluginStore } from '../plugins/sql-plugin-store.ts';
import { sqlFleetStore } from '../fleet/sql-fleet-store.ts';

/**
 * The store over `driver`, which it owns from now on (closed by
 * {@link Store.close}). Backends call this; callers see only {@link Store}.
 */
export function sqlStore(driver: SqlDriver): Store {
  const owned = closableDriver(driver);
  return {
    revisions: sqlRevisionStore(owned),
    designs: sqlDesignStore(owned),
    runs: sqlRunStore(owned),
    actions: sqlActionStore(owned),
    drift: sqlDriftStore(owned),
    plugins: sqlPluginStore(owned),
    fleet: sqlFleetStore(owned),
    close: () => owned.close(),
  };
}
