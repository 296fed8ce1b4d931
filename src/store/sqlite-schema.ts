/**
 * The embedded store's schema: its version, the SQL of each version step,
 * and the migration that brings a database file from the version it holds
 * to the one this code reads and writes.
 */
import type { DatabaseSync } from 'node:sqlite';
import { StoreError, StoreErrorCode } from './store-error.ts';

/** Schema version this code writes and reads. Stored in the `meta` table. */
export const SQLITE_SCHEMA_VERSION = 8;

// Timestamps are ISO-8601 text written by the application.
const SCHEMA = `
CREATE TABLE contents (digest TEXT PRIMARY KEY, text TEXT NOT NULL) STRICT;
CREATE TABLE revisions (id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, message TEXT) STRICT;
CREATE TABLE revision_files (
  revision_id INTEGER NOT NULL REFERENCES revisions (id),
  bucket TEXT NOT NULL,
  source TEXT NOT NULL,
  digest TEXT NOT NULL REFERENCES contents (digest),
  PRIMARY KEY (revision_id, bucket, source)
) STRICT;
CREATE INDEX revision_files_digest ON revision_files (digest);
CREATE TABLE revision_tags (
  revision_id INTEGER NOT NULL REFERENCES revisions (id),
  tag TEXT NOT NULL,
  data TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (revision_id, tag)
) STRICT;
CREATE INDEX revision_tags_tag ON revision_tags (tag);
CREATE TABLE buffer (bucket TEXT PRIMARY KEY, staged_at TEXT NOT NULL) STRICT;
CREATE TABLE buffer_files (
  bucket TEXT NOT NULL REFERENCES buffer (bucket),
  source TEXT NOT NULL,
  digest TEXT NOT NULL REFERENCES contents (digest),
  PRIMARY KEY (bucket, source)
) STRICT;
CREATE INDEX buffer_files_digest ON buffer_files (digest);
`;

// Version 2: update runs and their per-node results.
const RUNS_SCHEMA = `
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  key TEXT UNIQUE,
  created_at TEXT NOT NULL,
  workflow_id TEXT,
  revision INTEGER,
  dry_run INTEGER NOT NULL,
  retry_of INTEGER,
  target_count INTEGER NOT NULL
) STRICT;
CREATE TABLE run_nodes (
  run_id INTEGER NOT NULL REFERENCES runs (id),
  seq INTEGER NOT NULL,
  node TEXT NOT NULL,
  status TEXT NOT NULL,
  written INTEGER NOT NULL DEFAULT 0,
  detail TEXT,
  observed TEXT,
  PRIMARY KEY (run_id, seq),
  UNIQUE (run_id, node)
) STRICT;
CREATE INDEX run_nodes_status ON run_nodes (run_id, status, seq);
`;

// Version 3: drift reports and their per-node rows.
const DRIFT_SCHEMA = `
CREATE TABLE drift_reports (
  id INTEGER PRIMARY KEY,
  key TEXT UNIQUE,
  created_at TEXT NOT NULL,
  finished_at TEXT,
  site TEXT NOT NULL,
  revision INTEGER NOT NULL,
  workflow_id TEXT,
  action TEXT NOT NULL,
  counts TEXT,
  heal TEXT
) STRICT;
CREATE INDEX drift_reports_site ON drift_reports (site, id);
CREATE TABLE drift_nodes (
  report_id INTEGER NOT NULL REFERENCES drift_reports (id),
  seq INTEGER NOT NULL,
  node TEXT NOT NULL,
  state TEXT NOT NULL,
  revision INTEGER,
  detail TEXT,
  PRIMARY KEY (report_id, seq)
) STRICT;
CREATE INDEX drift_nodes_state ON drift_nodes (report_id, state, seq);
`;


// Version 4: label plugin sets, plugin status, and the set each run pinned.
// (set_id 0 in run_plugin_sets: the run uses no plugin set.)
const PLUGINS_SCHEMA = `
CREATE TABLE plugin_sets (id INTEGER PRIMARY KEY, site TEXT NOT NULL, created_at TEXT NOT NULL, digest TEXT NOT NULL) STRICT;
CREATE INDEX plugin_sets_site ON plugin_sets (site, id);
CREATE TABLE plugin_set_plugins (
  set_id INTEGER NOT NULL REFERENCES plugin_sets (id),
  plugin TEXT NOT NULL,
  digest TEXT NOT NULL,
  polled_at TEXT NOT NULL,
  node_count INTEGER NOT NULL,
  label_count INTEGER NOT NULL,
  PRIMARY KEY (set_id, plugin)
) STRICT;
CREATE TABLE plugin_set_labels (
  set_id INTEGER NOT NULL REFERENCES plugin_sets (id),
  node TEXT NOT NULL,
  plugin TEXT NOT NULL,
  labels TEXT NOT NULL,
  PRIMARY KEY (set_id, node, plugin)
) STRICT;
CREATE INDEX plugin_set_labels_plugin ON plugin_set_labels (set_id, plugin);
CREATE TABLE plugin_status (
  site TEXT NOT NULL,
  plugin TEXT NOT NULL,
  polled_at TEXT NOT NULL,
  ok INTEGER NOT NULL,
  error TEXT,
  last_good_at TEXT,
  last_good_set INTEGER,
  node_count INTEGER,
  label_count INTEGER,
  PRIMARY KEY (site, plugin)
) STRICT;
CREATE TABLE run_plugin_sets (run_id INTEGER PRIMARY KEY, set_id INTEGER NOT NULL) STRICT;
`;

