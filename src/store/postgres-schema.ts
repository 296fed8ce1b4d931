/**
 * The PostgreSQL store's schema: its version and the SQL of each version
 * step, every table in the schema the store was opened with.
 */

/** Schema version this code writes and reads. Stored in the schema's `meta` table. */
export const POSTGRES_SCHEMA_VERSION = 8;

/** Version 1: contents, revisions and their files and tags, the buffer. */
function schemaSql(schema: string): string {
  const s = `"${schema}"`;
  return `
CREATE TABLE ${s}.contents (digest text PRIMARY KEY, text text NOT NULL);
CREATE TABLE ${s}.revisions (id integer PRIMARY KEY, created_at timestamptz NOT NULL, message text);
CREATE TABLE ${s}.revision_files (
  revision_id integer NOT NULL REFERENCES ${s}.revisions (id),
  bucket text NOT NULL,
  source text NOT NULL,
  digest text NOT NULL REFERENCES ${s}.contents (digest),
  PRIMARY KEY (revision_id, bucket, source)
);
CREATE INDEX revision_files_digest ON ${s}.revision_files (digest);
CREATE TABLE ${s}.revision_tags (
  revision_id integer NOT NULL REFERENCES ${s}.revisions (id),
  tag text NOT NULL,
  data text NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (revision_id, tag)
);
CREATE INDEX revision_tags_tag ON ${s}.revision_tags (tag);
CREATE TABLE ${s}.buffer (bucket text PRIMARY KEY, staged_at timestamptz NOT NULL);
CREATE TABLE ${s}.buffer_files (
  bucket text NOT NULL REFERENCES ${s}.buffer (bucket),
  source text NOT NULL,
  digest text NOT NULL REFERENCES ${s}.contents (digest),
  PRIMARY KEY (bucket, source)
);
CREATE INDEX buffer_files_digest ON ${s}.buffer_files (digest);
`;
}

/** Version 2: update runs and their per-node results. */
function runsSchemaSql(schema: string): string {
  const s = `"${schema}"`;
  return `
CREATE TABLE ${s}.runs (
  id integer PRIMARY KEY,
  key text UNIQUE,
  created_at timestamptz NOT NULL,
  workflow_id text,
  revision integer,
  dry_run integer NOT NULL,
  retry_of integer,
  target_count integer NOT NULL
);
CREATE TABLE ${s}.run_nodes (
  run_id integer NOT NULL REFERENCES ${s}.runs (id),
  seq integer NOT NULL,
  node text NOT NULL,
  status text NOT NULL,
  written integer NOT NULL DEFAULT 0,
  detail text,
  observed text,
  PRIMARY KEY (run_id, seq),
  UNIQUE (run_id, node)
);
CREATE INDEX run_nodes_status ON ${s}.run_nodes (run_id, status, seq);
`;
}

/** Version 3: drift reports and their per-node rows. */
function driftSchemaSql(schema: string): string {
  const s = `"${schema}"`;
  return `
CREATE TABLE ${s}.drift_reports (
  id integer PRIMARY KEY,
  key text UNIQUE,
  created_at timestamptz NOT NULL,
  finished_at timestamptz,
  site text NOT NULL,
  revision integer NOT NULL,
  workflow_id text,
  action text NOT NULL,
  counts text,
  heal text
);
CREATE INDEX drift_reports_site ON ${s}.drift_reports (site, id);
CREATE TABLE ${s}.drift_nodes (
  report_id integer NOT NULL REFERENCES ${s}.drift_reports (id),
  seq integer NOT NULL,
  node text NOT NULL,
  state text NOT NULL,
  revision integer,
  detail text,
  PRIMARY KEY (report_id, seq)
);
CREATE INDEX drift_nodes_state ON ${s}.drift_nodes (report_id, state, seq);
`;
}


/**
 * Version 4: label plugin sets, plugin status, and the set each run pinned
 * (set_id 0: the run uses no plugin set).
 */
