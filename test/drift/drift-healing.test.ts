/**
 * Drift detection and healing against the real Temporal server and
 * kube-apiserver: after a real update run on the sample site, owned labels
 * changed and removed with the admin client (as `kubectl label` would) are
 * reported as drifted with their keys and nothing is written; a committed,
 * unapplied revision shows as pending; a node never relabelled is
 * unmanaged and one absent from the cluster missing. With the policy's
 * `heal`, exactly the drifted nodes are healed by one normal run at the
 * revision they carry (PATCHes counted by the API server); a run of the site
 * already going makes healing skip, and say so. Every heal run records who
 * started it, via `heal`: the user of `relabel drift`, the Schedule
 * (`schedule:relabel-drift/<site>`), or the detection's workflow. The drift
 * Schedule is created, listed, paused, unpaused, triggered (healing a node)
 * and deleted through the real CLI, and seen on the server with
 * `client.schedule.getHandle().describe()`. A trigger names the workflow it
 * started even when the Schedule's interval starts one just before it.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { userInfo } from 'node:os';
import { Client, ScheduleNotFoundError, ScheduleOverlapPolicy, type Connection, type ScheduleExecutionResult } from '@temporalio/client';
import { readAppliedRun } from '../../src/core/plan/applied-run.ts';
import { validateSite } from '../../src/core/site/validate-site.ts';
import { createDrift } from '../../src/facade/drift.ts';
import { createRuns } from '../../src/facade/runs/runs.ts';
import { createSchedules } from '../../src/facade/schedules.ts';
import { createNodeApi, loadKubeConfig } from '../../src/kube/nodes.ts';
import type { DetectDriftResult } from '../../src/contracts/drift-messages.ts';
import { TemporalScheduledById } from '../../src/contracts/search-attributes.ts';
import { eventually } from '../api-support.ts';
import { adminCore, adminKubeconfigPath, createNode, exits, nodePatchCount, relabelCli, startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

type Doc = Record<string, any>;

/**
 * A client on `client`'s connection whose schedule triggers (PatchSchedule
 * with triggerImmediately) reach the server only once `beforeTrigger` is done.
 */
