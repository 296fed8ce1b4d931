/**
 * The store's schema, written once for both backends: its version, its
 * tables, and the SQL of each version step. The steps are written in one
 * neutral spelling; a small dialect table says how SQLite and PostgreSQL
 * spell the few words that differ, and {@link migrationSteps} renders them.
 */
import type { TableNames } from './sql-driver.ts';

/** Schema version this code writes and reads. Stored in the `meta` table. */
export const SCHEMA_VERSION = 9;

/** The store's tables (besides `meta`), by the name the SQL code uses for each. */
const TABLES = {
  contents: 'contents',
  revisions: 'revisions',
  revisionFiles: 'revision_files',
  revisionTags: 'revision_tags',
  buffer: 'buffer',
  bufferFiles: 'buffer_files',
  runs: 'runs',
  runNodes: 'run_nodes',
  // Schema v3: drift reports.
  driftReports: 'drift_reports',
  driftNodes: 'drift_nodes',
  // Schema v4: label plugins.
  pluginSets: 'plugin_sets',
  pluginSetPlugins: 'plugin_set_plugins',
  pluginSetLabels: 'plugin_set_labels',
  pluginStatus: 'plugin_status',
  runPluginSets: 'run_plugin_sets',
  // Schema v6: commands issued against a run's action.
  runCommands: 'run_commands',
  // Schema v7: each run's waves.
  runWaves: 'run_waves',
  // Schema v8: each revision's validated design.
  revisionDesigns: 'revision_designs',
  // Schema v9: the fleet registry.
  fleetSites: 'fleet_sites',
} as const satisfies Record<keyof TableNames, string>;

/**
 * How a backend spells what the neutral SQL below leaves open. Column types
 * are written `TEXT`, `INTEGER` and `TIMESTAMP`; every table ends in
 * ` STRICT`; every table name is written `{name}`.
 */
export interface SqlDialect {
  readonly TEXT: string;
  readonly INTEGER: string;
  /** SQLite keeps ISO-8601 text written by the application; PostgreSQL a timestamptz. */
  readonly TIMESTAMP: string;
  /** SQLite checks column types only in STRICT tables; PostgreSQL always does. */
  readonly STRICT: string;
  /** A table's name as SQL refers to it (schema-qualified where the backend has schemas). */
  table(name: string): string;
}

/** The dialect table: the two backends side by side. */
export const SqlDialect = {
  sqlite: { TEXT: 'TEXT', INTEGER: 'INTEGER', TIMESTAMP: 'TEXT', STRICT: ' STRICT', table: (name: string) => name },
  /** PostgreSQL, with every table in `schema` (a name that needs no quoting beyond `"…"`). */
  postgres: (schema: string): SqlDialect => ({
    TEXT: 'text',
    INTEGER: 'integer',
    TIMESTAMP: 'timestamptz',
    STRICT: '',
    table: (name) => `"${schema}".${name}`,
  }),
} as const;

/** The store's table names in `dialect`. */
export function tableNames(dialect: SqlDialect): TableNames {
  return Object.fromEntries(Object.entries(TABLES).map(([key, name]) => [key, dialect.table(name)])) as Record<keyof TableNames, string>;
}

/** The table holding `schema_version`, created before any step runs. */
export const META_TABLE = `CREATE TABLE IF NOT EXISTS {meta} (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT`;

/**
 * The steps from each schema version to the next: `STEPS[v]` turns version
 * `v` into `v + 1`. A fresh database runs them all. Never edit a step that
 * has shipped; add one (and raise {@link SCHEMA_VERSION}).
 */
