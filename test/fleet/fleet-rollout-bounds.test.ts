/**
 * `fleetRollout` at 1,000 sites, in the full suite (alone it would take
 * most of the fast tier's budget): the real workflow code on a Temporal
 * dev server of its own, the sites as large as the registry takes them.
 * Five sites are served by workers of their own (fake activities); no
 * worker polls the queues of the other 995, so each of those is reported
 * unreachable once its site wait is over: the rollout still schedules every
 * site's work, and its history, input and answers stay bounded across the
 * continue-as-new chain.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rolloutSites } from '../../src/core/fleet/fleet-waves.ts';
import { MAX_FLEET_SITES } from '../../src/core/fleet/sites.ts';
import {
  DEFAULT_CONTINUE_AS_NEW_AFTER_SITES,
  FLEET_FAILURE_SAMPLE,
  MAX_SITE_REASON,
  fleetProgressQuery,
  type CarriedFleet,
  type FleetRolloutInput,
} from '../../src/contracts/fleet-messages.ts';
import { maximalLabelKey, maximalSite } from '../kit/fleet/maximal-sites.ts';
import { executionChain } from '../kit/workflows/executions.ts';
import { FakeRelabel } from '../kit/workflows/fake-activities.ts';
import { startWorkflowEnv, type WorkflowTestEnv } from '../kit/workflows/environment.ts';
import type { fleetRollout } from '../../src/workflows/fleet-rollout.ts';

/** The sites served by a worker, by index: the canary, some in each group, the last. */
const SERVED = [0, 150, 401, 650, 999];
const queueOf = (i: number) => (SERVED.includes(i) ? `fleet-bounds-${i}` : undefined);

describe('fleetRollout at 1,000 sites (fast: five served, the rest unreachable)', () => {
  let env: WorkflowTestEnv;
  const stops: (() => Promise<void>)[] = [];
  before(async () => {
    env = await startWorkflowEnv();
    for (const i of SERVED) stops.push(await env.addWorker(queueOf(i) as string));
  });
  after(async () => {
    for (const stop of stops) await stop();
    await env?.teardown();
  });

  it("continues as new every 200 sites, each execution's history and input bounded, carrying a letter per site", async () => {
    assert.equal(MAX_FLEET_SITES, 1000);
    const by = maximalLabelKey(0);
    const registered = Array.from({ length: MAX_FLEET_SITES }, (_, i) => maximalSite(i, queueOf(i)));
    const input: Omit<FleetRolloutInput, 'name'> = {
      sites: rolloutSites(registered, { by: { label: by } }),
      rollout: { canary: { count: 1 }, by: { label: by }, maxFailedSites: MAX_FLEET_SITES, siteWaitSeconds: 1 },
      run: {},
      siteConcurrency: DEFAULT_CONTINUE_AS_NEW_AFTER_SITES,
    };
    const fake = new FakeRelabel();
    await env.run(fake, async (w) => {
      const handle = await w.client.workflow.start<typeof fleetRollout>('fleetRollout', {
        taskQueue: w.taskQueue,
        workflowId: w.id('thousand'),
        args: [{ name: 'thousand', ...input }],
      });
      const result = await handle.result();
      assert.deepEqual(
        [result.status, result.waves, result.counts.succeeded, result.counts.unreachable, result.counts.pending],
        ['partial_success', 5, SERVED.length, MAX_FLEET_SITES - SERVED.length, 0],
      );
      assert.equal(result.failures.length, FLEET_FAILURE_SAMPLE, 'the result lists a sample of the failures');
      assert.ok(result.failures.every((f) => f.state === 'unreachable' && (f.reason?.length ?? 0) <= MAX_SITE_REASON));
      assert.equal(fake.prepared.size, SERVED.length, 'each served site ran once');
      const progress = await handle.query(fleetProgressQuery);
      assert.equal(progress.failures.length, FLEET_FAILURE_SAMPLE);
      assert.ok(Buffer.byteLength(JSON.stringify(progress)) < 30_000, 'the progress answer is a sample, not a list of sites');

      const chain = await executionChain(w.client, handle.workflowId, handle.firstExecutionRunId);
      const figures = chain.map((e) => `${e.events} events, ${e.historyBytes} B, input ${e.inputBytes} B`).join('; ');
      assert.ok(chain.length >= MAX_FLEET_SITES / DEFAULT_CONTINUE_AS_NEW_AFTER_SITES && chain.length <= 6, `${chain.length} executions: ${figures}`);
      // About 4 events per unreachable site and 20 per served one: 200 sites an execution stay far below Temporal's 51,200.
      assert.ok(Math.max(...chain.map((e) => e.events)) < 1500, figures);
      // The input twice (its start and its continue-as-new) and the sites' events: well inside Temporal's 50 MB a history.
      assert.ok(Math.max(...chain.map((e) => e.historyBytes)) < 2_000_000, figures);
      // 1,000 sites of the longest names, queues and grouping label: about 0.69 MB, within the 2 MB payload limit.
      assert.ok(Math.max(...chain.map((e) => e.inputBytes)) < 750_000, figures);
      const first = chain[0]?.inputBytes ?? 0;
      const last = chain.at(-1);
      // What continue-as-new adds: a letter per site and the failure sample, not an outcome per ended site.
      assert.ok((last?.inputBytes ?? 0) - first < MAX_FLEET_SITES + FLEET_FAILURE_SAMPLE * 450, figures);
      const carried = (last?.input as FleetRolloutInput | undefined)?.carried as CarriedFleet;
      assert.equal(carried.ended?.length, MAX_FLEET_SITES);
      assert.equal(carried.outcomes, undefined);
      assert.ok((carried.failures?.length ?? 0) <= FLEET_FAILURE_SAMPLE);
      console.log(`fleetRollout over ${MAX_FLEET_SITES} sites: ${chain.length} executions; ${figures}`);
    });
  });
});
