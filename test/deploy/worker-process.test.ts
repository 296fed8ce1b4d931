/**
 * The worker process (`src/worker.ts`, as deployed) against the real stack:
 * its one port answers liveness at once, readiness only once the worker
 * polls Temporal (with the workflow task slots its flag asked for), and
 * `/metrics` with the Temporal SDK's metrics and
 * relabel's counters, exact after a run over 20 nodes of which 2 fail (one
 * absent from the cluster, one whose patch RBAC denies). Its log lines are
 * JSON, from workflows and activities alike, carrying the run and the node.
 * Its listener: two workers started side by side as docs/deploy.md starts them
 * both come up, each on loopback only (not on the host's other addresses)
 * and on a port of its own; `--metrics-port 0` logs the port it got; a port
 * asked for that is taken stops the worker with an error naming the flag.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort } from '../../stack/processes.ts';
import { WORKER_NODE_FLAGS } from '../../src/worker/config.ts';
import { DEFAULT_METRICS_PORT } from '../../src/worker/probes.ts';
import { eventually } from '../api-support.ts';
import {
  adminCore,
  createNode,
  exits,
  kubeconfigPath,
  metricValue,
  runNode,
  serviceAccountKubeconfig,
  startRelabel,
  startWorkerProcess,
  stopChild,
  temporalAddress,
  uniqueSuffix,
  WORKER_ENTRY,
} from '../helpers.ts';
import { scaledSite, storeWithSite } from '../site.ts';

describe('the worker process: readiness, metrics and logs', () => {
  const prefix = `wm${uniqueSuffix()}`;
  const site = scaledSite(prefix, 20);
  const absent = site.nodes[19] as string;
  const denied = site.nodes[18] as string;
  const patchable = site.nodes.slice(0, 18);
  const dir = mkdtempSync(join(tmpdir(), 'relabel-worker-metrics-'));
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let account: Awaited<ReturnType<typeof serviceAccountKubeconfig>>;
  let worker: ChildProcess | undefined;
  let url: string;
  const lines: string[] = [];
  let run: number | undefined;

  before(async () => {
    const { url: storeUrl, store } = await storeWithSite(site.files);
    await store.close();
    const core = adminCore();
    for (const name of site.nodes.slice(0, 19)) await createNode(core, name);
    // The worker may patch 18 of the 19 nodes present: the 19th answers 403.
    account = await serviceAccountKubeconfig(
      `relabel-metrics-${uniqueSuffix()}`,
      [
        { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
        { apiGroups: [''], resources: ['nodes'], verbs: ['patch'], resourceNames: patchable },
        { apiGroups: ['', 'events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
      ],
      dir,
      site.nodes[0] as string,
    );
    relabel = await startRelabel(storeUrl, { worker: false });
    const port = await freeLoopbackPort();
    url = `http://127.0.0.1:${port}`;
    const env = {
      TEMPORAL_ADDRESS: temporalAddress(),
      KUBECONFIG: account.path,
      RELABEL_STORE_URL: storeUrl,
      RELABEL_TASK_QUEUE: relabel.taskQueue,
      RELABEL_METRICS_PORT: String(port),
      RELABEL_LOG_LEVEL: 'info',
    };
    const started = startWorkerProcess(env, ['--max-workflow-tasks', '64'], { stdout: 'pipe' });
    // Readiness from the first moment the port answers: the worker connects and bundles its workflows first.
    const first = await eventually(
      () => fetch(`${url}/health/ready`).then(async (r) => ({ code: r.status, body: (await r.json()) as { ready: boolean; message: string } }), () => undefined),
      (answer) => answer !== undefined,
      60_000,
      20,
    );
    assert.deepEqual(first, { code: 503, body: { ready: false, message: 'worker starting: connecting to Temporal and loading the workflow code' } });
    assert.equal((await fetch(`${url}/health/live`)).status, 200, 'live while starting');
    worker = await started;
    let rest = '';
    worker.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop() ?? '';
      lines.push(...parts);
    });
  });

  after(async () => {
    await stopChild(worker);
    await relabel?.stop();
    await account?.remove();
  });

  it('is ready once it polls, with Temporal reachable', async () => {
    const ready = await eventually(
      () => fetch(`${url}/health/ready`).then(async (r) => ({ code: r.status, body: (await r.json()) as { ready: boolean; message: string } })),
      (a) => a.code === 200,
      30_000,
    );
    assert.deepEqual(ready.body, { ready: true, message: `worker polling; Temporal reachable at ${temporalAddress()} (namespace default)` });
    // The workflow task slots `--max-workflow-tasks` asked for, as the SDK counts them.
    const text = await (await fetch(`${url}/metrics`)).text();
    const [available, used] = ['available', 'used'].map((k) => metricValue(text, `temporal_worker_task_slots_${k}`, { worker_type: 'WorkflowWorker' }));
    assert.equal((available ?? 0) + (used ?? 0), 64);
  });

  it('counts exactly what a run over 20 nodes with 2 failures did, on /metrics beside the SDK metrics', async () => {
    const done = await relabel.runs.wait(await relabel.runs.start({ targets: site.nodes }));
    assert.equal(done.result?.status, 'partial_success');
    assert.deepEqual(done.result?.counts, { total: 20, success: 18, failure: 2, written: 18 });
    run = done.result?.run;

    const answer = await fetch(`${url}/metrics`);
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await answer.text();
    const s = { site: `${prefix}-site`, taskQueue: relabel.taskQueue };
    assert.equal(metricValue(text, 'relabel_nodes_written_total', s), 18);
    assert.equal(metricValue(text, 'relabel_nodes_unchanged_total', s), 0);
    assert.equal(metricValue(text, 'relabel_nodes_failed_total', s), 2);
    assert.equal(metricValue(text, 'relabel_nodes_failed_total', { ...s, failure_type: 'NodeNotFound' }), 1);
    assert.equal(metricValue(text, 'relabel_nodes_failed_total', { ...s, failure_type: 'Forbidden' }), 1);
    assert.equal(metricValue(text, 'relabel_runs_total', { ...s, status: 'partial_success', dry_run: 'false' }), 1);
    assert.equal(metricValue(text, 'relabel_runs_total', s), 1);
    // Every request the run sent, as the worker timed them: one GET per target, one PATCH per node present.
    const requests = (verb: string, code: string) => metricValue(text, 'relabel_kube_request_duration_seconds_count', { verb, code });
    assert.deepEqual(
      { get200: requests('get', '200'), get404: requests('get', '404'), patch200: requests('patch', '200'), patch403: requests('patch', '403') },
      { get200: 19, get404: 1, patch200: 18, patch403: 1 },
    );
    assert.equal(metricValue(text, 'relabel_kube_throttled_requests_total'), 0);
    assert.equal(metricValue(text, 'relabel_node_conflicts_total'), 0);
    // Events are sent without waiting for them: one LabelsApplied per written node, one RelabelFailed for the denied one.
    const events = await eventually(
      async () => (await fetch(`${url}/metrics`)).text(),
      (t) => metricValue(t, 'relabel_kube_events_total', { reason: 'LabelsApplied', result: 'created' }) >= 18 && metricValue(t, 'relabel_kube_events_total', { reason: 'RelabelFailed' }) >= 1,
      10_000,
    );
    assert.equal(metricValue(events, 'relabel_kube_events_total', { reason: 'LabelsApplied', result: 'created' }), 18);
    assert.equal(metricValue(events, 'relabel_kube_events_total', { reason: 'RelabelFailed', result: 'created' }), 1);
    assert.equal(metricValue(events, 'relabel_kube_events_total', { result: 'failed' }), 0);
    // The SDK's own runtime metrics come out of the same port.
    assert.ok(metricValue(text, 'temporal_workflow_completed', { workflow_type: 'relabelNode' }) >= 18, 'SDK metrics relayed');
  });

  it('logs JSON lines from workflows and activities with the run, the node and the revision', async () => {
    assert.ok(run !== undefined, 'the run of the test before');
    const entries = await eventually(
      async () => lines.flatMap((l) => (l.startsWith('{') ? [JSON.parse(l) as Record<string, unknown>] : [])),
      (all) => all.some((e) => e.msg === 'run finished'),
      10_000,
    );
    const fromWorkflow = entries.find((e) => e.sdkComponent === 'workflow' && e.msg === 'node failed' && e.node === denied);
    assert.ok(fromWorkflow, `a workflow line for ${denied}:\n${lines.join('\n').slice(0, 4000)}`);
    assert.equal(fromWorkflow.run, run);
    assert.equal(fromWorkflow.revision, 1);
    assert.equal(fromWorkflow.failureType, 'Forbidden');
    assert.equal(fromWorkflow.level, 40, 'warn');
    const fromActivity = entries.find((e) => e.sdkComponent === 'activity' && e.msg === 'node relabelled' && e.node === patchable[0]);
    assert.ok(fromActivity, 'an activity line for a written node');
    assert.equal(fromActivity.run, run);
    assert.equal(fromActivity.revision, 1);
    assert.equal(fromActivity.level, 30, 'info');
    assert.ok(entries.some((e) => e.sdkComponent === 'workflow' && e.msg === 'node failed' && e.node === absent && e.failureType === 'NodeNotFound'));
  });
});

describe('the worker process: where /metrics listens', () => {
  const dir = mkdtempSync(join(tmpdir(), 'relabel-worker-listen-'));
  const started: ChildProcess[] = [];
  /** The environment of `npm run worker` on a laptop: no metrics setting at all. */
  const env = (): Record<string, string> => {
    // Empty is unset: the test stack's RELABEL_METRICS_PORT=0 must not apply here.
    return { ...(process.env as Record<string, string>), RELABEL_METRICS_PORT: '', RELABEL_METRICS_ADDRESS: '', TEMPORAL_ADDRESS: temporalAddress(), KUBECONFIG: kubeconfigPath(), RELABEL_STORE_URL: `sqlite:${join(dir, 'revisions.db')}`, RELABEL_TASK_QUEUE: `listen-${uniqueSuffix()}`, RELABEL_LOG_LEVEL: 'info' };
  };

  /** `npm run worker -- …args`: node with the worker's V8 flags; resolves once it is up, with its probes URL and log lines. */
  function worker(args: string[] = []): Promise<{ url: string; lines: Record<string, unknown>[] }> {
    const child = fork(WORKER_ENTRY, args, { execArgv: [...WORKER_NODE_FLAGS], env: env(), stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
    started.push(child);
    const lines: Record<string, unknown>[] = [];
    let rest = '';
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (rest + chunk).split('\n');
      rest = parts.pop() ?? '';
      for (const line of parts) if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
    });
    return new Promise((resolve, reject) => {
      child.on('message', (m: { ready?: boolean; probes?: string }) => {
        if (m.ready) resolve({ url: m.probes ?? '', lines });
      });
      child.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)));
    });
  }

  after(async () => {
    for (const child of started) await stopChild(child);
  });

  it('two workers started side by side as docs/deploy.md says both come up, each on loopback only, on ports of their own', async () => {
    const [a, b] = await Promise.all([worker(), worker()]);
    const urls = [a.url, b.url];
    for (const url of urls) {
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal((await fetch(`${url}/health/live`)).status, 200, url);
      assert.equal((await fetch(`${url}/metrics`)).status, 200, url);
    }
    assert.notEqual(a.url, b.url);
    // A worker that did not get the default port says which one it serves on.
    for (const w of [a, b]) {
      const serving = w.lines.find((l) => l.msg === 'serving /metrics, /health/live and /health/ready');
      assert.equal(serving?.url, w.url);
      assert.equal(serving?.address, '127.0.0.1');
      if (!w.url.endsWith(`:${DEFAULT_METRICS_PORT}`)) {
        const moved = w.lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith(`port ${DEFAULT_METRICS_PORT} of 127.0.0.1 is in use`));
        assert.equal(moved?.url, w.url, JSON.stringify(w.lines));
      }
    }
    // Not on the host's other addresses: nothing answers there.
    const others = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).filter((i) => !i.internal && i.family === 'IPv4').map((i) => i.address));
    for (const address of others) {
      const port = new URL(a.url).port;
      await assert.rejects(fetch(`http://${address}:${port}/metrics`, { signal: AbortSignal.timeout(3000) }), `nothing answers on ${address}:${port}`);
    }
    if (others.length === 0) assert.equal(new URL(a.url).hostname, '127.0.0.1');
  });

  it('--metrics-port 0 picks a free port and logs it', async () => {
    const w = await worker(['--metrics-port', '0']);
    const port = Number(new URL(w.url).port);
    assert.ok(port > 0);
    assert.equal(w.lines.find((l) => l.msg === 'serving /metrics, /health/live and /health/ready')?.port, port);
    assert.equal((await fetch(`${w.url}/health/live`)).status, 200);
  });

  it('a port asked for that is taken stops the worker at once with an error naming the flag, no stack', async () => {
    const holder = await worker(['--metrics-port', '0']);
    const port = new URL(holder.url).port;
    const message = `relabel-worker: --metrics-port ${port} (RELABEL_METRICS_PORT): 127.0.0.1:${port} is already in use (another worker on this host?): give each worker a port of its own, or 0 for any free one\n`;
    const byFlag = exits(await runNode([...WORKER_NODE_FLAGS, WORKER_ENTRY, '--metrics-port', port], env(), { timeoutMs: 60_000 }), 1);
    assert.equal(byFlag.stderr, message);
    const byEnv = exits(await runNode([...WORKER_NODE_FLAGS, WORKER_ENTRY], { ...env(), RELABEL_METRICS_PORT: port }, { timeoutMs: 60_000 }), 1);
    assert.equal(byEnv.stderr, message);
    const badAddress = exits(await runNode([...WORKER_NODE_FLAGS, WORKER_ENTRY, '--metrics-address', 'everywhere'], env(), { timeoutMs: 60_000 }), 1);
    assert.match(badAddress.stderr, /option '--metrics-address <ip>' argument 'everywhere' is invalid\. must be an IP address of this host/);
  });
});

describe('the worker process: its temporary files', () => {
  it('a worker started and stopped leaves nothing in the temporary directory, its workflow bundle included', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'relabel-worker-tmp-'));
    const store = mkdtempSync(join(tmpdir(), 'relabel-worker-tmp-store-'));
    try {
      const env = { TMPDIR: tmp, TEMPORAL_ADDRESS: temporalAddress(), KUBECONFIG: kubeconfigPath(), RELABEL_STORE_URL: `sqlite:${join(store, 'revisions.db')}`, RELABEL_TASK_QUEUE: `tmp-${uniqueSuffix()}` };
      const worker = await startWorkerProcess(env);
      await stopChild(worker);
      assert.equal(worker.exitCode, 0);
      assert.deepEqual(readdirSync(tmp), [], 'nothing left in TMPDIR');
    } finally {
      rmSync(tmp, { recursive: true, force: true });
      rmSync(store, { recursive: true, force: true });
    }
  });
});
