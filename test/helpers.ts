/**
 * Shared helpers for integration tests: clients for the stack that the global
 * setup started (never any other cluster), and unique names per test.
 */
import { randomBytes } from 'node:crypto';
import assert from 'node:assert/strict';
import { execFile, fork, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, RbacAuthorizationV1Api, type V1Node, type V1PolicyRule } from '@kubernetes/client-node';
import { Connection, Client } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, bundleWorkflowCode, type WorkflowBundle } from '@temporalio/worker';
import { createRuns, type Runs } from '../src/facade/runs/runs.ts';
import { createDesignCache, type DesignCache } from '../src/store/designs/design-cache.ts';
import { openStore } from '../src/store/open-store.ts';
import type { Store } from '../src/store/store.ts';
import { workflowBundleOptions } from '../src/worker/bundle.ts';
import { WORKER_ENV, WORKER_NODE_FLAGS } from '../src/worker/config.ts';
import { createWorker } from '../src/worker/wiring.ts';
import { facadeRunStarter, facadeSiteRuns } from '../src/facade/runs/run-starter.ts';
import { loadKubeConfig } from '../src/kube/nodes.ts';
import { nodeRequestCount } from '../stack/kube-metrics.ts';
import { kubeletLabels } from '../stack/kwok.ts';

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: integration tests run under the global setup (npm test), which starts the local stack`);
  return value;
}

/** The stack's Temporal frontend address. */
export const temporalAddress = (): string => required('TEMPORAL_ADDRESS');
/** The relabel (least-privilege) kubeconfig path. */
export const kubeconfigPath = (): string => required('KUBECONFIG');
/** The cluster-admin kubeconfig path. */
export const adminKubeconfigPath = (): string => required('RELABEL_ADMIN_KUBECONFIG');

/** A short unique suffix for names created by one test. */
export function uniqueSuffix(): string {
  return randomBytes(4).toString('hex');
}

/** A CoreV1Api client with cluster-admin rights on the test stack. */
export function adminCore(): CoreV1Api {
  return loadKubeConfig(adminKubeconfigPath()).makeApiClient(CoreV1Api);
}

/** Creates a Node as the kubelet would register it, with kubelet-owned labels (and `taints`, if given). */
export async function createNode(
  core: CoreV1Api,
  name: string,
  labels: Record<string, string> = {},
  taints: { key: string; value?: string; effect: string }[] = [],
): Promise<V1Node> {
  return core.createNode({
    body: {
      ...(taints.length > 0 ? { spec: { taints } } : {}),
      metadata: {
        name,
        labels: { ...kubeletLabels(name), ...labels },
      },
    },
  });
}

let runtimeInstalled = false;

/** Keeps worker logs to warnings so test output stays readable. */
export function quietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  Runtime.install({ logger: new DefaultLogger('WARN') });
}

/** Connections to the stack's Temporal server for a client and a worker. */
export async function temporalConnections(): Promise<{ client: Client; native: NativeConnection; close(): Promise<void> }> {
  quietRuntime();
  const connection = await Connection.connect({ address: temporalAddress() });
  const native = await NativeConnection.connect({ address: temporalAddress() });
  return {
    client: new Client({ connection }),
    native,
    async close() {
      await connection.close();
      await native.close();
    },
  };
}

/**
 * Number of PATCH requests on Nodes the API server has answered so far,
 * read from its own /metrics (apiserver_request_total): writes are counted
 * by the server, not assumed by the client. With `code`, only the requests
 * answered with that HTTP status (200: the writes that landed).
 */
export function nodePatchCount(options: { code?: number } = {}): Promise<number> {
  return nodeRequestCount(adminKubeconfigPath(), 'PATCH', options);
}

let bundle: Promise<WorkflowBundle> | undefined;

/** relabel's workflow bundle, built once per test process. */
export function workflowBundle(): Promise<WorkflowBundle> {
  bundle ??= bundleWorkflowCode(workflowBundleOptions());
  return bundle;
}

/**
 * A running relabel worker (in this process, unless `worker: false`) on a
 * task queue of its own over the store at `storeUrl`, with the facade
 * clients use. `stop()` shuts it down.
 */
export async function startRelabel(
  storeUrl: string,
  options: { worker?: boolean; kubeQps?: number } = {},
): Promise<{
  runs: Runs;
  client: Client;
  store: Store;
  designs: DesignCache;
  taskQueue: string;
  stop(): Promise<void>;
}> {
  quietRuntime();
  const taskQueue = `relabel-test-${uniqueSuffix()}`;
  const local =
    options.worker === false
      ? undefined
      : await createWorker(
          {
            temporalAddress: temporalAddress(),
            namespace: 'default',
            taskQueue,
            kubeconfig: kubeconfigPath(),
            storeUrl,
            workflowBundle: await workflowBundle(),
            ...(options.kubeQps !== undefined ? { kubeQps: options.kubeQps, kubeBurst: 1 } : {}),
          },
          { runStarter: facadeRunStarter({ taskQueue, namespace: 'default' }), siteRuns: facadeSiteRuns({ taskQueue, namespace: 'default' }) },
        );
  const running = local?.worker.run();
  const connection = await Connection.connect({ address: temporalAddress() });
  const client = new Client({ connection });
  const store = await openStore(storeUrl);
  const designs = createDesignCache(store);
  const runs = createRuns({ client, store, designs, taskQueue, namespace: 'default', uiUrl: process.env.TEMPORAL_UI_URL });
  return {
    runs,
    client,
    store,
    designs,
    taskQueue,
    async stop() {
      local?.worker.shutdown();
      await running;
      await local?.close();
      await connection.close();
      await store.close();
    },
  };
}

/** Sends SIGTERM to `child` unless it has exited, and resolves once it has. */
export async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** The worker's entry point. */
export const WORKER_ENTRY = new URL('../src/worker.ts', import.meta.url).pathname;

/**
 * A worker process (`src/worker.ts`) with `env` added (logs at `warn` and
 * its metrics on any free port unless `env` says otherwise); resolves once
 * it has created its worker. `stdout: 'pipe'` keeps its log lines for the
 * test instead of showing them.
 */
export function startWorkerProcess(env: Record<string, string>, args: string[] = [], options: { stdout?: 'pipe' } = {}): Promise<ChildProcess> {
  const child = fork(WORKER_ENTRY, args, {
    execArgv: [...process.execArgv, ...WORKER_NODE_FLAGS],
    env: { ...process.env, ...WORKER_ENV, RELABEL_LOG_LEVEL: 'warn', RELABEL_METRICS_PORT: '0', ...env },
    stdio: ['ignore', options.stdout ?? 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    child.on('message', (m: { ready?: boolean }) => {
      if (m.ready) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`worker exited early with ${code}`)));
  });
}

/**
 * A kubeconfig (written under `dir`) for a new service account `name` of
 * namespace `default`, bound to a new ClusterRole `name` of `rules`, with a
 * token from the API server; resolves once RBAC lets it read `node`.
 * `remove()` deletes the account, the role and the binding.
 */
export async function serviceAccountKubeconfig(
  name: string,
  rules: V1PolicyRule[],
  dir: string,
  node: string,
): Promise<{ path: string; remove(): Promise<void> }> {
  const admin = loadKubeConfig(adminKubeconfigPath());
  const core = admin.makeApiClient(CoreV1Api);
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  await core.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name } } });
  await rbac.createClusterRole({ body: { metadata: { name }, rules } });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
      subjects: [{ kind: 'ServiceAccount', name, namespace: 'default' }],
    },
  });
  const token = await core.createNamespacedServiceAccountToken({ name, namespace: 'default', body: { spec: { audiences: [], expirationSeconds: 3600 } } });
  const config = JSON.parse(readFileSync(kubeconfigPath(), 'utf8'));
  config.users[0].user.token = token.status?.token;
  const path = join(dir, `${name}.kubeconfig.json`);
  writeFileSync(path, JSON.stringify(config), { mode: 0o600 });
  // RBAC takes effect asynchronously.
  const own = loadKubeConfig(path).makeApiClient(CoreV1Api);
  for (
    let deadline = Date.now() + 30_000;
    !(await own.readNode({ name: node }).then(
      () => true,
      () => false,
    ));
  ) {
    if (Date.now() > deadline) throw new Error(`service account ${name} still cannot read node ${node} after 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    path,
    async remove() {
      await rbac.deleteClusterRoleBinding({ name }).catch(() => undefined);
      await rbac.deleteClusterRole({ name }).catch(() => undefined);
      await core.deleteNamespacedServiceAccount({ name, namespace: 'default' }).catch(() => undefined);
    },
  };
}

