/**
 * The fleet registry over SQL: one row per site, its labels as JSON. The
 * fleet's rules (src/core/fleet/sites.ts) are checked before any write; the
 * table's own keys refuse a second site of one name or one task queue, so
 * two processes registering at once cannot both win.
 */
import { fleetSiteErrors, MAX_FLEET_SITES, type FleetSite } from '../../core/fleet/sites.ts';
import { StoreError, StoreErrorCode } from '../store-error.ts';
import { columnDate, columnNumber, columnString, columnStringOrNull, type SqlRow, type SqlDriver } from '../sql/sql-driver.ts';
import { MAX_FLEET_PAGE, type FleetSiteRecord, type FleetStore } from './fleet-store.ts';

/** Longest `by` kept. */
const MAX_BY = 128;

function recordOf(row: SqlRow): FleetSiteRecord {
  const by = columnStringOrNull(row, 'added_by');
  return {
    name: columnString(row, 'name'),
    taskQueue: columnString(row, 'task_queue'),
    labels: JSON.parse(columnString(row, 'labels')) as Record<string, string>,
    addedAt: columnDate(row, 'added_at'),
    ...(by !== null ? { addedBy: by } : {}),
  };
}

const invalid = (message: string) => new StoreError(StoreErrorCode.InvalidArgument, message);

function assertName(name: string): void {
  if (typeof name !== 'string' || name.length === 0 || name.length > 63) throw invalid('a site name needs 1 to 63 characters');
}

/** The {@link FleetStore} over `driver`. */
export function sqlFleetStore(driver: SqlDriver): FleetStore {
  const t = driver.tables;
  const select = `SELECT name, task_queue, labels, added_at, added_by FROM ${t.fleetSites}`;
  return {
    async add(site: FleetSite, by?: string) {
      const errors = fleetSiteErrors(site);
      if (errors.length > 0) throw invalid(errors.slice(0, 5).join('; '));
      const addedAt = new Date();
      const who = typeof by === 'string' && by.length > 0 ? by.slice(0, MAX_BY) : null;
      await driver.write(async (s) => {
        const [taken] = await s.all(`SELECT name, task_queue FROM ${t.fleetSites} WHERE name = ? OR task_queue = ?`, [site.name, site.taskQueue]);
        if (taken) {
          const other = columnString(taken, 'name');
          throw new StoreError(
            StoreErrorCode.Conflict,
            other === site.name
              ? `site ${site.name} is already registered`
              : `task queue ${site.taskQueue} is already site ${other}'s: each site's worker polls a queue of its own`,
          );
        }
        const [count] = await s.all(`SELECT COUNT(*) AS n FROM ${t.fleetSites}`);
        if (count && columnNumber(count, 'n') >= MAX_FLEET_SITES) throw invalid(`the fleet already holds ${MAX_FLEET_SITES} sites, the most it may`);
        const labels = JSON.stringify(Object.fromEntries(Object.entries(site.labels).sort(([a], [b]) => (a < b ? -1 : 1))));
        await s.run(`INSERT INTO ${t.fleetSites} (name, task_queue, labels, added_at, added_by) VALUES (?, ?, ?, ?, ?)`, [
          site.name,
          site.taskQueue,
          labels,
          addedAt.toISOString(),
          who,
        ]);
      });
      return { ...site, addedAt, ...(who !== null ? { addedBy: who } : {}) };
    },

    async get(name) {
      assertName(name);
      const [row] = await driver.read((s) => s.all(`${select} WHERE name = ?`, [name]));
      return row === undefined ? null : recordOf(row);
    },

    async list(options = {}) {
      const limit = options.limit ?? MAX_FLEET_PAGE;
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_FLEET_PAGE) throw invalid(`a page of sites holds 1 to ${MAX_FLEET_PAGE}`);
      const rows = await driver.read((s) =>
        options.after === undefined
          ? s.all(`${select} ORDER BY name LIMIT ?`, [limit])
          : s.all(`${select} WHERE name > ? ORDER BY name LIMIT ?`, [options.after, limit]),
      );
      return rows.map(recordOf);
    },

    async count() {
      const [row] = await driver.read((s) => s.all(`SELECT COUNT(*) AS n FROM ${t.fleetSites}`));
      return row ? columnNumber(row, 'n') : 0;
    },

    async remove(name) {
      assertName(name);
      return (await driver.write((s) => s.run(`DELETE FROM ${t.fleetSites} WHERE name = ?`, [name]))) > 0;
    },
  };
}
