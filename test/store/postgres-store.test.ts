import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { freeLoopbackPort } from '../../stack/processes.ts';
import { startPostgres, type PostgresServer } from '../../stack/postgres.ts';
import { openStore } from '../../src/store/open-store.ts';
import { openPostgresStore } from '../../src/store/sql/postgres-store.ts';
import { SCHEMA_VERSION } from '../../src/store/sql/schema.ts';
import { storeContract } from '../kit/store/contract.ts';
import { assertActionsWork, assertAuditWorks, assertDriftWorks, assertRunsWork, rejectsWith } from '../kit/store/fixture.ts';

// A real server: RELABEL_TEST_PG_URL when set, else one started here. A server
// that cannot be reached or started fails the suite; it is never skipped.
const external = process.env.RELABEL_TEST_PG_URL;
let baseUrl = '';
let server: PostgresServer | undefined;
let dir: string | undefined;
const schemas: string[] = [];

before(async () => {
  if (external) {
    baseUrl = external;
    return;
  }
  dir = mkdtempSync(join(tmpdir(), 'relabel-postgres-store-'));
  server = await startPostgres({ dir });
  baseUrl = server.url;
});

after(async () => {
  if (external && schemas.length > 0) {
    const client = new pg.Client({ connectionString: baseUrl });
    await client.connect();
    try {
      for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    } finally {
      await client.end();
    }
  }
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A schema of its own for every store this file opens, so tests never share state. */
function freshSchema(): string {
  const schema = `relabel_test_${process.pid}_${schemas.length + 1}`;
  schemas.push(schema);
  return schema;
}

function urlWithSchema(schema: string): string {
  const url = new URL(baseUrl);
  url.searchParams.set('schema', schema);
  return url.toString();
}

storeContract('postgres', { freshUrl: async () => urlWithSchema(freshSchema()) });

describe('PostgreSQL backend specifics', () => {
  test('schemas are independent stores in one database', async (t) => {
    const one = await openStore(urlWithSchema(freshSchema()));
    t.after(() => one.close());
    const two = await openStore(urlWithSchema(freshSchema()));
    t.after(() => two.close());
    await one.revisions.stage('site', [{ source: 'n.yaml', text: 'n' }]);
    await one.revisions.commit();
    assert.equal(await two.revisions.latest(), null);
    assert.deepEqual(await two.revisions.buffer(), []);
  });

  test('a version-1 schema (before runs were stored) is migrated in place, revisions kept', async () => {
    const schema = freshSchema();
    const store = await openPostgresStore(baseUrl, { schema });
    await store.revisions.stage('site', [{ source: 'a.yaml', text: 'a: 1\n' }]);
    await store.revisions.commit({ message: 'before runs' });
    await store.close();
    const client = new pg.Client({ connectionString: baseUrl });
    await client.connect();
    try {
      // What a version-1 relabel left behind: the revision tables only.
      await client.query(
        `DROP TABLE "${schema}".drift_nodes, "${schema}".drift_reports, "${schema}".plugin_set_labels, "${schema}".plugin_set_plugins, "${schema}".plugin_sets, "${schema}".plugin_status, "${schema}".run_plugin_sets, "${schema}".run_commands, "${schema}".run_waves, "${schema}".revision_designs, "${schema}".fleet_sites; DROP TABLE "${schema}".run_nodes; DROP TABLE "${schema}".runs; UPDATE "${schema}".meta SET value = '1' WHERE key = 'schema_version'`,
      );
      const migrated = await openPostgresStore(baseUrl, { schema });
      try {
        assert.equal((await migrated.revisions.latest())?.message, 'before runs');
        await assertRunsWork(migrated);
        await assertDriftWorks(migrated);
      } finally {
        await migrated.close();
      }
      const { rows } = await client.query(`SELECT value FROM "${schema}".meta WHERE key = 'schema_version'`);
      assert.deepEqual(rows, [{ value: String(SCHEMA_VERSION) }]);
      const indexes = await client.query(`SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND tablename = 'run_nodes' ORDER BY indexname`, [schema]);
      assert.ok(
        indexes.rows.some((r: { indexname: string }) => r.indexname === 'run_nodes_status'),
        'the (run_id, status, seq) index was created',
      );
      // Opening again is a no-op.
      await (await openPostgresStore(baseUrl, { schema })).close();
    } finally {
      await client.end();
    }
  });

  test('a version-2 schema (before drift reports, label plugins and the audit trail) gains them in place, its runs kept', async () => {
    const schema = freshSchema();
    await (await openPostgresStore(baseUrl, { schema })).close();
    const client = new pg.Client({ connectionString: baseUrl });
    await client.connect();
    try {
      // What a version-2 relabel left behind: the runs table without the audit columns, and a run in it.
      await client.query(
        `DROP TABLE "${schema}".drift_nodes, "${schema}".drift_reports, "${schema}".plugin_set_labels, "${schema}".plugin_set_plugins, "${schema}".plugin_sets, "${schema}".plugin_status, "${schema}".run_plugin_sets, "${schema}".run_commands, "${schema}".run_waves, "${schema}".revision_designs, "${schema}".fleet_sites; ` +
          `ALTER TABLE "${schema}".run_nodes DROP COLUMN wave; ` +
          `ALTER TABLE "${schema}".runs DROP COLUMN action_id, DROP COLUMN context_marker, DROP COLUMN execution_run_id; ` +
          `ALTER TABLE "${schema}".runs DROP COLUMN started_by, DROP COLUMN started_via, DROP COLUMN outcome; ` +
          `UPDATE "${schema}".meta SET value = '2' WHERE key = 'schema_version'; ` +
          `INSERT INTO "${schema}".runs (id, key, created_at, workflow_id, revision, dry_run, retry_of, target_count) VALUES (1, NULL, '2026-01-02T03:04:05Z', 'update-labels/s', 4, 0, NULL, 1); ` +
          `INSERT INTO "${schema}".run_nodes (run_id, seq, node, status, written) VALUES (1, 0, 'n1', 'success', 1)`,
      );
      const migrated = await openPostgresStore(baseUrl, { schema });
      try {
        assert.deepEqual(
          { ...(await migrated.runs.get(1)) },
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
      const { rows } = await client.query(`SELECT value FROM "${schema}".meta WHERE key = 'schema_version'`);
      assert.deepEqual(rows, [{ value: String(SCHEMA_VERSION) }]);
      const columns = await client.query(
        `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'runs' AND column_name IN ('started_by', 'started_via', 'outcome') ORDER BY column_name`,
        [schema],
      );
      assert.deepEqual(
        columns.rows.map((r: { column_name: string }) => r.column_name),
        ['outcome', 'started_by', 'started_via'],
      );
      await (await openPostgresStore(baseUrl, { schema })).close();
    } finally {
      await client.end();
    }
  });

  test('a schema with an unknown version is refused, untouched', async () => {
    const schema = freshSchema();
    await (await openPostgresStore(baseUrl, { schema })).close();
    const client = new pg.Client({ connectionString: baseUrl });
    await client.connect();
    try {
      await client.query(`UPDATE "${schema}".meta SET value = '99' WHERE key = 'schema_version'`);
      await rejectsWith(
        openPostgresStore(baseUrl, { schema }),
        'SchemaVersion',
        new RegExp(`schema "${schema}": version 99 is not supported .*knows version ${SCHEMA_VERSION}`),
      );
      const { rows } = await client.query(`SELECT value FROM "${schema}".meta`);
      assert.deepEqual(rows, [{ value: '99' }]);
    } finally {
      await client.end();
    }
  });

  test('an invalid schema name is InvalidName and touches nothing', async () => {
    for (const schema of ['Bad', '1abc', 'a-b', 'x"; DROP SCHEMA public; --', 'a'.repeat(64)]) {
      await rejectsWith(openPostgresStore(baseUrl, { schema }), 'InvalidName', /invalid PostgreSQL schema name/);
    }
  });

  test('an unreachable server is the driver error, not a StoreError', async () => {
    const port = await freeLoopbackPort();
    await assert.rejects(openStore(`postgres://postgres@127.0.0.1:${port}/postgres`), /ECONNREFUSED/);
  });
});