function pluginsSchemaSql(schema: string): string {
  const s = `"${schema}"`;
  return `
CREATE TABLE ${s}.plugin_sets (id integer PRIMARY KEY, site text NOT NULL, created_at timestamptz NOT NULL, digest text NOT NULL);
CREATE INDEX plugin_sets_site ON ${s}.plugin_sets (site, id);
CREATE TABLE ${s}.plugin_set_plugins (
  set_id integer NOT NULL REFERENCES ${s}.plugin_sets (id),
  plugin text NOT NULL,
  digest text NOT NULL,
  polled_at timestamptz NOT NULL,
  node_count integer NOT NULL,
  label_count integer NOT NULL,
  PRIMARY KEY (set_id, plugin)
);
CREATE TABLE ${s}.plugin_set_labels (
  set_id integer NOT NULL REFERENCES ${s}.plugin_sets (id),
  node text NOT NULL,
  plugin text NOT NULL,
  labels text NOT NULL,
  PRIMARY KEY (set_id, node, plugin)
);
CREATE INDEX plugin_set_labels_plugin ON ${s}.plugin_set_labels (set_id, plugin);
CREATE TABLE ${s}.plugin_status (
  site text NOT NULL,
  plugin text NOT NULL,
  polled_at timestamptz NOT NULL,
  ok integer NOT NULL,
  error text,
  last_good_at timestamptz,
  last_good_set integer,
  node_count integer,
  label_count integer,
  PRIMARY KEY (site, plugin)
);
CREATE TABLE ${s}.run_plugin_sets (run_id integer PRIMARY KEY, set_id integer NOT NULL);
`;
}

/**
 * Version 5: who started each run, how, and how it ended (the audit trail).
 * Nullable columns added in place, so runs recorded before keep working.
 */
function runAuditSchemaSql(schema: string): string {
  const s = `"${schema}"`;
  return `
ALTER TABLE ${s}.runs ADD COLUMN started_by text;
ALTER TABLE ${s}.runs ADD COLUMN started_via text;
ALTER TABLE ${s}.runs ADD COLUMN outcome text;
`;
}

/**
 * Version 6: each run's Shipyard action id (a ULID), context marker and
 * Temporal run id, and the commands issued against the action. Nullable
 * columns added in place: runs recorded before keep their old ids only.
 */
function runActionSchemaSql(schema: string): string {
  const s = `"${schema}"`;
  return `
ALTER TABLE ${s}.runs ADD COLUMN action_id text;
ALTER TABLE ${s}.runs ADD COLUMN context_marker text;
ALTER TABLE ${s}.runs ADD COLUMN execution_run_id text;
CREATE UNIQUE INDEX runs_action_id ON ${s}.runs (action_id);
CREATE TABLE ${s}.run_commands (
  id text PRIMARY KEY,
  run_id integer NOT NULL REFERENCES ${s}.runs (id),
  command text NOT NULL,
  issued_by text,
  issued_at timestamptz NOT NULL
);
CREATE INDEX run_commands_run ON ${s}.run_commands (run_id, id);
`;
}

/** Version 7: a run's waves, and each node's wave (null: the run has no waves). */
function runWavesSchemaSql(schema: string): string {
  const s = `"${schema}"`;
  return `
ALTER TABLE ${s}.run_nodes ADD COLUMN wave integer;
CREATE INDEX run_nodes_wave ON ${s}.run_nodes (run_id, wave, status, seq);
CREATE TABLE ${s}.run_waves (
  run_id integer NOT NULL REFERENCES ${s}.runs (id),
  idx integer NOT NULL,
  name text NOT NULL,
  PRIMARY KEY (run_id, idx)
);
`;
}

/** Version 8: each revision's validated design, in the format of the code that resolved it. */
function revisionDesignsSchemaSql(schema: string): string {
  const s = `"${schema}"`;
  return `
CREATE TABLE ${s}.revision_designs (
  revision_id integer PRIMARY KEY REFERENCES ${s}.revisions (id),
  format text NOT NULL,
  design text NOT NULL
);
`;
}

/**
 * The steps from each schema version to the next: the SQL that turns
 * version `from` into `from + 1`. A fresh schema runs them all.
 */
export const POSTGRES_MIGRATIONS: readonly { from: number; sql: (schema: string) => string }[] = [
  { from: 0, sql: schemaSql },
  { from: 1, sql: runsSchemaSql },
  { from: 2, sql: driftSchemaSql },
  { from: 3, sql: pluginsSchemaSql },
  { from: 4, sql: runAuditSchemaSql },
  { from: 5, sql: runActionSchemaSql },
  { from: 6, sql: runWavesSchemaSql },
  { from: 7, sql: revisionDesignsSchemaSql },
];
