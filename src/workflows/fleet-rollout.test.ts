/**
 * `fleetRollout`, fast: the real workflow code on a Temporal dev server of
 * its own, one worker per site on the site's own task queue, the
 * activities faked in memory. Waves of sites in order (a canary first), a
 * failed site halting the fleet, resume and abort, a site's run halted at
 * its health gate halting the fleet and the fleet's resume and abort
 * reaching it, a site no worker serves,
 * the approval gate, and the rollout carried across continue-as-new.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ApplicationFailure, WorkflowFailedError, WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import type { FleetRollout } from '../core/fleet/fleet-waves.ts';
import type { FleetSite } from '../core/fleet/sites.ts';
import { FailureType } from '../core/plan/failure-types.ts';
import { controlUpdate } from '../contracts/messages.ts';
import { fleetControlUpdate, fleetProgressQuery, type FleetControlRequest, type FleetGate, type FleetRolloutInput } from '../contracts/fleet-messages.ts';
import { executionChain } from '../../test/kit/workflows/executions.ts';
import { FakeRelabel } from '../../test/kit/workflows/fake-activities.ts';
import { startWorkflowEnv, until, type TestWorker, type WorkflowTestEnv } from '../../test/kit/workflows/environment.ts';
import type { fleetRollout } from './fleet-rollout.ts';

/** Site `i` (from 1) on its own task queue, served by its own worker. */
const site = (i: number, queue = `fleet-site-${i}`): FleetSite => ({ name: `edge-0${i}`, taskQueue: queue, labels: { region: i % 2 ? 'east' : 'west' } });
const sites = (n: number) => Array.from({ length: n }, (_, i) => site(i + 1));

function start(w: TestWorker, name: string, input: Partial<FleetRolloutInput> & { rollout: FleetRollout }) {
  return w.client.workflow.start<typeof fleetRollout>('fleetRollout', {
    taskQueue: w.taskQueue,
    workflowId: w.id(name),
    args: [{ name, sites: sites(4), run: {}, ...input }],
  });
}

const control = (handle: WorkflowHandle, request: FleetControlRequest) => handle.executeUpdate(fleetControlUpdate, { args: [request] });

async function atGate(handle: WorkflowHandle, gate: FleetGate): Promise<string | undefined> {
  await until(`the ${gate} gate`, async () => (await handle.query(fleetProgressQuery)).waiting === gate);
  return (await handle.query(fleetProgressQuery)).reason;
}

/** The index in the fake's journal of the first call of `name` for `site`'s run or by `site`. */
function firstCall(fake: FakeRelabel, name: 'prepareSiteRun' | 'setRunOutcome', siteName: string): number {
  const run = fake.prepared.get(siteName);
  return fake.calls.findIndex((c) => c.name === name && (name === 'prepareSiteRun' ? c.input.site === siteName : c.input.run === run));
}

