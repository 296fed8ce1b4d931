/**
 * The production-shaped Temporal (stack/temporal-postgres.ts): temporal-server
 * on PostgreSQL with SQL visibility, started on its own directory and ports
 * beside the global stack's dev server, serves the `default` namespace with
 * its retention and relabel's search attributes, and carries a real update
 * run of the sample site, found afterwards by a visibility query on them.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { SEARCH_ATTRIBUTES } from '../../src/core/plan/constants.ts';
import { freeLoopbackPort, stopProcess } from '../../stack/processes.ts';
import { NAMESPACE_RETENTION_HOURS, TEMPORAL_NAMESPACE, startTemporalPostgres, type TemporalPostgresStack } from '../../stack/temporal-postgres.ts';
import { adminCore, createNode, startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

const { IndexedValueType } = proto.temporal.api.enums.v1;

describe('Temporal on PostgreSQL', () => {
  const dir = mkdtempSync(join(tmpdir(), 'relabel-temporal-pg-'));
  let server: TemporalPostgresStack;
  let connection: Connection;

  before(async () => {
    server = await startTemporalPostgres(join(dir, 'temporal-postgres'), {
      frontend: await freeLoopbackPort(),
      http: await freeLoopbackPort(),
      metrics: await freeLoopbackPort(),
    });
    // helpers.ts reads the address from the environment: this file's clients and worker use this server.
    process.env.TEMPORAL_ADDRESS = server.address;
    delete process.env.TEMPORAL_UI_URL;
    connection = await Connection.connect({ address: server.address });
  });
  after(async () => {
    await connection?.close();
    for (const p of [...(server?.processes ?? [])].reverse()) await stopProcess(p);
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the default namespace with its retention and relabel search attributes', async () => {
    const ns = await connection.workflowService.describeNamespace({ namespace: TEMPORAL_NAMESPACE });
    assert.equal(Number(ns.config?.workflowExecutionRetentionTtl?.seconds), NAMESPACE_RETENTION_HOURS * 3600);
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace: TEMPORAL_NAMESPACE });
    const registered = Object.fromEntries(Object.keys(SEARCH_ATTRIBUTES).map((name) => [name, IndexedValueType[customAttributes?.[name] ?? 0]]));
    assert.deepEqual(registered, {
      RelabelRevision: 'INDEXED_VALUE_TYPE_INT',
      RelabelStatus: 'INDEXED_VALUE_TYPE_KEYWORD',
      RelabelSite: 'INDEXED_VALUE_TYPE_KEYWORD',
      RelabelNode: 'INDEXED_VALUE_TYPE_KEYWORD',
    });
  });

  it('runs an update of the sample site, found by its search attributes', async () => {
    const prefix = `tp${uniqueSuffix()}`;
    const site = prefixedSite(prefix);
    const { url } = await storeWithSite(site.files);
    const relabel = await startRelabel(url);
    try {
      const core = adminCore();
      for (const name of site.nodes) await createNode(core, name);
      const run = await relabel.runs.start({ targets: site.nodes });
      const done = await relabel.runs.wait(run);
      assert.equal(done.execution, 'COMPLETED');
      assert.equal(done.result?.status, 'success');
      assert.equal(done.result?.counts.written, site.nodes.length);
      // SQL visibility is written after the run closes, by the history service's transfer tasks.
      const query = `RelabelSite = '${prefix}-site' AND ExecutionStatus = 'Completed'`;
      let found: string[] = [];
      for (const deadline = Date.now() + 30_000; found.length === 0 && Date.now() < deadline; await sleep(200)) {
        found = [];
        for await (const wf of relabel.client.workflow.list({ query })) found.push(wf.workflowId);
      }
      assert.ok(found.includes(run.workflowId), `${run.workflowId} in ${JSON.stringify(found)}`);
    } finally {
      await relabel.stop();
    }
  });
});