const STEPS: readonly string[] = [
  // Version 1: contents, revisions and their files and tags, the buffer.
  `
CREATE TABLE {contents} (digest TEXT PRIMARY KEY, text TEXT NOT NULL) STRICT;
CREATE TABLE {revisions} (id INTEGER PRIMARY KEY, created_at TIMESTAMP NOT NULL, message TEXT) STRICT;
CREATE TABLE {revision_files} (
  revision_id INTEGER NOT NULL REFERENCES {revisions} (id),
  bucket TEXT NOT NULL,
  source TEXT NOT NULL,
  digest TEXT NOT NULL REFERENCES {contents} (digest),
  PRIMARY KEY (revision_id, bucket, source)
) STRICT;
CREATE INDEX revision_files_digest ON {revision_files} (digest);
CREATE TABLE {revision_tags} (
  revision_id INTEGER NOT NULL REFERENCES {revisions} (id),
  tag TEXT NOT NULL,
  data TEXT NOT NULL,
  created_at TIMESTAMP NOT NULL,
  PRIMARY KEY (revision_id, tag)
) STRICT;
CREATE INDEX revision_tags_tag ON {revision_tags} (tag);
CREATE TABLE {buffer} (bucket TEXT PRIMARY KEY, staged_at TIMESTAMP NOT NULL) STRICT;
CREATE TABLE {buffer_files} (
  bucket TEXT NOT NULL REFERENCES {buffer} (bucket),
  source TEXT NOT NULL,
  digest TEXT NOT NULL REFERENCES {contents} (digest),
  PRIMARY KEY (bucket, source)
) STRICT;
CREATE INDEX buffer_files_digest ON {buffer_files} (digest);
`,
  // Version 2: update runs and their per-node results.
  `
CREATE TABLE {runs} (
  id INTEGER PRIMARY KEY,
  key TEXT UNIQUE,
  created_at TIMESTAMP NOT NULL,
  workflow_id TEXT,
  revision INTEGER,
  dry_run INTEGER NOT NULL,
  retry_of INTEGER,
  target_count INTEGER NOT NULL
) STRICT;
CREATE TABLE {run_nodes} (
  run_id INTEGER NOT NULL REFERENCES {runs} (id),
  seq INTEGER NOT NULL,
  node TEXT NOT NULL,
  status TEXT NOT NULL,
  written INTEGER NOT NULL DEFAULT 0,
  detail TEXT,
  observed TEXT,
  PRIMARY KEY (run_id, seq),
  UNIQUE (run_id, node)
) STRICT;
CREATE INDEX run_nodes_status ON {run_nodes} (run_id, status, seq);
`,
  // Version 3: drift reports and their per-node rows.
  `
CREATE TABLE {drift_reports} (
  id INTEGER PRIMARY KEY,
  key TEXT UNIQUE,
  created_at TIMESTAMP NOT NULL,
  finished_at TIMESTAMP,
  site TEXT NOT NULL,
  revision INTEGER NOT NULL,
  workflow_id TEXT,
  action TEXT NOT NULL,
  counts TEXT,
  heal TEXT
) STRICT;
CREATE INDEX drift_reports_site ON {drift_reports} (site, id);
CREATE TABLE {drift_nodes} (
  report_id INTEGER NOT NULL REFERENCES {drift_reports} (id),
  seq INTEGER NOT NULL,
  node TEXT NOT NULL,
  state TEXT NOT NULL,
  revision INTEGER,
  detail TEXT,
  PRIMARY KEY (report_id, seq)
) STRICT;
CREATE INDEX drift_nodes_state ON {drift_nodes} (report_id, state, seq);
`,
  // Version 4: label plugin sets, plugin status, and the set each run pinned
  // (set_id 0 in run_plugin_sets: the run uses no plugin set).
  `
CREATE TABLE {plugin_sets} (id INTEGER PRIMARY KEY, site TEXT NOT NULL, created_at TIMESTAMP NOT NULL, digest TEXT NOT NULL) STRICT;
CREATE INDEX plugin_sets_site ON {plugin_sets} (site, id);
CREATE TABLE {plugin_set_plugins} (
  set_id INTEGER NOT NULL REFERENCES {plugin_sets} (id),
  plugin TEXT NOT NULL,
  digest TEXT NOT NULL,
  polled_at TIMESTAMP NOT NULL,
  node_count INTEGER NOT NULL,
  label_count INTEGER NOT NULL,
  PRIMARY KEY (set_id, plugin)
) STRICT;
CREATE TABLE {plugin_set_labels} (
  set_id INTEGER NOT NULL REFERENCES {plugin_sets} (id),
  node TEXT NOT NULL,
  plugin TEXT NOT NULL,
  labels TEXT NOT NULL,
  PRIMARY KEY (set_id, node, plugin)
) STRICT;
CREATE INDEX plugin_set_labels_plugin ON {plugin_set_labels} (set_id, plugin);
CREATE TABLE {plugin_status} (
  site TEXT NOT NULL,
  plugin TEXT NOT NULL,
  polled_at TIMESTAMP NOT NULL,
  ok INTEGER NOT NULL,
  error TEXT,
  last_good_at TIMESTAMP,
  last_good_set INTEGER,
  node_count INTEGER,
  label_count INTEGER,
  PRIMARY KEY (site, plugin)
) STRICT;
CREATE TABLE {run_plugin_sets} (run_id INTEGER PRIMARY KEY, set_id INTEGER NOT NULL) STRICT;
`,
  // Version 5: who started each run, how, and how it ended (the audit trail).
  // Nullable columns added in place, so runs recorded before keep working.
  `
ALTER TABLE {runs} ADD COLUMN started_by TEXT;
ALTER TABLE {runs} ADD COLUMN started_via TEXT;
ALTER TABLE {runs} ADD COLUMN outcome TEXT;
`,
  // Version 6: each run's Shipyard action id (a ULID), context marker and
  // Temporal run id, and the commands issued against the action. Nullable
  // columns added in place: runs recorded before keep their old ids only.
  `
ALTER TABLE {runs} ADD COLUMN action_id TEXT;
ALTER TABLE {runs} ADD COLUMN context_marker TEXT;
ALTER TABLE {runs} ADD COLUMN execution_run_id TEXT;
CREATE UNIQUE INDEX runs_action_id ON {runs} (action_id);
CREATE TABLE {run_commands} (
  id TEXT PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES {runs} (id),
  command TEXT NOT NULL,
  issued_by TEXT,
  issued_at TIMESTAMP NOT NULL
) STRICT;
CREATE INDEX run_commands_run ON {run_commands} (run_id, id);
`,
  // Version 7: a run's waves, and each node's wave (null: the run has no waves).
  `
ALTER TABLE {run_nodes} ADD COLUMN wave INTEGER;
CREATE INDEX run_nodes_wave ON {run_nodes} (run_id, wave, status, seq);
CREATE TABLE {run_waves} (
  run_id INTEGER NOT NULL REFERENCES {runs} (id),
  idx INTEGER NOT NULL,
  name TEXT NOT NULL,
  PRIMARY KEY (run_id, idx)
) STRICT;
`,
  // Version 8: each revision's validated design, in the format of the code that resolved it.
  `
CREATE TABLE {revision_designs} (
  revision_id INTEGER NOT NULL PRIMARY KEY REFERENCES {revisions} (id),
  format TEXT NOT NULL,
  design TEXT NOT NULL
) STRICT;
`,
  // Version 9: the fleet registry: each site's name, its worker's task queue (one site's only) and its labels.
  `
CREATE TABLE {fleet_sites} (
  name TEXT PRIMARY KEY,
  task_queue TEXT NOT NULL UNIQUE,
  labels TEXT NOT NULL,
  added_at TIMESTAMP NOT NULL,
  added_by TEXT
) STRICT;
`,
];

const KNOWN_TABLES: ReadonlySet<string> = new Set([...Object.values(TABLES), 'meta']);

/** Neutral SQL in `dialect`'s spelling. Throws for a `{name}` that is not one of the store's tables. */
export function renderSql(sql: string, dialect: SqlDialect): string {
  return sql
    .replace(/\{([a-z_]+)\}/g, (_, name: string) => {
      if (!KNOWN_TABLES.has(name)) throw new Error(`schema SQL names an unknown table {${name}}`);
      return dialect.table(name);
    })
    .replace(/\b(TEXT|INTEGER|TIMESTAMP)\b/g, (word) => dialect[word as 'TEXT' | 'INTEGER' | 'TIMESTAMP'])
    .replace(/ STRICT\b/g, dialect.STRICT);
}

/**
 * The SQL that brings a database at schema version `found` (0: empty) up to
 * {@link SCHEMA_VERSION}, one script per version step, in `dialect`.
 */
export function migrationSteps(found: number, dialect: SqlDialect): string[] {
  if (STEPS.length !== SCHEMA_VERSION) throw new Error(`${STEPS.length} schema steps for schema version ${SCHEMA_VERSION}`);
  return STEPS.slice(found).map((sql) => renderSql(sql, dialect));
}
