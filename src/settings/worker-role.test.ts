/**
 * The worker's role and the fleet task queue as settings: the site is the
 * default, the centre takes the fleet queue (relabel-fleet unless told) and
 * drops the kubeconfig and store its environment names, refuses them on its
 * command line, and readiness does not wait for the activity poller it never
 * starts. Bad values are refused naming the flag, the variable and the rule.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import type { NativeConnection, Worker } from '@temporalio/worker';
import { configFrom } from '../cli/context.ts';
import { relabelConfigFromEnv } from '../facade/index.ts';
import { SettingError, settingFromEnv } from './setting.ts';
import { CONNECTION, WORKER } from './table.ts';
import { runNode } from '../../test/kit/node-process.ts';
import { parseWorkerSettings } from '../worker/config.ts';
import { workerReadiness } from '../worker/probes.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const argv = (...args: string[]) => ['node', 'relabel-worker', ...args];

describe('the worker role and the fleet task queue', () => {
  it('is a site worker on its own queue by default, keeping its kubeconfig and store', () => {
    const { config } = parseWorkerSettings(argv(), { KUBECONFIG: '/k/site.yaml', RELABEL_STORE_URL: 'sqlite:/s.db', RELABEL_TASK_QUEUE: 'relabel-edge' });
    assert.deepEqual(
      [config.role, config.taskQueue, config.fleetTaskQueue, config.kubeconfig, config.storeUrl],
      ['site', 'relabel-edge', 'relabel-fleet', '/k/site.yaml', 'sqlite:/s.db'],
    );
  });

  it('as the centre, polls the fleet queue and drops the kubeconfig and store its environment names', () => {
    const env = { KUBECONFIG: '/k/site.yaml', RELABEL_STORE_URL: 'sqlite:/s.db' };
    const flag = parseWorkerSettings(argv('--role', 'centre'), env).config;
    assert.deepEqual([flag.role, flag.fleetTaskQueue, flag.kubeconfig, flag.storeUrl], ['centre', 'relabel-fleet', undefined, undefined]);
    const fromEnv = parseWorkerSettings(argv(), { ...env, RELABEL_WORKER_ROLE: 'Centre', RELABEL_FLEET_TASK_QUEUE: 'fleet-east' }).config;
    assert.deepEqual([fromEnv.role, fromEnv.fleetTaskQueue, fromEnv.kubeconfig], ['centre', 'fleet-east', undefined]);
    assert.equal(parseWorkerSettings(argv('--role', 'centre', '--fleet-task-queue', 'fleet-west'), env).config.fleetTaskQueue, 'fleet-west');
  });

  it('gives the facade and the CLI the fleet queue: default, variable, then flag', () => {
    assert.equal(relabelConfigFromEnv({}).fleetTaskQueue, 'relabel-fleet');
    assert.equal(relabelConfigFromEnv({ RELABEL_FLEET_TASK_QUEUE: 'fleet-east' }).fleetTaskQueue, 'fleet-east');
    assert.equal(configFrom({ fleetTaskQueue: 'fleet-west' }, { RELABEL_FLEET_TASK_QUEUE: 'fleet-east' }).fleetTaskQueue, 'fleet-west');
  });

  it('refuses a role or a fleet queue name it does not know, naming the variable and the rule', () => {
    assert.throws(
      () => settingFromEnv(WORKER.role, { RELABEL_WORKER_ROLE: 'hub' }),
      (err: unknown) =>
        err instanceof SettingError &&
        err.message === `option '--role <role>' value 'hub' from env 'RELABEL_WORKER_ROLE' is invalid. worker role "hub": expected site or centre`,
    );
    for (const name of ['two words', 'x'.repeat(201)]) {
      assert.throws(
        () => settingFromEnv(CONNECTION.fleetTaskQueue, { RELABEL_FLEET_TASK_QUEUE: name }),
        /from env 'RELABEL_FLEET_TASK_QUEUE' is invalid\. must be a task queue name: 1 to 200 printable ASCII characters, no spaces$/,
      );
    }
  });

  it('stops the worker process at once for a bad role, and for a kubeconfig or store given to the centre, opening nothing', async () => {
    // TEMPORAL_ADDRESS points nowhere: a worker that got past its settings would fail on it with another message.
    const run = (args: string[], env: Record<string, string> = {}) =>
      runNode(['src/worker.ts', ...args], { cwd: ROOT, env: { ...process.env, TEMPORAL_ADDRESS: '127.0.0.1:1', ...env } });
    const [role, kube, store] = await Promise.all([
      run(['--role', 'center']),
      run(['--role', 'centre', '--kubeconfig', '/k/site.yaml']),
      run(['--store', 'sqlite:/s.db'], { RELABEL_WORKER_ROLE: 'centre' }),
    ]);
    assert.equal(role.status, 1);
    assert.match(role.stderr, /option '--role <role>' argument 'center' is invalid\. worker role "center": expected site or centre/);
    assert.equal(kube.status, 1);
    assert.match(
      kube.stderr,
      /option '--kubeconfig' is refused with --role centre: the centre runs only the fleet's workflows and holds no kubeconfig and no store/,
    );
    assert.equal(store.status, 1);
    assert.match(store.stderr, /option '--store' is refused with --role centre/);
  });

  it("is ready, for a worker of workflows only, without the activity poller it never starts; a site's worker waits for it", async () => {
    const connection = { withDeadline: async (_: number, fn: () => Promise<unknown>) => fn(), workflowService: { getSystemInfo: async () => ({}) } };
    const worker = { getStatus: () => ({ runState: 'RUNNING', workflowPollerState: 'POLLING', activityPollerState: 'SHUTDOWN' }) };
    const probed = {
      worker: worker as unknown as Worker,
      connection: connection as unknown as NativeConnection,
      temporalAddress: 't:7233',
      namespace: 'default',
    };
    assert.equal((await workerReadiness({ ...probed, workflowsOnly: true })).ready, true);
    assert.deepEqual(await workerReadiness(probed), { ready: false, message: 'worker not polling: workflow poller POLLING, activity poller SHUTDOWN' });
  });
});