// Version 5: who started each run, how, and how it ended (the audit trail).
// Nullable columns added in place, so runs recorded before keep working.
const RUN_AUDIT_SCHEMA = `
ALTER TABLE runs ADD COLUMN started_by TEXT;
ALTER TABLE runs ADD COLUMN started_via TEXT;
ALTER TABLE runs ADD COLUMN outcome TEXT;
`;

// Version 6: each run's Shipyard action id (a ULID), context marker and
// Temporal run id, and the commands issued against the action. Nullable
// columns added in place: runs recorded before keep their old ids only.
const RUN_ACTION_SCHEMA = `
ALTER TABLE runs ADD COLUMN action_id TEXT;
ALTER TABLE runs ADD COLUMN context_marker TEXT;
ALTER TABLE runs ADD COLUMN execution_run_id TEXT;
CREATE UNIQUE INDEX runs_action_id ON runs (action_id);
CREATE TABLE run_commands (
  id TEXT PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs (id),
  command TEXT NOT NULL,
  issued_by TEXT,
  issued_at TEXT NOT NULL
) STRICT;
CREATE INDEX run_commands_run ON run_commands (run_id, id);
`;

// Version 7: a run's waves, and each node's wave (null: the run has no waves).
const RUN_WAVES_SCHEMA = `
ALTER TABLE run_nodes ADD COLUMN wave INTEGER;
CREATE INDEX run_nodes_wave ON run_nodes (run_id, wave, status, seq);
CREATE TABLE run_waves (
  run_id INTEGER NOT NULL REFERENCES runs (id),
  idx INTEGER NOT NULL,
  name TEXT NOT NULL,
  PRIMARY KEY (run_id, idx)
) STRICT;
`;

// Version 8: each revision's validated design, in the format of the code that resolved it.
const REVISION_DESIGNS_SCHEMA = `
CREATE TABLE revision_designs (
  revision_id INTEGER NOT NULL PRIMARY KEY REFERENCES revisions (id),
  format TEXT NOT NULL,
  design TEXT NOT NULL
) STRICT;
`;

/**
 * The steps from each schema version to the next: the SQL that turns
 * version `from` into `from + 1`. A fresh database runs them all.
 */
export const MIGRATIONS: readonly { from: number; sql: string }[] = [
  { from: 0, sql: SCHEMA },
  { from: 1, sql: RUNS_SCHEMA },
  { from: 2, sql: DRIFT_SCHEMA },
  { from: 3, sql: PLUGINS_SCHEMA },
  { from: 4, sql: RUN_AUDIT_SCHEMA },
  { from: 5, sql: RUN_ACTION_SCHEMA },
  { from: 6, sql: RUN_WAVES_SCHEMA },
  { from: 7, sql: REVISION_DESIGNS_SCHEMA },
];

/** Create the schema on a fresh database, or bring an older one up to {@link SQLITE_SCHEMA_VERSION} step by step. */
export function migrate(db: DatabaseSync, path: string): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    db.exec('CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT');
    const row = db.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).get();
    const found = row === undefined ? 0 : Number(row.value);
    if (!(Number.isInteger(found) && found >= 0 && found <= SQLITE_SCHEMA_VERSION)) {
      throw new StoreError(StoreErrorCode.SchemaVersion,
        `${path}: schema version ${String(row?.value)} is not supported by this relabel ` +
          `(it knows version ${SQLITE_SCHEMA_VERSION})`,
      );
    }
    for (const step of MIGRATIONS) if (step.from >= found) db.exec(step.sql);
    if (row === undefined) {
      db.prepare(`INSERT INTO meta (key, value) VALUES ('schema_version', ?)`).run(String(SQLITE_SCHEMA_VERSION));
    } else if (found !== SQLITE_SCHEMA_VERSION) {
      db.prepare(`UPDATE meta SET value = ? WHERE key = 'schema_version'`).run(String(SQLITE_SCHEMA_VERSION));
    }
    db.exec('COMMIT');
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
}
