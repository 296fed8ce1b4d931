/**
 * The audit trail against the real stack: a run started through the API
 * with the token named ops-alice shows ops-alice (via api) in `relabel
 * runs` (table and JSON), in the Shipyard action list and action view, and
 * in the store with its outcome; a run started by the CLI shows the OS
 * user (via cli); its retry shows retry and who asked; a run a Temporal
 * Schedule starts records the schedule's ID (via schedule); a run refused
 * after it was recorded ends with the outcome rejected.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import type { UpdateLabelsResult } from '../../src/contracts/messages.ts';
import { eventually, startTestApi, type TestApi } from '../api-support.ts';
import { adminCore, createNode, exits, relabelCli, startRelabel, temporalAddress, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

type Listed = { workflowId: string; runId: string; run?: number; startedBy?: string; startedVia?: string; outcome?: string };

describe('the audit trail: who started each run, and how', () => {
  const prefix = `au${uniqueSuffix()}`;
  const site = prefixedSite(prefix);
  // One target stays out of the cluster, so runs end partial_success and can be retried.
  const present = site.nodes.slice(0, -1);
  const osUser = userInfo().username;
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let api: TestApi;
  let env: Record<string, string>;

  before(async () => {
    const { url, store } = await storeWithSite(site.files);
    await store.close();
    const core = adminCore();
    for (const name of present) await createNode(core, name);
    relabel = await startRelabel(url);
    api = await startTestApi({
      storeUrl: url,
      taskQueue: relabel.taskQueue,
      tokens: [
        { token: 'alice-token-for-tests', role: 'admin', name: 'ops-alice' },
        { token: 'viewer-token-for-tests', role: 'viewer' },
      ],
    });
    env = { TEMPORAL_ADDRESS: temporalAddress(), RELABEL_STORE_URL: url, RELABEL_TASK_QUEUE: relabel.taskQueue };
  });

  after(async () => {
    await api?.close();
    await relabel?.stop();
  });

  /** `relabel runs -o json`, once it lists `count` runs that have ended. */
  const listed = (count: number) =>
    eventually(
      async () => JSON.parse(exits(await relabelCli(['runs', '-o', 'json'], env), 0).stdout) as Listed[],
      (runs) => runs.length >= count && runs.every((r) => r.outcome !== undefined),
      30_000,
      500,
    );

  it('a run started through the API records the token name and api, shown by relabel runs, GET actions and the store', async () => {
    const created = await api.call('POST', '/api/v1.0/actions', {
      token: 'alice-token-for-tests',
      body: { name: 'update_labels', parameters: { target_nodes: site.nodes } },
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.json.user, 'ops-alice');
    assert.equal(created.json.started_via, 'api');
    const done = await relabel.runs.wait({ workflowId: created.json.workflow_id, runId: created.json.run_id });
    assert.equal(done.result?.status, 'partial_success');
    assert.deepEqual([done.startedBy, done.startedVia], ['ops-alice', 'api']);

    const [first] = await listed(1);
    assert.deepEqual([first?.run, first?.startedBy, first?.startedVia, first?.outcome], [done.result?.run, 'ops-alice', 'api', 'partial_success']);
    const table = exits(await relabelCli(['runs'], env), 0).stdout;
    const [header, row] = table.split('\n');
    assert.match(header ?? '', /^RUN\s+WORKFLOW ID\s+BY\s+VIA\s+EXECUTION\s+STATUS/);
    assert.match(row ?? '', new RegExp(`^${done.result?.run}\\s+update-labels/${prefix}-site\\s+ops-alice\\s+api\\s+COMPLETED\\s+partial_success`));

    // The viewer token reads who started it: the action list and the action itself.
    const list = await api.call('GET', '/api/v1.0/actions', { token: 'viewer-token-for-tests' });
    assert.equal(list.status, 200);
    const entry = (list.json as { id: string; user: string | null; started_via: string | null }[]).find((a) => a.id === created.json.id);
    assert.deepEqual([entry?.user, entry?.started_via], ['ops-alice', 'api']);
    const view = await api.call('GET', `/api/v1.0/actions/${created.json.id}`, { token: 'viewer-token-for-tests' });
    assert.deepEqual([view.json.user, view.json.started_via], ['ops-alice', 'api']);

    const record = await relabel.store.runs.get(done.result?.run ?? 0);
    assert.deepEqual([record.startedBy, record.startedVia, record.outcome], ['ops-alice', 'api', 'partial_success']);
  });

  it('a run started by the CLI records the OS user and cli; its retry records retry and who asked', async () => {
    const started = exits(await relabelCli(['update-labels', '--nodes', site.nodes.join(','), '--wait', '-o', 'json'], env, { timeoutMs: 120_000 }), 4);
    const report = JSON.parse(started.stdout) as { workflowId: string; runId: string; startedBy?: string; startedVia?: string; result: { run: number } };
    assert.deepEqual([report.startedBy, report.startedVia], [osUser, 'cli']);
    const retried = exits(await relabelCli(['retry', report.workflowId, '--run-id', report.runId, '--wait', '-o', 'json'], env, { timeoutMs: 120_000 }), 5);
    const retry = JSON.parse(retried.stdout) as { startedBy?: string; startedVia?: string; result: { run: number; counts: { total: number } } };
    assert.deepEqual([retry.startedBy, retry.startedVia, retry.result.counts.total], [osUser, 'retry', 1], 'the retry ran over the one failed node');

    const runs = await listed(3);
    const byRun = new Map(runs.map((r) => [r.run, r]));
    assert.deepEqual([byRun.get(report.result.run)?.startedBy, byRun.get(report.result.run)?.startedVia], [osUser, 'cli']);
    assert.deepEqual(
      [byRun.get(retry.result.run)?.startedBy, byRun.get(retry.result.run)?.startedVia, byRun.get(retry.result.run)?.outcome],
      [osUser, 'retry', 'failure'],
    );
    const table = exits(await relabelCli(['runs'], env), 0).stdout;
    assert.match(table, new RegExp(`^${retry.result.run}\\s+\\S+\\s+${osUser}\\s+retry\\s+COMPLETED\\s+failure`, 'm'));
    assert.match(table, new RegExp(`^${report.result.run}\\s+\\S+\\s+${osUser}\\s+cli\\s+COMPLETED\\s+partial_success`, 'm'));

    const store = relabel.store;
    assert.deepEqual(
      [(await store.runs.get(retry.result.run)).startedVia, (await store.runs.get(retry.result.run)).retryOf, (await store.runs.get(retry.result.run)).outcome],
      ['retry', report.result.run, 'failure'],
    );
    const status = exits(await relabelCli(['status', report.workflowId, '--run-id', report.runId], env), 4).stdout;
    assert.match(status, new RegExp(`started by\\s+${osUser} \\(cli\\)`));
  });

  it("a run a Temporal Schedule starts records the schedule's ID, via schedule", async () => {
    const scheduleId = `relabel-audit-${prefix}`;
    const schedule = await relabel.client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: '365d' }] },
      action: { type: 'startWorkflow', workflowType: 'updateLabels', args: [{ targets: [present[0] as string] }], taskQueue: relabel.taskQueue },
      state: { paused: true },
    });
    try {
      await schedule.trigger();
      const action = await eventually(
        async () => (await schedule.describe()).info.recentActions.at(-1),
        (a) => a !== undefined,
        30_000,
      );
      const workflowId = action?.action.workflow.workflowId ?? '';
      const result = (await relabel.client.workflow.getHandle(workflowId).result()) as UpdateLabelsResult;
      assert.equal(result.status, 'success');
      const record = await relabel.store.runs.get(result.run);
      assert.deepEqual([record.startedBy, record.startedVia, record.outcome], [scheduleId, 'schedule', 'success']);
      // Recorded by the workflow, not the facade: its action id still finds this execution.
      assert.equal(record.executionRunId, action?.action.workflow.firstExecutionRunId);
      assert.equal((await relabel.store.runs.byActionId(record.actionId ?? ''))?.id, result.run);
      const runs = await eventually(
        async () => JSON.parse(exits(await relabelCli(['runs', '-o', 'json'], env), 0).stdout) as Listed[],
        (all) => all.some((r) => r.workflowId === workflowId && r.outcome !== undefined),
        30_000,
        500,
      );
      const listedRun = runs.find((r) => r.workflowId === workflowId);
      assert.deepEqual([listedRun?.startedBy, listedRun?.startedVia], [scheduleId, 'schedule']);
    } finally {
      await schedule.delete();
    }
  });

  it('a run refused after it was recorded has the outcome rejected', async () => {
    const record = await relabel.store.runs.create({
      workflowId: `relabel-audit-rejected-${prefix}`,
      revision: 1,
      targets: [present[0] as string],
      startedBy: 'ops-alice',
      startedVia: 'api',
    });
    const handle = await relabel.client.workflow.start('updateLabels', {
      workflowId: `relabel-audit-rejected-${prefix}`,
      taskQueue: relabel.taskQueue,
      args: [{ run: record.id, revision: 99, audit: { by: 'ops-alice', via: 'api' } }],
    });
    await assert.rejects(handle.result(), (err: Error & { cause?: { type?: string } }) => err.cause?.type === 'RevisionNotFound');
    assert.equal((await relabel.store.runs.get(record.id)).outcome, 'rejected');
  });
});
