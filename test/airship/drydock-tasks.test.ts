/**
 * Contract of Drydock's task calls, against relabel's real API, worker,
 * Temporal and kube-apiserver: the requests are those Drydock's client and
 * CLI build (`airship-clients.ts`), and the answers are read as Shipyard's
 * Drydock operator reads them. The operator's own logic runs here on the
 * sample site's 24 nodes, two of which the cluster lacks: create the task,
 * poll `GET tasks/{id}` every interval until `complete` or `terminated`,
 * take the successes from the task's result, walk the subtasks, and find
 * the failed nodes — in the result, in `subtask_errors`, and through
 * `GET tasks` as `fetch_failure_details` does.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { CommitStatus } from '../../src/api/http/response-schemas.ts';
import { TaskList, TaskView } from '../../src/api/drydock/task-schemas.ts';
import { type startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite } from '../site.ts';
import { ADMIN, VIEWER, emptyStoreUrl, startApiAndWorker, type TestApi } from '../api-support.ts';
import { deckhandDesignRef, drydockClient, nodeNameFilter } from '../airship-clients.ts';

/** The poll interval of the operator here (Shipyard's relabel_nodes_interval, shortened for the test). */
const INTERVAL_S = 1;

describe("Drydock's task client and Shipyard's Drydock operator against relabel", () => {
  const prefix = `dd${uniqueSuffix()}`;
  const site = prefixedSite(prefix);
  const all = site.nodes;
  // Two nodes of the design the cluster does not have: they fail (NodeNotFound), the others succeed.
  const missing = [all[3], all[17]] as string[];
  const present = all.filter((n) => !missing.includes(n));
  let worker: Awaited<ReturnType<typeof startRelabel>>;
  let api: TestApi;
  let revision: number;

  before(async () => {
    ({ worker, api } = await startApiAndWorker(emptyStoreUrl(), present, { 'example.com/owner': 'people' }));
    assert.equal(all.length, 24);
    assert.equal((await api.call('POST', '/api/v1.0/configdocs/site', { body: site.files.map((f) => f.text).join('') })).status, 201);
    const commit = await api.call('POST', '/api/v1.0/commitconfigdocs');
    assert.equal(commit.status, 200, commit.text);
    revision = CommitStatus.parse(commit.json).revision.id;
    assert.equal((await api.call('POST', `/api/v1.0/revisions/${revision}/tags/site-action-success`)).status, 201);
  });
  after(async () => {
    await api?.close();
    await worker?.stop();
  });

  it("runs the operator's logic on a 24-node relabel_nodes task: polls to the end, then finds the failed nodes", async (t) => {
    const drydock = drydockClient(api, ADMIN, 'shipyard');
    // create_task: the operator's node filter names the target nodes.
    const created = await drydock.createTask(deckhandDesignRef(revision), 'relabel_nodes', nodeNameFilter(all));
    assert.equal(created.answer.status, 201, created.answer.text);
    assert.deepEqual(JSON.parse(created.body ?? ''), { action: 'relabel_nodes', design_ref: deckhandDesignRef(revision), node_filter: nodeNameFilter(all) });
    assert.deepEqual(Object.keys(created.headers), ['X-Context-Marker', 'X-End-User', 'X-Auth-Token', 'content-type']);
    const taskId = TaskView.parse(created.answer.json).task_id;
    assert.ok(taskId, 'the operator needs task_id');
    assert.equal(created.answer.headers.get('location'), `/api/v1.0/tasks/${taskId}`);

    // query_task: poll every interval until complete or terminated.
    const seen = new Set<string>();
    let last: TaskView | undefined;
    for (let i = 0; i <= 120; i++) {
      const got = await drydock.getTask(taskId);
      assert.equal(got.answer.status, 200, got.answer.text);
      last = TaskView.parse(got.answer.json);
      seen.add(last.status);
      if (last.status === 'complete' || last.status === 'terminated') break;
      await sleep(INTERVAL_S * 1000);
    }
    const finished = Date.now();
    assert.ok(last && last.status === 'complete', `ended ${last?.status}; seen ${[...seen].join()}`);
    assert.ok(
      [...seen].every((s) => ['queued', 'running', 'complete'].includes(s)),
      [...seen].join(),
    );
    // The poll loop ends within one interval of the run's end (plus the request's own time).
    const ended = Date.parse(last.updated ?? '');
    assert.ok(finished - ended <= INTERVAL_S * 1000 + 1000, `finished ${finished - ended} ms after the task ended`);
    t.diagnostic(`task ran ${ended - Date.parse(last.created)} ms; the poll loop ended ${finished - ended} ms after it (interval ${INTERVAL_S * 1000} ms)`);
    assert.equal(last.result.status, 'partial_success', 'the operator counts partial_success as done');
    assert.equal(last.design_ref, deckhandDesignRef(revision), 'design_ref echoed');
    assert.deepEqual(last.node_filter, nodeNameFilter(all), 'node_filter echoed');
    assert.ok(last.created_by, 'created_by names the caller');
    assert.equal(last.subtask_id_list.length, 24);

    // get_successes_for_task: the task's successes less its failures; each subtask read for its report.
    const successes = new Set(last.result.successes.filter((n) => !last.result.failures.includes(n)));
    for (const id of last.subtask_id_list) {
      const sub = await drydock.getTask(id);
      assert.equal(sub.answer.status, 200, sub.answer.text);
      const subtask = TaskView.parse(sub.answer.json);
      assert.equal(subtask.parent_task_id, taskId);
      assert.equal(subtask.status, 'complete');
      for (const m of subtask.result.details.messageList) assert.ok(m.context_type === 'node' && typeof m.ts === 'string' && typeof m.message === 'string');
    }
    // report_summary: the nodes not relabelled.
    assert.deepEqual(all.filter((n) => !successes.has(n)).sort(), [...missing].sort());

    // subtaskerrors=true: the failed subtasks' results by id.
    const withErrors = (await drydock.getTask(taskId, { subtaskerrors: true })).answer.json as TaskView;
    const errors = Object.values(TaskView.parse(withErrors).subtask_errors ?? {});
    assert.deepEqual(errors.map((e) => e.failures[0]).sort(), [...missing].sort());
    assert.ok(
      errors.every((e) => e.details.errorCount === 1 && /NodeNotFound/.test(e.details.messageList[0]?.message ?? '') && e.task_id.startsWith(`${taskId}.`)),
    );

    // fetch_failure_details: every task from GET tasks by id, the parent's subtasks looked up there, errors printed.
    const listed = await drydock.getTasks();
    assert.equal(listed.answer.status, 200, listed.answer.text);
    const byId = new Map(TaskList.parse(listed.answer.json).map((t) => [t.task_id, t]));
    const parent = byId.get(taskId);
    assert.ok(parent, 'the task is listed');
    const failedContexts: string[] = [];
    for (const id of parent.subtask_id_list) {
      const task = byId.get(id);
      assert.ok(task, `subtask ${id} is listed ("Unable to retrieve subtask info!" otherwise)`);
      assert.deepEqual(task.subtask_id_list, []);
      if (task.result.details.errorCount > 0) failedContexts.push(...task.result.details.messageList.filter((m) => m.error).map((m) => m.context));
    }
    assert.deepEqual(failedContexts.sort(), [...missing].sort());

    // layers: Drydock's map of tasks by id.
    const one = (await drydock.getTask(taskId, { layers: 1 })).answer.json as Record<string, unknown>;
    assert.deepEqual(Object.keys(one), ['init_task_id', taskId]);
    const layered = await drydock.getTask(taskId, { layers: 2, subtaskerrors: true });
    assert.equal(layered.path, `/api/v1.0/tasks/${taskId}?subtaskerrors=true&layers=2`, "the client's own query");
    const two = layered.answer.json as Record<string, unknown>;
    assert.equal(two.init_task_id, taskId);
    assert.equal(Object.keys(two).length, 1 + 1 + 24 + 1, 'init_task_id, the task, its 24 subtasks, subtask_errors');
    assert.deepEqual(TaskView.parse(two[`${taskId}.3`]).result.failures, [all[3]]);
    // builddata is accepted; relabel keeps none.
    assert.deepEqual(TaskView.parse((await drydock.getTask(taskId, { builddata: true })).answer.json).build_data, []);
    // Subtask ids are stable: read again, the same ids name the same nodes.
    assert.deepEqual(TaskView.parse((await drydock.getTask(taskId)).answer.json).subtask_id_list, last.subtask_id_list);
    assert.equal((await drydock.getTask(`${taskId}.24`)).answer.status, 404, 'no 25th node');
  });

  it("runs Drydock's CLI task create without node names: node_filter null selects every node of the design", async () => {
    const drydock = drydockClient(api, ADMIN);
    const created = await drydock.createTask(`revision:${revision}`, 'relabel_nodes');
    assert.equal(created.answer.status, 201, created.answer.text);
    const started = TaskView.parse(created.answer.json);
    assert.equal(started.status, 'queued');
    assert.equal(started.node_filter, null);
    assert.equal(started.subtask_id_list.length, 24);
    // --block: sleep the poll interval, read, until complete or terminated.
    let task = started;
    while (task.status !== 'complete' && task.status !== 'terminated') {
      await sleep(INTERVAL_S * 1000);
      task = TaskView.parse((await drydock.getTask(started.task_id)).answer.json);
    }
    assert.equal(task.result.status, 'partial_success');
    assert.deepEqual([...task.result.failures].sort(), [...missing].sort());
    assert.equal(task.result.successes.length, 22);

    // The CLI's names filter: an intersection set of one union filter, with an empty rack_names list.
    const named = await drydock.createTask(`revision:${revision}`, 'relabel_nodes', {
      filter_set_type: 'intersection',
      filter_set: [{ filter_type: 'union', node_names: [present[0], present[1]], rack_names: [] }],
    });
    assert.equal(named.answer.status, 201, named.answer.text);
    let two = TaskView.parse(named.answer.json);
    assert.equal(two.subtask_id_list.length, 2);
    while (two.status !== 'complete' && two.status !== 'terminated') {
      await sleep(INTERVAL_S * 1000);
      two = TaskView.parse((await drydock.getTask(two.task_id)).answer.json);
    }
    assert.deepEqual([two.result.status, two.result.successes], ['success', [present[0], present[1]]]);
  });

  it('guards a task over every node with the mass-removal brake: refused whole, the task complete with result failure', async () => {
    // A revision that takes most of the owned labels away: the host profiles' labels and tags, and the rack labels.
    const stripped = prefixedSite(prefix, (doc) => {
      if (doc.schema === 'drydock/HostProfile/v1' && doc.data.metadata) doc.data.metadata = { ...doc.data.metadata, owner_data: {}, tags: [] };
      if (doc.schema === 'relabel/LabelPolicy/v1') doc.data.generated_labels.rack_labels = false;
    });
    assert.deepEqual(stripped.nodes, all);
    assert.equal((await api.call('POST', '/api/v1.0/configdocs/site', { body: stripped.files.map((f) => f.text).join('') })).status, 201);
    const commit = await api.call('POST', '/api/v1.0/commitconfigdocs');
    assert.equal(commit.status, 200, commit.text);
    const next = CommitStatus.parse(commit.json).revision.id;
    const drydock = drydockClient(api, ADMIN);
    const created = await drydock.createTask(deckhandDesignRef(next), 'relabel_nodes');
    assert.equal(created.answer.status, 201, created.answer.text);
    let task = TaskView.parse(created.answer.json);
    while (task.status !== 'complete' && task.status !== 'terminated') {
      await sleep(INTERVAL_S * 1000);
      task = TaskView.parse((await drydock.getTask(task.task_id)).answer.json);
    }
    assert.equal(task.status, 'complete');
    assert.equal(task.result.status, 'failure', 'the operator raises DrydockTaskFailedException: not success or partial_success');
    assert.equal(task.result.reason, 'MassRemovalRefused');
    assert.deepEqual(task.result.successes, [], 'nothing written');
    assert.ok(task.result.details.messageList.some((m) => m.error && m.context_type === 'task' && /MassRemovalRefused/.test(m.message)));
  });

  it("keeps a task's node_filter up to 32 KiB: a larger one is not kept in the run's memo, and the task says so", async () => {
    const ghosts = Array.from({ length: 1500 }, (_, i) => `${prefix}-ghost-node-${String(i).padStart(5, '0')}`);
    const filter = nodeNameFilter([...all, ...ghosts]);
    assert.ok(JSON.stringify(filter).length > 32 * 1024);
    const drydock = drydockClient(api, ADMIN);
    const created = await drydock.createTask(`revision:${revision}`, 'relabel_nodes', filter);
    assert.equal(created.answer.status, 201, created.answer.text);
    const started = TaskView.parse(created.answer.json);
    assert.deepEqual(started.node_filter, filter, 'the answer to the create echoes it whole');
    let task = started;
    while (task.status !== 'complete' && task.status !== 'terminated') {
      await sleep(INTERVAL_S * 1000);
      task = TaskView.parse((await drydock.getTask(task.task_id)).answer.json);
    }
    assert.equal(task.node_filter, null);
    assert.equal(task.design_ref, `revision:${revision}`);
    assert.ok(task.result.details.messageList.some((m) => m.context_type === 'task' && /too large to keep/.test(m.message)));
    assert.equal(task.subtasks_page?.total, 1524);
    assert.equal(task.subtask_id_list.length, 1000, 'one page of subtasks by default');
  });

  it('pages subtasks and bounds the task list', async () => {
    const viewer = drydockClient(api, VIEWER);
    const listed = TaskList.parse((await viewer.getTasks()).answer.json);
    const parents = listed.filter((t) => t.parent_task_id === null);
    assert.equal(parents.length, 5, 'every task so far');
    const full = parents.find((p) => p.subtasks_page?.total === 24 && p.result.status === 'partial_success');
    assert.ok(full);
    const paged = TaskView.parse((await api.call('GET', `/api/v1.0/tasks/${full.task_id}?offset=20&limit=3`, { token: VIEWER })).json);
    assert.deepEqual(
      paged.subtask_id_list,
      [20, 21, 22].map((i) => `${full.task_id}.${i}`),
    );
    assert.deepEqual(paged.subtasks_page, { run: paged.subtasks_page?.run ?? null, total: 24, offset: 20, limit: 3 });
    const bounded = TaskList.parse((await api.call('GET', '/api/v1.0/tasks?limit=2&max_subtasks=5', { token: VIEWER })).json);
    assert.equal(bounded.filter((t) => t.parent_task_id === null).length, 2);
    assert.equal(bounded.filter((t) => t.parent_task_id !== null).length, 5);
    for (const t of bounded.filter((p) => p.parent_task_id === null)) {
      for (const id of t.subtask_id_list)
        assert.ok(
          bounded.some((s) => s.task_id === id),
          `${id} of a listed task is listed`,
        );
    }
    assert.equal((await api.call('GET', '/api/v1.0/tasks?limit=101', { token: VIEWER })).status, 400);
    assert.equal((await api.call('GET', `/api/v1.0/tasks/${full.task_id}?layers=x`, { token: VIEWER })).status, 400);
  });
});