/** The repository root, where the CLI runs from. */
export const REPO_ROOT = new URL('../', import.meta.url).pathname;
/** The CLI's entry point. */
export const CLIENT = new URL('../src/client.ts', import.meta.url).pathname;

/** A finished child process: its exit code, output and duration. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * Runs this Node on `args` from the repository root with `env` over the
 * test's environment. Asynchronous on purpose: an in-process worker must keep
 * running while a CLI waits for its run.
 */
export function runNode(args: readonly string[], env: Record<string, string> = {}, options: { timeoutMs?: number } = {}): Promise<CliRun> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [...args],
      { cwd: REPO_ROOT, env: { ...process.env, ...env }, maxBuffer: 16 * 1024 * 1024, timeout: options.timeoutMs ?? 60_000 },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') reject(err);
        else resolve({ code: typeof err?.code === 'number' ? err.code : 0, stdout, stderr, ms: Date.now() - started });
      },
    );
  });
}

/** Runs `relabel …args` (src/client.ts) as a child process. */
export function relabelCli(args: readonly string[], env: Record<string, string> = {}, options: { timeoutMs?: number } = {}): Promise<CliRun> {
  return runNode([CLIENT, ...args], env, options);
}

/** Asserts the exit code, showing the output when it differs. */
export function exits(run: CliRun, code: number): CliRun {
  assert.equal(run.code, code, `exit ${run.code}, expected ${code}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`);
  return run;
}

export { metricValue } from '../stack/prometheus.ts';
