/**
 * Errors in plain words, through the public entry points against the real
 * stack: a bad kubeconfig refused at start by the worker and `relabel api`;
 * Kubernetes rejecting relabel's credentials (a real 401) or denying the
 * patch (a real 403 from RBAC) as failure types and messages naming what was
 * refused; an unreachable Temporal for the worker, the CLI and the API; and
 * `relabel status` warning when no worker polls the run's task queue.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { createApiServer } from '../../src/api/http/server.ts';
import { openRelabel, relabelConfigFromEnv } from '../../src/facade/index.ts';
import { createNodeApi, loadKubeConfig } from '../../src/kube/nodes.ts';
import { WORKER_NODE_FLAGS } from '../../src/worker/config.ts';
import { createWorker } from '../../src/worker/wiring.ts';
import { ADMIN, TOKENS, closedPort, eventually } from '../api-support.ts';
import {
  adminCore,
  CLIENT,
  createNode,
  exits,
  type CliRun,
  kubeconfigPath,
  quietRuntime,
  REPO_ROOT,
  runNode,
  serviceAccountKubeconfig,
  temporalAddress,
  uniqueSuffix,
  workflowBundle,
} from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

const WORKER = new URL('../../src/worker.ts', import.meta.url).pathname;

/** Runs `node …args` with `env` (and warnings-only logs) over the test's environment. */
const run = (args: readonly string[], env: Record<string, string>) => runNode(args, { RELABEL_LOG_LEVEL: 'warn', ...env }, { timeoutMs: 90_000 });

/** `relabel …args`, as a child process. */
const relabel = (args: readonly string[], env: Record<string, string> = {}) => run([CLIENT, ...args], env);

/** The worker process (`src/worker.ts …args`), expected to stop by itself. */
const workerProcess = (args: readonly string[], env: Record<string, string> = {}) => run([...WORKER_NODE_FLAGS, WORKER, ...args], env);

/** Asserts output carries no JavaScript stack trace. */
function noStack(text: string): void {
  assert.doesNotMatch(text, /^\s+at .+:\d+:\d+\)?$/m, text);
}

const dir = mkdtempSync(join(tmpdir(), 'relabel-errors-'));

/** Writes `text` to a file of the test's directory and returns its path. */
function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

/** The stack's relabel kubeconfig (JSON, as the stack writes it), with `edit` applied. */
function editedKubeconfig(name: string, edit: (config: any) => void): string {
  const config = JSON.parse(readFileSync(kubeconfigPath(), 'utf8'));
  edit(config);
  return file(name, JSON.stringify(config));
}

/** Labels of `names` as the cluster has them (read as admin). */
async function labelsOf(names: readonly string[]): Promise<Record<string, string>[]> {
  const core = adminCore();
  return Promise.all(names.map(async (name) => (await core.readNode({ name })).metadata?.labels ?? {}));
}

describe('a bad worker flag', () => {
  it('is refused, naming the flag and the rule, before the worker connects to anything', async () => {
    const r = exits(
      await workerProcess(['--max-workflow-tasks', '1'], { TEMPORAL_ADDRESS: temporalAddress(), RELABEL_STORE_URL: `sqlite:${join(dir, 'w4.db')}` }),
      1,
    );
    assert.equal(r.stderr, "error: option '--max-workflow-tasks <n>' argument '1' is invalid. must be a whole number ≥ 2\n");
  });
});

