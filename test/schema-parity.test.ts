/**
 * One-off proof for the move to src/store/schema.ts: at every schema
 * version, and after migrating from it, the schema rendered from the one
 * step list is the schema the two hand-kept files made (SQLite: sqlite_master
 * with its SQL text; PostgreSQL: columns, indexes and constraints).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { test } from 'node:test';
import pg from 'pg';
import { startPostgres } from '../stack/postgres.ts';
import { MIGRATIONS as OLD_SQLITE } from '../src/store/sqlite-schema.ts';
import { POSTGRES_MIGRATIONS as OLD_POSTGRES } from '../src/store/postgres-schema.ts';
import { META_TABLE, migrationSteps, renderSql, SCHEMA_VERSION, SqlDialect } from '../src/store/schema.ts';

function sqliteMaster(db: DatabaseSync): unknown[] {
  return db.prepare(`SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name`).all().map((r) => ({ ...r }));
}

test('SQLite: the rendered steps make the old schema at every version', () => {
  for (let v = 0; v <= SCHEMA_VERSION; v++) {
    const old = new DatabaseSync(':memory:');
    const now = new DatabaseSync(':memory:');
    old.exec('CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT');
    now.exec(renderSql(META_TABLE, SqlDialect.sqlite));
    for (const step of OLD_SQLITE) if (step.from < v) old.exec(step.sql);
    for (const sql of migrationSteps(0, SqlDialect.sqlite).slice(0, v)) now.exec(sql);
    assert.deepEqual(sqliteMaster(now), sqliteMaster(old), `version ${v}`);
    for (const step of OLD_SQLITE) if (step.from >= v) old.exec(step.sql);
    for (const sql of migrationSteps(v, SqlDialect.sqlite)) now.exec(sql);
    assert.deepEqual(sqliteMaster(now), sqliteMaster(old), `version ${v} migrated`);
  }
});

test('PostgreSQL: the rendered steps make the old schema at every version', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'relabel-schema-parity-'));
  const server = await startPostgres({ dir });
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  const catalog = async (schema: string) => {
    const strip = (rows: Record<string, unknown>[]) => JSON.parse(JSON.stringify(rows).replaceAll(schema, 'S')) as unknown;
    const columns = await client.query(
      `SELECT table_name, column_name, ordinal_position, data_type, is_nullable, column_default FROM information_schema.columns
       WHERE table_schema = $1 ORDER BY table_name, ordinal_position`, [schema]);
    const indexes = await client.query(`SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname`, [schema]);
    const constraints = await client.query(
      `SELECT cl.relname, co.conname, co.contype, pg_get_constraintdef(co.oid) AS def FROM pg_constraint co
       JOIN pg_class cl ON cl.oid = co.conrelid JOIN pg_namespace n ON n.oid = cl.relnamespace
       WHERE n.nspname = $1 ORDER BY cl.relname, co.conname`, [schema]);
    return { columns: strip(columns.rows), indexes: strip(indexes.rows), constraints: strip(constraints.rows) };
  };
  try {
    for (let v = 0; v <= SCHEMA_VERSION; v++) {
      const [old, now] = [`old_${v}`, `now_${v}`];
      await client.query(`CREATE SCHEMA "${old}"; CREATE TABLE "${old}".meta (key text PRIMARY KEY, value text NOT NULL)`);
      await client.query(`CREATE SCHEMA "${now}"; ${renderSql(META_TABLE, SqlDialect.postgres(now))}`);
      for (const step of OLD_POSTGRES) if (step.from < v) await client.query(step.sql(old));
      for (const sql of migrationSteps(0, SqlDialect.postgres(now)).slice(0, v)) await client.query(sql);
      assert.deepEqual(await catalog(now), await catalog(old), `version ${v}`);
      for (const step of OLD_POSTGRES) if (step.from >= v) await client.query(step.sql(old));
      for (const sql of migrationSteps(v, SqlDialect.postgres(now))) await client.query(sql);
      assert.deepEqual(await catalog(now), await catalog(old), `version ${v} migrated`);
    }
  } finally {
    await client.end();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
