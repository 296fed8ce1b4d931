import assert from 'node:assert/strict';
import { DatabaseSync } from 'node:sqlite';
import { describe, test } from 'node:test';
import { META_TABLE, migrationSteps, renderSql, SCHEMA_VERSION, SqlDialect, tableNames } from './schema.ts';

function sqliteMaster(db: DatabaseSync): unknown[] {
  return db
    .prepare(`SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name`)
    .all()
    .map((r) => ({ ...r }));
}

describe('the schema, written once', () => {
  test('has one step per version', () => {
    assert.equal(migrationSteps(0, SqlDialect.sqlite).length, SCHEMA_VERSION);
    assert.deepEqual(migrationSteps(SCHEMA_VERSION, SqlDialect.sqlite), []);
  });

  test('a SQLite database migrated from any version has the schema of a fresh one', () => {
    const fresh = new DatabaseSync(':memory:');
    for (const sql of migrationSteps(0, SqlDialect.sqlite)) fresh.exec(sql);
    for (let v = 1; v < SCHEMA_VERSION; v++) {
      const db = new DatabaseSync(':memory:');
      const steps = migrationSteps(0, SqlDialect.sqlite);
      for (const sql of steps.slice(0, v)) db.exec(sql);
      for (const sql of migrationSteps(v, SqlDialect.sqlite)) db.exec(sql);
      assert.deepEqual(sqliteMaster(db), sqliteMaster(fresh), `from version ${v}`);
    }
  });

  test('renders each dialect: SQLite STRICT tables of TEXT and INTEGER, PostgreSQL schema-qualified with timestamptz', () => {
    assert.equal(renderSql(META_TABLE, SqlDialect.sqlite), 'CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT');
    assert.equal(renderSql(META_TABLE, SqlDialect.postgres('s')), 'CREATE TABLE IF NOT EXISTS "s".meta (key text PRIMARY KEY, value text NOT NULL)');
    assert.equal(
      renderSql('CREATE TABLE {buffer} (bucket TEXT PRIMARY KEY, staged_at TIMESTAMP NOT NULL, n INTEGER) STRICT;', SqlDialect.postgres('s')),
      'CREATE TABLE "s".buffer (bucket text PRIMARY KEY, staged_at timestamptz NOT NULL, n integer);',
    );
    const postgres = migrationSteps(0, SqlDialect.postgres('s')).join('\n');
    assert.doesNotMatch(postgres, /\b(TEXT|INTEGER|TIMESTAMP|STRICT)\b|\{/);
    assert.equal(tableNames(SqlDialect.postgres('s')).runNodes, '"s".run_nodes');
    assert.equal(tableNames(SqlDialect.sqlite).runNodes, 'run_nodes');
  });

  test('refuses a table it does not know', () => {
    assert.throws(() => renderSql('DROP TABLE {nodes}', SqlDialect.sqlite), /unknown table \{nodes\}/);
  });
});
