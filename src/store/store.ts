/**
 * The store: one database (SQLite or PostgreSQL, see `openStore`) seen as
 * its parts, each with its own interface and SQL module.
 */
import type { ActionStore } from './runs/action-store.ts';
import type { DesignStore } from './designs/design-store.ts';
import type { DriftStore } from './drift/drift-store.ts';
import type { FleetStore } from './fleet/fleet-store.ts';
import type { PluginStore } from './plugins/plugin-store.ts';
import type { RevisionStore } from './revisions/revision-store.ts';
import type { RunStore } from './runs/run-store.ts';

/**
 * The whole store, by its parts: `store.revisions.latest()`,
 * `store.runs.nodes(…)`. Every method of every part is atomic and safe to
 * call from several processes on one database; after {@link Store.close}
 * every part rejects with Closed.
 */
export interface Store {
  /** The staging buffer, committed revisions and their tags. */
  readonly revisions: RevisionStore;
  /** Each revision's validated design. */
  readonly designs: DesignStore;
  /** Update runs, their per-node results and their waves. */
  readonly runs: RunStore;
  /** Runs as Shipyard actions: execution ids and the command audit. */
  readonly actions: ActionStore;
  /** Drift reports and their per-node rows. */
  readonly drift: DriftStore;
  /** Label plugin sets, plugin status and the set each run pinned. */
  readonly plugins: PluginStore;
  /** The fleet registry (a store at a fleet's centre holds it; a site's store leaves it empty). */
  readonly fleet: FleetStore;
  /** Release the database; later calls reject with Closed. Idempotent. */
  close(): Promise<void>;
}