describe('a bad kubeconfig', { concurrency: true }, () => {
  const badYaml = () => file('bad-indent.yaml', 'apiVersion: v1\nkind: Config\ncurrent-context: x\n  clusters: []\n');

  it('stops the worker at start, naming the file, the line and column and the YAML error, without a stack trace', async () => {
    const path = badYaml();
    const r = exits(await workerProcess([], { KUBECONFIG: path, TEMPORAL_ADDRESS: temporalAddress(), RELABEL_STORE_URL: `sqlite:${join(dir, 'w1.db')}` }), 1);
    assert.equal(r.stderr, `relabel-worker: kubeconfig ${path}: invalid YAML at line 4, column 11: bad indentation of a mapping entry\n`);
    noStack(r.stderr);
  });

  it('names the defect of a kubeconfig that parses but cannot be used, and a missing file', async () => {
    const noCluster = editedKubeconfig('no-cluster.json', (c) => (c.clusters = []));
    const noCurrent = editedKubeconfig('no-current.json', (c) => delete c['current-context']);
    const missing = join(dir, 'no-such-kubeconfig');
    const env = { TEMPORAL_ADDRESS: temporalAddress(), RELABEL_STORE_URL: `sqlite:${join(dir, 'w2.db')}` };
    const [cluster, current, gone] = await Promise.all([
      workerProcess(['--kubeconfig', noCluster], env),
      workerProcess([], { ...env, KUBECONFIG: noCurrent }),
      workerProcess(['--kubeconfig', missing], env),
    ]);
    assert.equal(
      exits(cluster, 1).stderr,
      `relabel-worker: kubeconfig ${noCluster}: context "relabel-worker@relabel-local" names cluster "relabel-local", which is not defined (the file defines no clusters)\n`,
    );
    assert.equal(exits(current, 1).stderr, `relabel-worker: kubeconfig ${noCurrent}: no current-context is set (contexts: "relabel-worker@relabel-local")\n`);
    assert.equal(exits(gone, 1).stderr, `relabel-worker: kubeconfig ${missing}: no such file\n`);
    for (const r of [cluster, current, gone]) noStack(r.stderr);
  });

  it('stops `relabel api` at start the same way', async () => {
    const path = badYaml();
    const r = exits(
      await relabel(['api', '--listen', '127.0.0.1:0', '--kubeconfig', path], {
        RELABEL_API_TOKENS: `${ADMIN}:admin`,
        RELABEL_STORE_URL: `sqlite:${join(dir, 'a.db')}`,
      }),
      1,
    );
    assert.equal(r.stderr, `relabel api: kubeconfig ${path}: invalid YAML at line 4, column 11: bad indentation of a mapping entry\n`);
  });
});

