/**
 * The environment of a fast workflow test: a Temporal dev server of its own
 * (the CLI `npm run tools` built, started by `@temporalio/testing` with the
 * stack's flags: relabel's search attributes registered), the workflow code
 * bundled once (see {@link bundle}), and one worker whose activities are
 * each test's own {@link FakeRelabel}: an activity goes to the fake of the
 * test whose workflow called it, known by the workflow ID's first segment
 * (a child's ID starts with its parent's). One environment per test file;
 * each test's workflow IDs are its own, so its tests may run at once.
 */
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { devServerFlags } from '../../../stack/temporal.ts';
import { toolPath } from '../../../stack/tools.ts';
import { workflowBundleOptions } from '../../../src/worker/bundle.ts';
import { FakeRelabel, type FakeActivities } from './fake-activities.ts';

/** What a test body gets: the client, the worker's task queue and a maker of workflow IDs of the test's own. */
export interface TestWorker {
  client: Client;
  taskQueue: string;
  /** A workflow ID of this test's own: `t<test>/<name>-<n>`. Workflows it starts reach this test's fake. */
  id(name: string): string;
}

/** A running environment: run test bodies with {@link WorkflowTestEnv.run}, then tear it down. */
export interface WorkflowTestEnv {
  client: Client;
  /** Runs `body` with `fake` answering every activity of the workflows it starts; releases what the fake holds after. */
  run<T>(fake: FakeRelabel, body: (w: TestWorker) => Promise<T>): Promise<T>;
  /** Starts one more worker, on `taskQueue` (a fleet site's own queue), answering as the first does; resolves to its shutdown. */
  addWorker(taskQueue: string): Promise<() => Promise<void>>;
  /** Stops the worker and the server. */
  teardown(): Promise<void>;
}

/** How long a test body may take: a run waiting at a gate nobody opens fails the test instead of hanging the suite. */
const RUN_TIMEOUT_MS = 30_000;

let runtimeInstalled = false;

/**
 * The workflow bundle, built once per process (once per test file under
 * `npm test`, once per test process of `npm run test:fast`, each of which
 * runs half of the files) as the worker builds it, but in this process: the
 * worker's child process would inherit the test runner's flags and run as a
 * test file.
 */
let bundle: Promise<{ code: string }> | undefined;

/** Activities that hand each call to the fake of the test whose workflow made it. */
function dispatching(fakes: Map<string, FakeActivities>): FakeActivities {
  const names = Object.keys(new FakeRelabel().activities()) as (keyof FakeActivities)[];
  const dispatch = (name: keyof FakeActivities) => (input: unknown) => {
    const workflowId = Context.current().info.workflowExecution?.workflowId ?? '';
    const fake = fakes.get(workflowId.split('/')[0] ?? '');
    if (!fake) throw ApplicationFailure.nonRetryable(`no test's fake answers workflow ${workflowId}`);
    return (fake[name] as (i: unknown) => Promise<unknown>)(input);
  };
  return Object.fromEntries(names.map((name) => [name, dispatch(name)])) as unknown as FakeActivities;
}

/**
 * Starts the dev server and bundles the workflow code, both at once, then
 * the worker. Throws (naming `npm run tools`) when the Temporal CLI is not
 * built.
 */
export async function startWorkflowEnv(): Promise<WorkflowTestEnv> {
  if (!runtimeInstalled) {
    // ERROR: the activity failures the tests cause on purpose are logged at WARN.
    Runtime.install({ logger: new DefaultLogger('ERROR') });
    runtimeInstalled = true;
  }
  const path = toolPath('temporal');
  bundle ??= bundleWorkflowCode(workflowBundleOptions());
  const [temporal, workflowBundle] = await Promise.all([
    TestWorkflowEnvironment.createLocal({ server: { executable: { type: 'existing-path', path }, ip: '127.0.0.1', extraArgs: devServerFlags() } }),
    bundle,
  ]);
  const taskQueue = 'wftest';
  const fakes = new Map<string, FakeActivities>();
  const worker = await Worker.create({ connection: temporal.nativeConnection, taskQueue, workflowBundle, activities: dispatching(fakes) });
  const running = worker.run();
  let tests = 0;
  let ids = 0;
  return {
    client: temporal.client,
    async run(fake, body) {
      const test = `t${++tests}`;
      fakes.set(test, fake.activities());
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`test ${test} still running after ${RUN_TIMEOUT_MS} ms: a workflow waits for what never comes`)),
          RUN_TIMEOUT_MS,
        );
      });
      try {
        return await Promise.race([body({ client: temporal.client, taskQueue, id: (name) => `${test}/${name}-${++ids}` }), late]);
      } finally {
        clearTimeout(timer);
        fake.release();
      }
    },
    async addWorker(queue) {
      const more = await Worker.create({ connection: temporal.nativeConnection, taskQueue: queue, workflowBundle, activities: dispatching(fakes) });
      const going = more.run();
      return async () => {
        more.shutdown();
        await going;
      };
    },
    async teardown() {
      worker.shutdown();
      await running;
      await temporal.teardown();
    },
  };
}

/** Waits until `ready()` holds (polling), or fails naming `what` after `timeoutMs`. */
export async function until(what: string, ready: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