function delayingTriggers(client: Client, beforeTrigger: (scheduleId: string) => Promise<void>): Client {
  const { connection } = client;
  const service = connection.workflowService;
  const workflowService = new Proxy(service, {
    get(target, key) {
      if (key !== 'patchSchedule') return Reflect.get(target, key, target);
      return async (request: Parameters<typeof service.patchSchedule>[0]) => {
        if (request.patch?.triggerImmediately) await beforeTrigger(request.scheduleId ?? '');
        return target.patchSchedule(request);
      };
    },
  });
  const delayed = new Proxy(connection, {
    get(target, key) {
      if (key === 'workflowService') return workflowService;
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  }) as Connection;
  return new Client({ connection: delayed, namespace: client.options.namespace });
}

describe('drift detection and healing', () => {
  const prefix = `dr${uniqueSuffix()}`;
  const base = prefixedSite(prefix);
  const nodes = base.nodes;
  const siteName = `${prefix}-site`;
  const [changed1, changed2, changed3, removed, pending1, pending2] = nodes as [string, string, string, string, string, string];
  const changedNodes = [changed1, changed2, changed3];
  const unmanaged = nodes.at(-2) as string;
  const missing = nodes.at(-1) as string;
  /** Revision 2: a new label for two nodes, committed and not applied. */
  const pendingEdit = (doc: Doc) => {
    if (doc.schema === 'drydock/BaremetalNode/v1' && [pending1, pending2].includes(doc.metadata.name)) {
      doc.data.metadata.owner_data = { ...doc.data.metadata.owner_data, 'example.com/drift-test': 'pending' };
    }
  };
  /** Revision 3: as revision 2, with the policy's drift action heal. */
  const healEdit = (doc: Doc) => {
    pendingEdit(doc);
    if (doc.schema === 'relabel/LabelPolicy/v1') doc.data.drift = { action: 'heal' };
  };
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let storeUrl: string;
  let drift: ReturnType<typeof createDrift>;
  const env = () => ({ RELABEL_STORE_URL: storeUrl, RELABEL_TASK_QUEUE: relabel.taskQueue });
  const wanted = validateSite(base.files);
  assert.ok(wanted.ok);
  const want = (node: string, key: string) => wanted.design.nodes[node]?.labels[key];

  const commit = async (edit: (doc: Doc) => void, message: string) => {
    await relabel.store.revisions.stage('site', prefixedSite(prefix, edit).files);
    return (await relabel.store.revisions.commit({ message })).id;
  };
  const labels = async (node: string) => (await adminCore().readNode({ name: node })).metadata?.labels ?? {};
  /** Who started run `run` and how, as the store and `relabel runs -o json` record it. */
  const startedOf = async (run: number) => {
    const stored = await relabel.store.runs.get(run);
    // Temporal's visibility store lists a run shortly after it ends.
    const listed = await eventually(
      async () =>
        JSON.parse(exits(await relabelCli(['runs', '--site', siteName, '-o', 'json'], env()), 0).stdout) as {
          run?: number;
          startedBy?: string;
          startedVia?: string;
        }[],
      (rows) => rows.some((r) => r.run === run),
      30_000,
      500,
    );
    const row = listed.find((r) => r.run === run);
    return { store: [stored.startedBy, stored.startedVia], runs: [row?.startedBy, row?.startedVia] };
  };

  before(async () => {
    ({ url: storeUrl } = await storeWithSite(base.files));
    relabel = await startRelabel(storeUrl);
    drift = createDrift({ client: relabel.client, store: relabel.store, designs: relabel.designs, taskQueue: relabel.taskQueue, namespace: 'default' });
    const core = adminCore();
    for (const name of nodes) if (name !== missing) await createNode(core, name);
    const targets = nodes.filter((n) => n !== missing && n !== unmanaged);
    const done = await relabel.runs.wait(await relabel.runs.start({ targets }));
    assert.equal(done.result?.status, 'success', JSON.stringify(done.result));
  });
  after(async () => {
    await relabel.client.schedule
      .getHandle(`relabel-drift/${siteName}`)
      .delete()
      .catch(() => undefined);
    await relabel.stop();
  });

  it('reports exactly the edited nodes as drifted with their keys, a committed unapplied revision as pending, and writes nothing', async () => {
    const admin = createNodeApi(loadKubeConfig(adminKubeconfigPath()));
    for (const name of changedNodes) await admin.patchNode(name, { metadata: { labels: { fluentd: 'disabled' } } });
    await admin.patchNode(removed, { metadata: { labels: { 'power-domain': null } } });
    assert.equal((await labels(changed1)).fluentd, 'disabled');
    assert.equal((await labels(removed))['power-domain'], undefined);
    assert.equal(await commit(pendingEdit, 'a new label for two nodes'), 2);

    const before = await nodePatchCount();
    const run = exits(await relabelCli(['drift', '--site', siteName, '--state', 'all', '-o', 'json'], env(), { timeoutMs: 120_000 }), 0);
    const { report, nodes: page } = JSON.parse(run.stdout);
    assert.equal(await nodePatchCount(), before, 'detection writes nothing');
    assert.deepEqual(report.counts, { total: 24, drifted: 4, moved: 0, pending: 2, unmanaged: 1, missing: 1, in_sync: 16, orphaned: 0 });
    assert.equal(report.revision, 2);
    assert.equal(report.action, 'report');
    assert.equal(report.heal, null);
    const byNode = new Map<string, any>(page.items.map((r: any) => [r.node, r]));
    assert.equal(page.total, 8);
    assert.deepEqual([...byNode.keys()].filter((n) => byNode.get(n).state === 'drifted').sort(), [...changedNodes, removed].sort());
    for (const name of changedNodes) {
      const row = byNode.get(name);
      assert.equal(row.revision, 1, 'drifted from the revision it carries');
      assert.deepEqual(row.detail.keys, {
        labels: [{ key: 'fluentd', change: 'changed', want: 'enabled', have: 'disabled' }],
        annotations: [],
        taints: [],
        records: [],
      });
    }
    assert.deepEqual(byNode.get(removed).detail.keys.labels, [{ key: 'power-domain', change: 'removed', want: want(removed, 'power-domain') }]);
    assert.equal(byNode.get(pending1).state, 'pending');
    assert.equal(byNode.get(pending2).state, 'pending');
    assert.equal(byNode.get(pending1).detail.changes, 1);
    assert.equal(byNode.get(unmanaged).state, 'unmanaged');
    assert.equal(byNode.get(missing).state, 'missing');

    // For people: the latest report, drifted nodes with what differs.
    const text = exits(await relabelCli(['drift', '--latest'], env()), 0).stdout;
    assert.match(text, /4 drifted, 2 pending, 1 unmanaged, 1 missing, 16 in sync of 24/);
    assert.match(text, new RegExp(`${changed1}\\s+-\\s+drifted\\s+1\\s+label fluentd changed \\(wants enabled, has disabled\\)`));
    assert.match(text, new RegExp(`${removed}\\s+-\\s+drifted\\s+1\\s+label power-domain removed`));
    assert.doesNotMatch(text, new RegExp(pending1));
    const paged = exits(await relabelCli(['drift', '--latest', '--limit', '2', '--offset', '1', '-o', 'json'], env()), 0);
    assert.equal(JSON.parse(paged.stdout).nodes.items.length, 2);
    assert.match(exits(await relabelCli(['drift', '--latest', '--limit', '2'], env()), 0).stdout, /nodes 1-2 of 4 drifted; more with --offset 2/);

    // The detection as the Temporal UI shows it.
    const d = await relabel.client.workflow.getHandle(`relabel-drift/${siteName}`).describe();
    assert.equal(d.type, 'detectDrift');
    assert.match((await d.staticSummary()) ?? '', new RegExp(`Drift detection of site ${siteName}`));
  });

  it('with the policy’s heal, heals exactly the drifted nodes in one normal run at their revision; nothing else is written', async () => {
    assert.equal(await commit(healEdit, 'heal drift'), 3);
    const before = await nodePatchCount();
    const result: DetectDriftResult = await drift.detect({ site: siteName });
    const patches = (await nodePatchCount()) - before;
    assert.equal(result.action, 'heal');
    assert.equal(result.counts.drifted, 4);
    assert.deepEqual(result.groups, [{ revision: 1, nodes: 4 }]);
    const [healRun] = result.heal?.runs ?? [];
    assert.equal(result.heal?.runs.length, 1, JSON.stringify(result.heal));
    assert.equal(result.heal?.skipped, undefined);
    assert.deepEqual(
      { revision: healRun?.revision, nodes: healRun?.nodes, status: healRun?.status, written: healRun?.written },
      { revision: 1, nodes: 4, status: 'success', written: 4 },
    );
    assert.equal(patches, 4, 'one PATCH per drifted node, as counted by the API server, and no other');
    for (const name of changedNodes) assert.equal((await labels(name)).fluentd, 'enabled');
    assert.equal((await labels(removed))['power-domain'], want(removed, 'power-domain'));
    const node = await adminCore().readNode({ name: changed1 });
    assert.deepEqual(readAppliedRun(node.metadata?.annotations ?? {}), { revision: 1, run: healRun?.run, site: siteName });
    assert.equal((await labels(pending1))['example.com/drift-test'], undefined, 'pending nodes are left for the operator');
    // A normal run, with its number, in the store and in Temporal.
    const status = await relabel.runs.status(healRun?.workflowId ?? '', healRun?.runId);
    assert.equal(status.workflowId, `update-labels/${siteName}`);
    assert.equal(status.action, 'heal_drift');
    assert.equal(status.result?.run, healRun?.run);
    // Started through the facade with no one named: the detection's workflow is who, heal is how.
    assert.deepEqual([status.startedBy, status.startedVia], [`workflow:relabel-drift/${siteName}`, 'heal']);
    const by = [`workflow:relabel-drift/${siteName}`, 'heal'];
    assert.deepEqual(await startedOf(healRun?.run ?? 0), { store: by, runs: by });
    assert.deepEqual((await relabel.runs.nodes(healRun?.run ?? 0, { limit: 100 })).items.map((o) => o.node).sort(), [...changedNodes, removed].sort());
    // Recorded on the report; the next detection finds nothing drifted and starts nothing.
    assert.deepEqual((await relabel.store.drift.getReport(result.report)).heal, result.heal);
    const again = await drift.detect();
    assert.equal(again.counts.drifted, 0);
    assert.equal(again.counts.pending, 2);
    assert.equal(again.heal, undefined);
  });

  it('skips healing while a run of the site is going, and says so; heals on the next detection', async () => {
    await createNodeApi(loadKubeConfig(adminKubeconfigPath())).patchNode(changed2, { metadata: { labels: { fluentd: 'off' } } });
    // A run of the site no worker serves: it stays running.
    const idle = createRuns({
      client: relabel.client,
      store: relabel.store,
      designs: relabel.designs,
      taskQueue: `nobody-${uniqueSuffix()}`,
      namespace: 'default',
    });
    const blocking = await idle.start({ targets: [pending1] });
    try {
      const before = await nodePatchCount();
      const result = await drift.detect();
      assert.equal(result.counts.drifted, 1);
      assert.deepEqual(result.heal?.runs, []);
      assert.match(result.heal?.skipped ?? '', /healing of revision 1 not started: RunInProgress: an update_labels run is already in progress/);
      assert.equal(await nodePatchCount(), before);
      const shown = exits(await relabelCli(['drift', '--latest'], env()), 0).stdout;
      assert.match(shown, /heal:\n {2}no run started\n {2}healing of revision 1 not started: RunInProgress/);
    } finally {
      await relabel.client.workflow.getHandle(blocking.workflowId, blocking.runId).terminate('test over');
    }
    // The next detection, from the CLI, heals it; the heal run records the user who ran `relabel drift`.
    const healed = JSON.parse(exits(await relabelCli(['drift', '--site', siteName, '-o', 'json'], env(), { timeoutMs: 120_000 }), 0).stdout);
    const [healRun] = healed.report.heal.runs;
    assert.equal(healRun?.status, 'success', JSON.stringify(healed.report.heal));
    assert.equal((await labels(changed2)).fluentd, 'enabled');
    const by = [userInfo().username, 'heal'];
    assert.deepEqual(await startedOf(healRun.run), { store: by, runs: by });
    const table = exits(await relabelCli(['runs', '--site', siteName], env()), 0).stdout;
    assert.match(table, new RegExp(`^${healRun.run}\\s+update-labels/${siteName}\\s+${userInfo().username}\\s+heal\\s`, 'm'));
  });

  it('the drift schedule through the CLI: create, list, pause, unpause, trigger (a report), delete', async () => {
    const id = `relabel-drift/${siteName}`;
    const created = JSON.parse(exits(await relabelCli(['schedule', 'create', 'drift', '--site', siteName, '--every', '10m', '-o', 'json'], env()), 0).stdout);
    assert.deepEqual(
      { id: created.scheduleId, kind: created.kind, site: created.site, paused: created.paused, every: created.every },
      { id, kind: 'drift', site: siteName, paused: false, every: '10m' },
    );
    assert.ok(created.nextRun);
    const described = await relabel.client.schedule.getHandle(id).describe();
    assert.equal(described.spec.intervals?.[0]?.every, 600_000);
    assert.equal(described.policies.overlap, ScheduleOverlapPolicy.SKIP);
    assert.equal(described.action.type, 'startWorkflow');
    assert.equal(described.action.workflowType, 'detectDrift');
    assert.equal(described.action.taskQueue, relabel.taskQueue);

    // Clear errors, nothing changed.
    assert.match(exits(await relabelCli(['schedule', 'create', 'drift', '--site', siteName], env()), 2).stderr, /schedule relabel-drift\/.* exists already/);
    assert.match(
      exits(await relabelCli(['schedule', 'create', 'drift', '--site', 'elsewhere'], env()), 2).stderr,
      /unknown site "elsewhere": this store's site is/,
    );
    assert.match(exits(await relabelCli(['schedule', 'create', 'drift', '--every', '10x'], env()), 2).stderr, /bad interval "10x": use a number and a unit/);
    assert.match(exits(await relabelCli(['schedule', 'create', 'drift', '--every', '5s'], env()), 2).stderr, /must be between 1m and 7d/);
    assert.match(exits(await relabelCli(['schedule', 'create', 'polling'], env()), 2).stderr, /unknown schedule kind "polling": one of drift/);
    assert.match(exits(await relabelCli(['schedule', 'pause', 'relabel-drift/nowhere'], env()), 3).stderr, /no schedule relabel-drift\/nowhere/);
    const err = JSON.parse(exits(await relabelCli(['schedule', 'pause', 'relabel-drift/nowhere', '-o', 'json'], env()), 3).stdout);
    assert.equal(err.error.type, 'NotFound');

    // Someone else's schedule on the same server is not relabel's to list.
    const foreign = `nightly-backup-${uniqueSuffix()}`;
    await relabel.client.schedule.create({
      scheduleId: foreign,
      spec: { intervals: [{ every: '1h' }] },
      action: { type: 'startWorkflow', workflowType: 'backup', taskQueue: `nobody-${uniqueSuffix()}`, args: [] },
      state: { paused: true },
    });
    const listed = JSON.parse(exits(await relabelCli(['schedule', 'list', '-o', 'json'], env()), 0).stdout);
    await relabel.client.schedule.getHandle(foreign).delete();
    assert.ok(listed.every((s: { scheduleId: string }) => s.scheduleId.startsWith('relabel-')));
    assert.equal(
      listed.some((s: { scheduleId: string }) => s.scheduleId === foreign),
      false,
    );
    assert.equal(listed.find((s: { scheduleId: string }) => s.scheduleId === id)?.every, '10m');
    assert.match(exits(await relabelCli(['schedule', 'list'], env()), 0).stdout, new RegExp(`${id}\\s+active\\s+10m`));

    assert.equal(JSON.parse(exits(await relabelCli(['schedule', 'pause', 'drift', '-o', 'json'], env()), 0).stdout).paused, true);
    assert.equal((await relabel.client.schedule.getHandle(id).describe()).state.paused, true);
    assert.match(exits(await relabelCli(['schedule', 'list'], env()), 0).stdout, new RegExp(`${id}\\s+paused`));
    assert.equal(JSON.parse(exits(await relabelCli(['schedule', 'unpause', id, '-o', 'json'], env()), 0).stdout).paused, false);
    assert.equal((await relabel.client.schedule.getHandle(id).describe()).state.paused, false);

    // Paused again, so that the latest report and the schedule's last run below are the triggered
    // detection's, not one the interval starts (it fires on every 10-minute mark); a trigger takes the
    // action all the same.
    exits(await relabelCli(['schedule', 'pause', id], env()), 0);
    // A node drifts: the detection the Schedule starts heals it, and its heal run names the Schedule.
    await createNodeApi(loadKubeConfig(adminKubeconfigPath())).patchNode(changed3, { metadata: { labels: { fluentd: 'scheduled-off' } } });
    const latestBefore = (await relabel.store.drift.latestReport(siteName))?.id ?? 0;
    const triggered = JSON.parse(exits(await relabelCli(['schedule', 'trigger', 'drift', '--site', siteName, '-o', 'json'], env()), 0).stdout);
    assert.ok(triggered.workflow.workflowId.startsWith(`${id}-`), triggered.workflow.workflowId);
    const result = (await relabel.client.workflow.getHandle(triggered.workflow.workflowId, triggered.workflow.runId).result()) as DetectDriftResult;
    assert.ok(result.report > latestBefore, 'the triggered detection made a new report');
    const [scheduledHeal] = result.heal?.runs ?? [];
    assert.equal(scheduledHeal?.status, 'success', JSON.stringify(result.heal));
    assert.equal((await labels(changed3)).fluentd, 'enabled');
    const scheduled = [`schedule:${id}`, 'heal'];
    assert.deepEqual(await startedOf(scheduledHeal?.run ?? 0), { store: scheduled, runs: scheduled });
    const latest = JSON.parse(exits(await relabelCli(['drift', '--latest', '-o', 'json'], env()), 0).stdout);
    assert.equal(latest.report.id, result.report);
    assert.equal(latest.report.workflowId, triggered.workflow.workflowId);
    const afterTrigger = JSON.parse(exits(await relabelCli(['schedule', 'list', '-o', 'json'], env()), 0).stdout).find(
      (s: { scheduleId: string }) => s.scheduleId === id,
    );
    assert.equal(afterTrigger.lastRun.status, 'COMPLETED');
    assert.match(afterTrigger.lastRun.result, new RegExp(`^report ${result.report}: 1 drifted, 2 pending`));

    assert.equal(JSON.parse(exits(await relabelCli(['schedule', 'delete', 'drift', '-o', 'json'], env()), 0).stdout).deleted, true);
    await assert.rejects(relabel.client.schedule.getHandle(id).describe(), ScheduleNotFoundError);
    const gone = JSON.parse(exits(await relabelCli(['schedule', 'list', '-o', 'json'], env()), 0).stdout);
    assert.equal(
      gone.some((s: { scheduleId: string }) => s.scheduleId === id),
      false,
    );
  });

  it('a trigger names the workflow it started, though the Schedule’s interval started one just before it', async () => {
    // Every 2 s, overlaps allowed: each action starts a workflow no worker serves.
    const id = `trigger-race-${uniqueSuffix()}`;
    const handle = await relabel.client.schedule.create({
      scheduleId: id,
      spec: { intervals: [{ every: '2s' }] },
      action: {
        type: 'startWorkflow',
        workflowType: 'raceProbe',
        workflowId: id,
        taskQueue: `nobody-${uniqueSuffix()}`,
        args: [],
        workflowExecutionTimeout: '2m',
      },
      policies: { overlap: ScheduleOverlapPolicy.ALLOW_ALL },
    });
    const runOf = (a: ScheduleExecutionResult) => a.action.workflow.firstExecutionRunId;
    // The trigger reaches the server only once the interval has taken an action the facade had not seen.
    let raced: ScheduleExecutionResult | undefined;
    const client = delayingTriggers(relabel.client, async () => {
      const seen = new Set((await handle.describe()).info.recentActions.map(runOf));
      const fresh = async () => (await handle.describe()).info.recentActions.find((a) => !seen.has(runOf(a)));
      raced = await eventually(fresh, (a) => a !== undefined, 10_000, 100);
    });
    const schedules = createSchedules({ client, store: relabel.store, designs: relabel.designs, taskQueue: relabel.taskQueue });
    try {
      const started = await schedules.trigger(id);
      assert.ok(started && raced, JSON.stringify({ started, raced }));
      const recent = (await handle.describe()).info.recentActions;
      const triggered = recent.find((a) => runOf(a) === started.runId);
      assert.ok(triggered, 'one of the schedule’s actions');
      // Both recorded, the interval's first: the first action the facade had not seen is not the trigger's.
      const order = (a: ScheduleExecutionResult) => recent.findIndex((b) => runOf(b) === runOf(a));
      assert.ok(order(raced) >= 0 && order(raced) < order(triggered), JSON.stringify(recent));
      assert.notEqual(started.workflowId, raced.action.workflow.workflowId);
      // The interval's action is at a whole second of its 2 s grid; the trigger's at a time of its own, and
      // its workflow named by that time's second, off the grid.
      assert.equal(raced.scheduledAt.getTime() % 2000, 0, raced.scheduledAt.toISOString());
      assert.notEqual(triggered.scheduledAt.getTime() % 1000, 0, triggered.scheduledAt.toISOString());
      assert.equal(Math.floor(triggered.scheduledAt.getTime() / 1000) % 2, 1);
      assert.equal(started.workflowId, `${id}-${triggered.scheduledAt.toISOString().slice(0, 19)}Z`);
      const workflow = await relabel.client.workflow.getHandle(started.workflowId, started.runId).describe();
      assert.equal(workflow.type, 'raceProbe');
      assert.equal(workflow.typedSearchAttributes.get(TemporalScheduledById), id);
    } finally {
      const recent = (await handle.describe().catch(() => undefined))?.info.recentActions ?? [];
      await handle.delete();
      for (const a of recent) {
        await relabel.client.workflow
          .getHandle(a.action.workflow.workflowId, runOf(a))
          .terminate('test over')
          .catch(() => undefined);
      }
    }
  });
});
