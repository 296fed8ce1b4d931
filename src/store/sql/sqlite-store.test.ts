import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, describe, test } from 'node:test';
import { openSqliteStore, SQLITE_MEMORY } from './sqlite-store.ts';
import { SCHEMA_VERSION } from './schema.ts';
import { storeContract } from '../../../test/kit/store/contract.ts';
import { assertActionsWork, assertAuditWorks, assertDriftWorks, assertRunsWork, rejectsWith } from '../../../test/kit/store/fixture.ts';

const dir = mkdtempSync(join(tmpdir(), 'relabel-sqlite-store-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let counter = 0;
const freshPath = () => join(dir, `store-${++counter}`, 'revisions.db');

storeContract('sqlite', { freshUrl: async () => `sqlite:${freshPath()}` });

describe('SQLite backend specifics', () => {
  test('creates parent directories, uses WAL and records the schema version', async () => {
    const path = freshPath();
    const store = await openSqliteStore(path);
    await store.close();
    const db = new DatabaseSync(path);
    try {
      assert.equal(db.prepare('PRAGMA journal_mode').get()?.journal_mode, 'wal');
      assert.deepEqual(
        { ...db.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).get() },
        {
          value: String(SCHEMA_VERSION),
        },
      );
    } finally {
      db.close();
    }
  });

  test('a version-1 database (before runs were stored) is migrated in place, revisions kept', async () => {
    const path = freshPath();
    const store = await openSqliteStore(path);
    await store.revisions.stage('site', [{ source: 'a.yaml', text: 'a: 1\n' }]);
    await store.revisions.commit();
    await store.close();
    const db = new DatabaseSync(path);
    db.exec(
      `DROP TABLE drift_nodes; DROP TABLE drift_reports; DROP TABLE plugin_set_labels; DROP TABLE plugin_set_plugins; DROP TABLE plugin_sets; DROP TABLE plugin_status; DROP TABLE run_plugin_sets; DROP TABLE run_commands; DROP TABLE run_waves; DROP TABLE revision_designs; DROP TABLE fleet_sites; DROP TABLE run_nodes; DROP TABLE runs; UPDATE meta SET value = '1' WHERE key = 'schema_version'`,
    );
    db.close();
    const migrated = await openSqliteStore(path);
    try {
      assert.equal((await migrated.revisions.latest())?.id, 1);
      await assertRunsWork(migrated);
    } finally {
      await migrated.close();
    }
    const check = new DatabaseSync(path);
    try {
      assert.equal(check.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).get()?.value, String(SCHEMA_VERSION));
      const index = check.prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'run_nodes_status'`).get();
      assert.equal(index?.name, 'run_nodes_status', 'the (run_id, status, seq) index was created');
    } finally {
      check.close();
    }
    // Opening again is a no-op.
    await (await openSqliteStore(path)).close();
  });

  test('a version-2 database (before drift reports, label plugins and the audit trail) gains them in place, its runs kept', async () => {
    const path = freshPath();
    await (await openSqliteStore(path)).close();
    // What a version-2 relabel left behind: the runs table without the audit columns, and a run in it.
    const db = new DatabaseSync(path);
    db.exec(
      `DROP TABLE drift_nodes; DROP TABLE drift_reports; DROP TABLE plugin_set_labels; DROP TABLE plugin_set_plugins; DROP TABLE plugin_sets; DROP TABLE plugin_status; DROP TABLE run_plugin_sets`,
    );
    db.exec(`DROP TABLE run_waves; DROP TABLE revision_designs; DROP TABLE fleet_sites; DROP INDEX run_nodes_wave; ALTER TABLE run_nodes DROP COLUMN wave;`);
    db.exec(
      `DROP TABLE run_commands; DROP INDEX runs_action_id; ALTER TABLE runs DROP COLUMN action_id; ALTER TABLE runs DROP COLUMN context_marker; ALTER TABLE runs DROP COLUMN execution_run_id`,
    );
    db.exec(`ALTER TABLE runs DROP COLUMN started_by; ALTER TABLE runs DROP COLUMN started_via; ALTER TABLE runs DROP COLUMN outcome`);
    db.exec(`UPDATE meta SET value = '2' WHERE key = 'schema_version'`);
    db.exec(
      `INSERT INTO runs (id, key, created_at, workflow_id, revision, dry_run, retry_of, target_count) VALUES (1, NULL, '2026-01-02T03:04:05.000Z', 'update-labels/s', 4, 0, NULL, 1)`,
    );
    db.exec(`INSERT INTO run_nodes (run_id, seq, node, status, written) VALUES (1, 0, 'n1', 'success', 1)`);
    db.close();
    const migrated = await openSqliteStore(path);
    try {
      const old = await migrated.runs.get(1);
      assert.deepEqual(
        { ...old },
        {
          id: 1,
          key: null,
          createdAt: new Date('2026-01-02T03:04:05.000Z'),
          workflowId: 'update-labels/s',
          revision: 4,
          dryRun: false,
          retryOf: null,
          targetCount: 1,
          startedBy: null,
          startedVia: null,
          outcome: null,
          actionId: null,
          contextMarker: null,
          executionRunId: null,
        },
      );
      assert.deepEqual(await migrated.runs.counts(1), { total: 1, queued: 0, pending: 0, success: 1, failure: 0, cancelled: 0, written: 1 });
      await assertAuditWorks(migrated, 1);
      await assertActionsWork(migrated, 1);
      await assertDriftWorks(migrated);
      const set = await migrated.plugins.saveSet({
        site: 's',
        digest: 'd',
        parts: [{ plugin: 'p', digest: 'x', polledAt: new Date(), labels: { n1: { 'a.example.com/k': 'v' } } }],
      });
      assert.equal(await migrated.plugins.pinRun(1, set.id), set.id);
    } finally {
      await migrated.close();
    }
    const check = new DatabaseSync(path);
    try {
      assert.equal(check.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).get()?.value, String(SCHEMA_VERSION));
      const columns = check.prepare(`SELECT name FROM pragma_table_info('runs') WHERE name IN ('started_by', 'started_via', 'outcome') ORDER BY name`).all();
      assert.deepEqual(
        columns.map((c) => c.name),
        ['outcome', 'started_by', 'started_via'],
      );
    } finally {
      check.close();
    }
    await (await openSqliteStore(path)).close();
  });

  test('a database with an unknown schema version is refused, untouched', async () => {
    const path = freshPath();
    await (await openSqliteStore(path)).close();
    const db = new DatabaseSync(path);
    db.exec(`UPDATE meta SET value = '99' WHERE key = 'schema_version'`);
    db.close();
    await rejectsWith(openSqliteStore(path), 'SchemaVersion', new RegExp(`schema version 99 is not supported .*knows version ${SCHEMA_VERSION}`));
    const check = new DatabaseSync(path);
    assert.equal(check.prepare(`SELECT value FROM meta WHERE key = 'schema_version'`).get()?.value, '99');
    check.close();
  });

  test('content is stored once and discarded content is pruned', async () => {
    const path = freshPath();
    const store = await openSqliteStore(path);
    const count = () => {
      const db = new DatabaseSync(path);
      try {
        return Number(db.prepare('SELECT COUNT(*) AS n FROM contents').get()?.n);
      } finally {
        db.close();
      }
    };
    await store.revisions.stage('a', [{ source: 'x.yaml', text: 'same' }]);
    await store.revisions.stage('b', [{ source: 'y.yaml', text: 'same' }]);
    await store.revisions.commit();
    assert.equal(count(), 1);
    await store.revisions.stage('a', [{ source: 'x.yaml', text: 'draft 1' }]);
    await store.revisions.stage('a', [{ source: 'x.yaml', text: 'draft 2' }]);
    assert.equal(count(), 2, 'draft 1 was replaced, so pruned');
    await store.revisions.discardBuffer();
    assert.equal(count(), 1);
    await store.close();
  });

  test('an in-memory store works and is private to its connection', async () => {
    const store = await openSqliteStore(SQLITE_MEMORY);
    await store.revisions.stage('site', [{ source: 'n.yaml', text: 'n' }]);
    assert.equal((await store.revisions.commit()).id, 1);
    await store.close();
    const other = await openSqliteStore(SQLITE_MEMORY);
    assert.equal(await other.revisions.latest(), null);
    await other.close();
  });

  test('an empty path is InvalidArgument', async () => {
    await rejectsWith(openSqliteStore(''), 'InvalidArgument', /path is empty/);
  });
});