describe('fleetRollout (fast: one worker per site, fake activities)', { concurrency: true }, () => {
  let env: WorkflowTestEnv;
  const stops: (() => Promise<void>)[] = [];
  before(async () => {
    env = await startWorkflowEnv();
    for (const s of sites(8)) stops.push(await env.addWorker(s.taskQueue));
  });
  after(async () => {
    for (const stop of stops) await stop();
    await env?.teardown();
  });

  it('runs a canary site, then waves of 3 and 4, each site a child run on its own queue, wave after wave', async () => {
    const fake = new FakeRelabel();
    await env.run(fake, async (w) => {
      const result = await (
        await start(w, 'eight', { sites: sites(8), rollout: { canary: { count: 1 }, waves: { sizes: [3, 4] } }, siteConcurrency: 4 })
      ).result();
      assert.deepEqual([result.status, result.waves, result.counts.succeeded, result.counts.failed], ['success', 3, 8, 0]);
      assert.deepEqual(
        fake.appliedSet(),
        sites(8)
          .flatMap((s) => [`${s.name}-n1`, `${s.name}-n2`])
          .sort(),
      );
      const canaryEnd = firstCall(fake, 'setRunOutcome', 'edge-01');
      for (const later of ['edge-02', 'edge-03', 'edge-04']) assert.ok(firstCall(fake, 'prepareSiteRun', later) > canaryEnd, `${later} waits for the canary`);
      const waveTwoEnd = Math.max(...['edge-02', 'edge-03', 'edge-04'].map((s) => firstCall(fake, 'setRunOutcome', s)));
      for (const later of ['edge-05', 'edge-06', 'edge-07', 'edge-08'])
        assert.ok(firstCall(fake, 'prepareSiteRun', later) > waveTwoEnd, `${later} waits for wave 2`);
    });
  });

  it('halts when more sites fail than allowed, names why, and goes on when resumed', async () => {
    const fake = new FakeRelabel();
    fake.failing.set('edge-02-n1', { type: 'NodeWriteFailed', message: 'refused' });
    await env.run(fake, async (w) => {
      const handle = await start(w, 'halt', { rollout: { waves: { sizes: [2] } }, siteConcurrency: 1 });
      assert.equal(await atGate(handle, 'halted'), '1 site(s) failed, more than the 0 allowed: resume or abort');
      const halted = await handle.query(fleetProgressQuery);
      assert.deepEqual([halted.counts.succeeded, halted.counts.failed, halted.counts.pending], [1, 1, 2]);
      assert.deepEqual(
        halted.failures.map((f) => [f.site, f.reason]),
        [['edge-02', '1 of 2 node(s) failed']],
      );
      assert.equal(fake.prepared.has('edge-03'), false, 'no further site starts while halted');
      await control(handle, { verb: 'resume', by: 'ops' });
      const result = await handle.result();
      assert.deepEqual([result.status, result.counts.succeeded, result.counts.failed, result.aborted], ['partial_success', 3, 1, false]);
    });
  });

  it('aborts at the halted gate: no further site starts, each is reported skipped', async () => {
    const fake = new FakeRelabel();
    fake.siteRuns.set('edge-01', { refuse: { type: FailureType.NoCommittedRevision, message: 'no revision has been committed yet' } });
    await env.run(fake, async (w) => {
      const handle = await start(w, 'abort', { rollout: { canary: { count: 1 } } });
      await atGate(handle, 'halted');
      await control(handle, { verb: 'abort', by: 'ops' });
      const result = await handle.result();
      assert.deepEqual([result.status, result.aborted, result.counts.skipped, result.counts.failed], ['failure', true, 3, 1]);
      assert.equal(result.failures[0]?.reason, 'NoCommittedRevision: no revision has been committed yet');
      assert.deepEqual([...fake.prepared.keys()], []);
    });
  });

  /** A site's run in two waves of one node each whose health gate after the first times out. */
  const unhealthy = (name: string) => ({
    nodes: [`${name}-n1`, `${name}-n2`],
    waves: { of: [[`${name}-n1`], [`${name}-n2`]], rollout: { healthTimeoutSeconds: 5 } },
    health: [{ healthy: false as const, unhealthy: 1, reason: `ds/agent on ${name}-n1 not Ready` }],
  });

  it("halts the fleet when a site's run halts at its health gate, naming the site and why; resume reaches that run", async () => {
    const fake = new FakeRelabel();
    fake.siteRuns.set('edge-02', unhealthy('edge-02'));
    await env.run(fake, async (w) => {
      const handle = await start(w, 'site-halt', { sites: sites(4), rollout: { waves: { sizes: [3] } }, siteConcurrency: 3 });
      assert.equal(
        await atGate(handle, 'halted'),
        "1 site(s) failed or halted, more than the 0 allowed; site edge-02's run halted: wave 1 (wave-1): the health gate timed out after 5 s: ds/agent on edge-02-n1 not Ready: resume or abort",
      );
      const halted = await handle.query(fleetProgressQuery);
      assert.deepEqual([halted.counts.succeeded, halted.counts.running, halted.counts.pending, halted.running], [2, 1, 1, ['edge-02']]);
      assert.deepEqual(
        halted.halted?.map((h) => h.site),
        ['edge-02'],
      );
      assert.equal(fake.appliedSet().includes('edge-02-n2'), false, "the site's second wave waits");
      assert.equal(fake.prepared.has('edge-04'), false, 'no further site starts while halted');
      await control(handle, { verb: 'resume', by: 'ops' });
      const result = await handle.result();
      assert.deepEqual([result.status, result.counts.succeeded, result.aborted], ['success', 4, false]);
      assert.ok(fake.appliedSet().includes('edge-02-n2'), "the site's run went on past its gate");
    });
  });

  it('halts when a halted site run holds the wave up though failures are allowed; abort ends that run and skips the rest', async () => {
    const fake = new FakeRelabel();
    fake.siteRuns.set('edge-01', unhealthy('edge-01'));
    await env.run(fake, async (w) => {
      const handle = await start(w, 'site-abort', { rollout: { canary: { count: 1 }, maxFailedSites: 1 } });
      assert.match(
        (await atGate(handle, 'halted')) ?? '',
        /^site edge-01's run halted: wave 1 \(wave-1\): the health gate timed out after 5 s: .*: resume or abort$/,
      );
      await control(handle, { verb: 'abort', by: 'ops' });
      const result = await handle.result();
      assert.deepEqual([result.status, result.aborted, result.counts.failed, result.counts.skipped], ['failure', true, 1, 3]);
      assert.deepEqual(fake.appliedSet(), ['edge-01-n1'], "the site's run ended at its gate");
      const run = fake.runs.get(fake.prepared.get('edge-01') ?? -1);
      assert.deepEqual(
        run?.nodes.map((n) => [n.node, n.status]),
        [
          ['edge-01-n1', 'success'],
          ['edge-01-n2', 'cancelled'],
        ],
        "the fleet's abort reached the site's run: its second wave settled, never started",
      );
    });
  });

  it('goes on by itself when the halted site run is resumed at its site: nothing is left to decide', async () => {
    const fake = new FakeRelabel();
    fake.siteRuns.set('edge-01', unhealthy('edge-01'));
    await env.run(fake, async (w) => {
      const handle = await start(w, 'site-resumed', { sites: sites(2), rollout: { canary: { count: 1 } } });
      await atGate(handle, 'halted');
      const siteRun = w.client.workflow.getHandle(`${handle.workflowId.split('/')[0]}/update-labels/edge-01`);
      await siteRun.executeUpdate(controlUpdate, { args: [{ verb: 'resume', by: 'site-ops' }] });
      const result = await handle.result();
      assert.deepEqual([result.status, result.counts.succeeded, result.aborted], ['success', 2, false]);
    });
  });

  it('ends, without halting, when the last site fails: nothing is left to hold back', async () => {
    const fake = new FakeRelabel();
    fake.failing.set('edge-02-n2', { type: 'NodeWriteFailed', message: 'refused' });
    await env.run(fake, async (w) => {
      const result = await (await start(w, 'last', { sites: sites(2), rollout: { canary: { count: 1 } } })).result();
      assert.deepEqual([result.status, result.counts.succeeded, result.counts.failed, result.aborted], ['partial_success', 1, 1, false]);
    });
  });

  it('reports a site no worker serves unreachable, naming its queue, and goes on as the rollout allows', async () => {
    const fake = new FakeRelabel();
    const gone = site(5, 'fleet-site-nobody');
    await env.run(fake, async (w) => {
      const handle = await start(w, 'gone', { sites: [site(1), gone, site(3)], rollout: { maxFailedSites: 1, siteWaitSeconds: 1 } });
      const result = await handle.result();
      assert.deepEqual([result.status, result.counts.succeeded, result.counts.unreachable], ['partial_success', 2, 1]);
      assert.deepEqual(result.failures, [
        { site: 'edge-05', state: 'unreachable', reason: "no worker took site edge-05's work on task queue fleet-site-nobody within 1 s" },
      ]);
    });
  });

  it('waits for an approval after the canary, refusing verbs of other gates', async () => {
    const fake = new FakeRelabel();
    await env.run(fake, async (w) => {
      const handle = await start(w, 'approve', { rollout: { canary: { count: 1 }, approval: 'first' } });
      assert.equal(await atGate(handle, 'approval'), 'wave 1 (canary) done: approve the next wave, or abort');
      const refused = await control(handle, { verb: 'resume' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(refused instanceof WorkflowUpdateFailedError && refused.cause instanceof ApplicationFailure);
      assert.deepEqual([refused.cause.type, refused.cause.message], [FailureType.NotRunning, 'cannot resume the fleet rollout: it is waiting for an approval']);
      assert.deepEqual([...fake.prepared.keys()], ['edge-01']);
      await control(handle, { verb: 'approve', by: 'ops' });
      assert.equal((await handle.result()).counts.succeeded, 4);
    });
  });

  it('continues as new between sites, carrying a letter per site and the failure sample', async () => {
    const fake = new FakeRelabel();
    fake.failing.set('edge-01-n2', { type: 'NodeWriteFailed', message: 'refused' });
    await env.run(fake, async (w) => {
      const handle = await start(w, 'continued', {
        sites: sites(5),
        rollout: { waves: { sizes: [3] }, maxFailedSites: 1 },
        continueAsNewAfterSites: 2,
        siteConcurrency: 1,
      });
      const result = await handle.result();
      assert.deepEqual([result.status, result.counts.succeeded, result.counts.failed], ['partial_success', 4, 1]);
      assert.equal(result.failures[0]?.site, 'edge-01');
      assert.notEqual((await handle.describe()).runId, handle.firstExecutionRunId, 'the rollout went on in a new execution');
      assert.equal(new Set(fake.prepared.keys()).size, 5, 'each site prepared once');
      assert.equal(fake.inputsOf('prepareSiteRun').length, 5);
      const chain = await executionChain(w.client, handle.workflowId, handle.firstExecutionRunId);
      const carried = chain.map((e) => (e.input as FleetRolloutInput).carried);
      assert.deepEqual(
        carried.map((c) => c?.ended),
        [undefined, 'fs---', 'fsss-'],
      );
      assert.deepEqual(
        carried.at(-1)?.failures?.map((f) => f.site),
        ['edge-01'],
      );
    });
  });

  it('goes on from an execution continued with every ended outcome carried, as before the letters were', async () => {
    const fake = new FakeRelabel();
    await env.run(fake, async (w) => {
      const outcomes = [
        { site: 'edge-01', state: 'failed' as const, reason: 'refused' },
        { site: 'edge-02', state: 'succeeded' as const },
      ];
      const handle = await start(w, 'legacy', { rollout: { maxFailedSites: 1 }, carried: { wave: 0, outcomes, paused: false, approvals: [] } });
      const result = await handle.result();
      assert.deepEqual([result.counts.succeeded, result.counts.failed, result.failures[0]?.reason], [3, 1, 'refused']);
      assert.deepEqual([...fake.prepared.keys()].sort(), ['edge-03', 'edge-04'], 'the ended sites are not run again');
    });
  });

  it('refuses a rollout whose sites share a task queue, or whose canary names an unknown site, before any site starts', async () => {
    const fake = new FakeRelabel();
    await env.run(fake, async (w) => {
      const cases: [string, Partial<FleetRolloutInput> & { rollout: FleetRollout }][] = [
        ['shared', { sites: [site(1), site(2, 'fleet-site-1')], rollout: {} }],
        ['unknown', { rollout: { canary: { sites: ['edge-09'] } } }],
      ];
      for (const [name, input] of cases) {
        const err = await (await start(w, name, input)).result().then(
          () => undefined,
          (e: unknown) => e,
        );
        assert.ok(err instanceof WorkflowFailedError && err.cause instanceof ApplicationFailure, String(err));
        assert.equal(err.cause.type, FailureType.InvalidRequest);
        assert.match(err.cause.message, name === 'shared' ? /task queue fleet-site-1 is already site edge-01's/ : /canary: "edge-09": not among/);
      }
      assert.deepEqual(fake.calls, []);
    });
  });
});
