/**
 * The environment of a fast workflow test: a Temporal dev server of its own
 * (the CLI `npm run tools` built, started by `@temporalio/testing` with the
 * stack's flags: relabel's search attributes registered), the workflow code
 * bundled once (see {@link bundle}), and a worker per test on a task queue of its own over a
 * {@link FakeRelabel}'s activities. One environment per test file; each
 * test's workflow IDs are its own.
 */
import { readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Client } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { devServerFlags } from '../../../stack/temporal.ts';
import { toolPath } from '../../../stack/tools.ts';
import { buildBundleFile } from '../../worker/bundle.ts';
import type { FakeRelabel } from './fake-activities.ts';

/** What a test body gets: the client, its worker's task queue and a maker of workflow IDs of its own. */
export interface TestWorker {
  client: Client;
  taskQueue: string;
  /** A workflow ID no other test of the file uses: `<name>-<n>`. */
  id(name: string): string;
}

/** A running environment: run test bodies with {@link WorkflowTestEnv.withWorker}, then tear it down. */
export interface WorkflowTestEnv {
  client: Client;
  /** Runs `body` while a worker polls a task queue of its own with `fake`'s activities; stops the worker after (releasing what the fake holds). */
  withWorker<T>(fake: FakeRelabel, body: (w: TestWorker) => Promise<T>): Promise<T>;
  /** Stops the server. */
  teardown(): Promise<void>;
}

let runtimeInstalled = false;

/**
 * The workflow bundle's code, built once per process: once per test file
 * under `npm test`, once for all of them under `npm run test:fast` (one
 * process). Read from the bundler's file, whose directory goes at once.
 */
let bundle: Promise<string> | undefined;

async function bundleCode(): Promise<string> {
  const path = await buildBundleFile();
  try {
    return readFileSync(path, 'utf8');
  } finally {
    rmSync(dirname(path), { recursive: true, force: true });
  }
}

/**
 * Starts the dev server and bundles the workflow code, both at once.
 * Throws (naming `npm run tools`) when the Temporal CLI is not built.
 */
export async function startWorkflowEnv(): Promise<WorkflowTestEnv> {
  if (!runtimeInstalled) {
    // ERROR: the activity failures the tests cause on purpose are logged at WARN.
    Runtime.install({ logger: new DefaultLogger('ERROR') });
    runtimeInstalled = true;
  }
  const path = toolPath('temporal');
  bundle ??= bundleCode();
  const [env, code] = await Promise.all([
    TestWorkflowEnvironment.createLocal({ server: { executable: { type: 'existing-path', path }, ip: '127.0.0.1', extraArgs: devServerFlags() } }),
    bundle,
  ]);
  let queues = 0;
  let ids = 0;
  return {
    client: env.client,
    async withWorker(fake, body) {
      const taskQueue = `wftest-${++queues}`;
      const worker = await Worker.create({
        connection: env.nativeConnection,
        taskQueue,
        workflowBundle: { code },
        activities: fake.activities(),
      });
      // Released before the worker stops: its shutdown waits for the activities it runs.
      return await worker.runUntil(async () => {
        try {
          return await body({ client: env.client, taskQueue, id: (name) => `${name}-${++ids}` });
        } finally {
          fake.release();
        }
      });
    },
    async teardown() {
      await env.teardown();
    },
  };
}

/** Waits until `ready()` holds (polling), or fails naming `what` after `timeoutMs`. */
export async function until(what: string, ready: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