describe('Kubernetes refusing relabel', () => {
  const prefix = `err-${uniqueSuffix()}`;
  const site = prefixedSite(prefix);
  const targets = site.nodes.slice(0, 2);
  let storeUrl: string;
  const readerName = `relabel-reader-${uniqueSuffix()}`;
  let reader: Awaited<ReturnType<typeof serviceAccountKubeconfig>> | undefined;

  before(async () => {
    quietRuntime();
    const { url, store } = await storeWithSite(site.files);
    await store.close();
    storeUrl = url;
    const core = adminCore();
    for (const name of targets) await createNode(core, name);
    // A service account that may read nodes but not patch them, with a token from the API server.
    reader = await serviceAccountKubeconfig(readerName, [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list'] }], dir, targets[0] as string);
  });

  after(async () => reader?.remove());

  /** Runs update-labels --wait on `targets` with a worker using `kubeconfig` on a task queue of its own. */
  async function runWith(kubeconfig: string): Promise<CliRun> {
    const taskQueue = `relabel-errors-${uniqueSuffix()}`;
    const { worker, close } = await createWorker({
      temporalAddress: temporalAddress(),
      namespace: 'default',
      taskQueue,
      kubeconfig,
      storeUrl,
      workflowBundle: await workflowBundle(),
    });
    const running = worker.run();
    try {
      return await relabel(['update-labels', '--nodes', targets.join(','), '--wait'], { RELABEL_STORE_URL: storeUrl, RELABEL_TASK_QUEUE: taskQueue });
    } finally {
      worker.shutdown();
      await running;
      await close();
    }
  }

  it('a 401 says the credentials were rejected, with type Unauthorized, and changes nothing', async () => {
    const wrongToken = editedKubeconfig('wrong-token.json', (c) => (c.users[0].user.token = 'not-a-valid-token'));
    const before = await labelsOf(targets);
    const r = exits(await runWith(wrongToken), 5);
    assert.match(
      r.stdout,
      new RegExp(
        `^run failed: Unauthorized: the Kubernetes API server rejected relabel's credentials \\(401\\) reading node (${targets.join('|')}): ` +
          `check the token or client certificate of the kubeconfig$`,
        'm',
      ),
    );
    assert.doesNotMatch(r.stdout, /Forbidden/);
    assert.deepEqual(await labelsOf(targets), before);
  });

  it('a 403 says which verb on which node was denied and for whom, with type Forbidden, and changes nothing', async () => {
    const before = await labelsOf(targets);
    const r = exits(await runWith((reader as { path: string }).path), 5);
    for (const node of targets) {
      const row = r.stdout.split('\n').find((line) => line.startsWith(`${node} `));
      assert.ok(row, `no row for ${node}:\n${r.stdout}`);
      assert.match(
        row,
        new RegExp(
          `\\sfailure\\s.*Forbidden: patch on nodes "${node}" denied for user "system:serviceaccount:default:${readerName}" \\(403\\); relabel needs get, list and patch on nodes$`,
        ),
      );
    }
    assert.match(r.stdout, /^status: failure: 0 of 2 node\(s\) succeeded, 2 failed, 0 written$/m);
    assert.deepEqual(await labelsOf(targets), before);
  });
});

describe('an unreachable Temporal', { concurrency: true }, () => {
  it('stops the worker promptly, saying where and why', async () => {
    const port = await closedPort();
    const r = exits(
      await workerProcess([], { TEMPORAL_ADDRESS: `127.0.0.1:${port}`, KUBECONFIG: kubeconfigPath(), RELABEL_STORE_URL: `sqlite:${join(dir, 'w3.db')}` }),
      1,
    );
    assert.equal(r.stderr, `relabel-worker: cannot reach Temporal at 127.0.0.1:${port} (namespace default): connection refused\n`);
    assert.ok(r.ms < 15_000, `took ${r.ms} ms`);
  });

  it('fails CLI commands at once with the same words, exit 6, in text and JSON', async () => {
    const port = await closedPort();
    const env = { TEMPORAL_ADDRESS: `127.0.0.1:${port}`, RELABEL_STORE_URL: `sqlite:${join(dir, 'c.db')}` };
    const text = exits(await relabel(['status', 'update-labels/x'], env), 6);
    const message = `cannot reach Temporal at 127.0.0.1:${port} (namespace default): connection refused`;
    assert.equal(text.stderr, `relabel: Unavailable: ${message}\n`);
    // The client alone would wait out its 5 s connect timeout.
    assert.ok(text.ms < 5000, `took ${text.ms} ms`);
    const json = exits(await relabel(['runs', '-o', 'json', '--namespace', 'other'], env), 6);
    assert.deepEqual(JSON.parse(json.stdout), { error: { type: 'Unavailable', message: message.replace('namespace default', 'namespace other') } });
    const host = exits(await relabel(['status', 'update-labels/x', '--address', 'no-such-host.invalid:7233'], env), 6);
    assert.equal(
      host.stderr,
      'relabel: Unavailable: cannot reach Temporal at no-such-host.invalid:7233 (namespace default): host no-such-host.invalid not found\n',
    );
  });

  it('makes the API answer 503 Unavailable with the same words', async () => {
    const port = await closedPort();
    const relabelFacade = await openRelabel({ ...relabelConfigFromEnv(), temporalAddress: `127.0.0.1:${port}`, storeUrl: `sqlite:${join(dir, 'api.db')}` });
    const app = createApiServer({ relabel: relabelFacade, nodes: createNodeApi(loadKubeConfig(kubeconfigPath())), tokens: TOKENS });
    try {
      const res = await app.inject({ method: 'GET', url: '/api/v1.0/actions', headers: { 'x-auth-token': ADMIN } });
      assert.equal(res.statusCode, 503, res.body);
      const body = res.json();
      assert.equal(body.reason, 'Unavailable');
      assert.equal(body.message, `cannot reach Temporal at 127.0.0.1:${port} (namespace default): connection refused`);
    } finally {
      await app.close();
      await relabelFacade.close();
    }
  });
});

describe('relabel status with no worker polling', () => {
  it('warns while no worker polls the task queue, and not once one does', async () => {
    quietRuntime();
    const prefix = `idle-${uniqueSuffix()}`;
    const site = prefixedSite(prefix);
    const { url, store } = await storeWithSite(site.files);
    await store.close();
    const taskQueue = `relabel-idle-${uniqueSuffix()}`;
    const env = { RELABEL_STORE_URL: url, RELABEL_TASK_QUEUE: taskQueue };
    // Ten nodes the cluster lacks: each read takes a token of a 1-per-second limiter, so the run lasts ~10 s once a worker comes.
    const targets = site.nodes.slice(0, 10);
    const started = JSON.parse(exits(await relabel(['update-labels', '--nodes', targets.join(','), '-o', 'json'], env), 0).stdout);
    const warning = `no worker is polling task queue ${taskQueue}; the run waits until one starts`;

    const idle = exits(await relabel(['status', started.workflowId], env), 0);
    assert.match(idle.stdout, /^execution\s+RUNNING$/m);
    assert.ok(idle.stdout.split('\n').includes(`warning: ${warning}`), idle.stdout);
    const idleJson = JSON.parse(exits(await relabel(['status', started.workflowId, '-o', 'json'], env), 0).stdout);
    assert.equal(idleJson.execution, 'RUNNING');
    assert.deepEqual(idleJson.warnings, [warning]);

    // Waiting on it says so too, on stderr, and says again when a worker comes.
    const waiting = spawn(process.execPath, [CLIENT, 'status', started.workflowId, '--wait'], {
      cwd: REPO_ROOT,
      env: { ...process.env, RELABEL_LOG_LEVEL: 'warn', ...env },
    });
    let waitErr = '';
    let waitOut = '';
    waiting.stdout.setEncoding('utf8').on('data', (c: string) => (waitOut += c));
    const warned = new Promise<void>((resolve) =>
      waiting.stderr.setEncoding('utf8').on('data', (c: string) => {
        waitErr += c;
        if (waitErr.includes(`warning: ${warning}`)) resolve();
      }),
    );
    const waited = new Promise<number | null>((resolve) => waiting.on('exit', (code) => resolve(code)));
    await warned;

    const { worker, close } = await createWorker({
      temporalAddress: temporalAddress(),
      namespace: 'default',
      taskQueue,
      kubeconfig: kubeconfigPath(),
      storeUrl: url,
      workflowBundle: await workflowBundle(),
      kubeQps: 1,
      kubeBurst: 1,
    });
    const running = worker.run();
    const connection = await Connection.connect({ address: temporalAddress() });
    try {
      // The server lists the worker as a poller of the queue.
      const client = new Client({ connection });
      await eventually(
        () => client.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: taskQueue } }),
        (d) => (d.pollers ?? []).length > 0,
      );
      const busy = exits(await relabel(['status', started.workflowId], env), 0);
      assert.match(busy.stdout, /^execution\s+RUNNING$/m, 'the run still runs');
      assert.doesNotMatch(busy.stdout, /warning/);
      assert.match(busy.stdout, /^progress: /m, 'the worker answers the progress query');
      const busyJson = JSON.parse(exits(await relabel(['status', started.workflowId, '-o', 'json'], env), 0).stdout);
      assert.equal(busyJson.warnings, undefined);
      assert.equal(await waited, 5, `--wait exits by the run's outcome\n${waitOut}\n${waitErr}`);
      const lines = waitErr.split('\n');
      const warnedAt = lines.indexOf(`warning: ${warning}`);
      assert.ok(warnedAt >= 0 && lines.indexOf('a worker polls the task queue again; the run goes on') > warnedAt, waitErr);
      assert.match(waitOut, /^status: failure: 0 of 10 node\(s\) succeeded, 10 failed, 0 written$/m);
      // The run ends (the nodes do not exist) and shows no warning either.
      const ended = exits(await relabel(['status', started.workflowId, '--wait'], env), 5);
      assert.doesNotMatch(ended.stdout, /warning/);
      assert.match(ended.stdout, /^status: failure: 0 of 10 node\(s\) succeeded, 10 failed, 0 written$/m);
    } finally {
      await connection.close();
      worker.shutdown();
      await running;
      await close();
    }
  });
});
