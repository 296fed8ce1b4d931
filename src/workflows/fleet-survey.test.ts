/**
 * `fleetSurvey`, fast: the real workflow code on a Temporal dev server of
 * its own, one worker per site on the site's own task queue, the site
 * answers faked in memory. Every site asked on its own queue, a site no
 * worker serves reported unreachable, a refusing site failed with its
 * reason, the plans summed, the answers paged (also after the survey
 * ended), and bad input refused before any site is asked.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WorkflowFailedError } from '@temporalio/client';
import type { FleetSite } from '../core/fleet/sites.ts';
import { FailureType } from '../core/plan/failure-types.ts';
import proto from '@temporalio/proto';
import { fleetSurveyPageQuery, MAX_SITE_ANSWER_BYTES, type FleetSurveyInput, type SitePlanAnswer } from '../contracts/fleet-survey.ts';
import { FakeRelabel } from '../../test/kit/workflows/fake-activities.ts';
import { startWorkflowEnv, type TestWorker, type WorkflowTestEnv } from '../../test/kit/workflows/environment.ts';
import type { fleetSurvey } from './fleet-survey.ts';

const { temporal } = proto;

const site = (i: number): FleetSite => ({ name: `edge-0${i}`, taskQueue: `survey-site-${i}`, labels: {} });
const sites = (n: number) => Array.from({ length: n }, (_, i) => site(i + 1));

function survey(w: TestWorker, name: string, input: Partial<FleetSurveyInput>) {
  return w.client.workflow.start<typeof fleetSurvey>('fleetSurvey', {
    taskQueue: w.taskQueue,
    workflowId: w.id(name),
    args: [{ kind: 'plan', sites: sites(3), ...input }],
  });
}

/** A plan answer writing `changing` nodes, gaining one key on each, with `removed` of `owned` labels removed. */
function planOf(changing: number, removed = 0, owned = 10): SitePlanAnswer {
  return {
    revision: 2,
    run: 5,
    workflowId: 'update-labels/x/dry-run/1',
    targets: changing + 1,
    planned: changing + 1,
    notPlanned: {},
    changing,
    gain: changing,
    change: 0,
    lose: removed,
    adopt: 0,
    keys: [
      { key: 'example.com/rack', gain: changing, change: 0, lose: 0, adopt: 0, sources: ['Rack/r1'], moreSources: 0 },
      ...(removed > 0 ? [{ key: 'example.com/old', gain: 0, change: 0, lose: removed, adopt: 0, sources: [], moreSources: 0 }] : []),
    ],
    moreKeys: 0,
    brake: { owned, removed, maxFraction: 0.5, exceeded: removed > owned / 2 },
    warnings: [],
  };
}

describe('fleetSurvey (fast: one worker per site, fake answers)', { concurrency: true }, () => {
  let env: WorkflowTestEnv;
  const stops: (() => Promise<void>)[] = [];
  before(async () => {
    env = await startWorkflowEnv();
    // Sites 1 to 4 have workers; site 5's queue has none.
    for (const s of sites(4)) stops.push(await env.addWorker(s.taskQueue));
  });
  after(async () => {
    for (const stop of stops) await stop();
    await env?.teardown();
  });

  it('asks each site on its own queue, sums the plans, and reports the site no worker serves as unreachable', async () => {
    const fake = new FakeRelabel();
    fake.siteAnswers.set('edge-01', { state: 'answered', plan: planOf(3) });
    fake.siteAnswers.set('edge-02', { state: 'answered', plan: planOf(0) });
    fake.siteAnswers.set('edge-03', { state: 'answered', plan: planOf(5, 6) });
    fake.siteAnswers.set('edge-04', { refuse: { type: FailureType.NoCommittedRevision, message: 'no revision has been committed yet' } });
    await env.run(fake, async (w) => {
      const handle = await survey(w, 'plan', { sites: sites(5), siteWaitSeconds: 2, siteConcurrency: 2 });
      const result = await handle.result();
      assert.deepEqual([result.sites, result.answered, result.failed, result.unreachable], [5, 3, 1, 1]);
      const plan = result.plan;
      assert.ok(plan);
      assert.deepEqual([plan.reached, plan.changing, plan.gain, plan.lose, plan.planned], [2, 8, 8, 6, 11], 'site 2 writes nothing: not reached');
      assert.deepEqual(plan.brake, { owned: 30, removed: 6, sitesExceeded: 1 });
      assert.deepEqual(
        plan.keys.map((k) => [k.key, k.sites, k.gain, k.lose]),
        [
          ['example.com/rack', 3, 8, 0],
          ['example.com/old', 1, 0, 6],
        ],
      );
      const failures = Object.fromEntries(result.failures.map((f) => [f.site, f]));
      assert.equal(failures['edge-04']?.state, 'failed');
      assert.match(failures['edge-04']?.reason ?? '', /^NoCommittedRevision: no revision has been committed yet/);
      assert.equal(failures['edge-05']?.state, 'unreachable');
      assert.match(failures['edge-05']?.reason ?? '', /no worker took site edge-05's question on task queue survey-site-5 within 2 s/);
      const asked = fake.calls.filter((c) => c.name === 'answerSite').map((c) => c.input.site);
      assert.deepEqual([...new Set(asked)].sort(), ['edge-01', 'edge-02', 'edge-03', 'edge-04'], 'each served site asked, on its own queue');

      // The answers a page at a time, after the survey ended: most nodes written first, unanswered last.
      const first = await handle.query(fleetSurveyPageQuery, { order: 'changes', limit: 2 });
      assert.deepEqual([first.total, first.items.map((a) => a.site)], [5, ['edge-03', 'edge-01']]);
      const rest = await handle.query(fleetSurveyPageQuery, { order: 'changes', offset: 2, limit: 10 });
      assert.deepEqual(
        rest.items.map((a) => [a.site, a.state]),
        [
          ['edge-02', 'answered'],
          ['edge-04', 'failed'],
          ['edge-05', 'unreachable'],
        ],
      );
      const byName = await handle.query(fleetSurveyPageQuery, { limit: 1000 });
      assert.deepEqual(
        byName.items.map((a) => a.site),
        sites(5).map((s) => s.name),
      );
    });
  });

  it('counts the alerts of each site’s state', async () => {
    const fake = new FakeRelabel();
    fake.siteAnswers.set('edge-01', {
      state: 'answered',
      status: { revision: 3, joins: { enabled: true, pending: 0 }, alerts: ['RelabelRunFailed', 'RelabelDriftFound'] },
    });
    fake.siteAnswers.set('edge-02', { state: 'answered', status: { revision: 3, joins: { enabled: false }, alerts: ['RelabelDriftFound'] } });
    await env.run(fake, async (w) => {
      const result = await (await survey(w, 'state', { kind: 'state', sites: sites(3) })).result();
      assert.deepEqual([result.answered, result.plan], [3, undefined]);
      assert.deepEqual(result.alerts, { RelabelRunFailed: 1, RelabelDriftFound: 2 });
    });
  });

  it('keeps its history within the per-site bound at 1,000 sites', async () => {
    const fake = new FakeRelabel();
    await env.run(fake, async (w) => {
      // Four sites with workers, the rest with none: every one of them asked, answered or reported.
      const many = [...sites(4), ...Array.from({ length: 996 }, (_, i) => ({ name: `far-${i}`, taskQueue: `survey-nobody-${i}`, labels: { n: String(i) } }))];
      const handle = await survey(w, 'thousand', { sites: many, siteWaitSeconds: 1, siteConcurrency: 1000 });
      const result = await handle.result();
      assert.deepEqual([result.sites, result.answered, result.unreachable], [1000, 4, 996]);
      const history = await handle.fetchHistory();
      const events = history.events?.length ?? 0;
      const bytes = temporal.api.history.v1.History.encode(history).finish().length;
      assert.ok(events <= 4 * 1000 + 50, `${events} events`);
      // Each answer at most MAX_SITE_ANSWER_BYTES; an unreachable site's timeout and reason well under a kilobyte.
      assert.ok(bytes <= 4 * MAX_SITE_ANSWER_BYTES + 996 * 1024 + JSON.stringify(many).length * 2, `${bytes} bytes`);
      const page = await handle.query(fleetSurveyPageQuery, { offset: 990, limit: 200 });
      assert.deepEqual([page.total, page.items.length], [1000, 10]);
    });
  });

  it('refuses bad input before asking any site', async () => {
    const fake = new FakeRelabel();
    await env.run(fake, async (w) => {
      const shared = [site(1), { ...site(2), taskQueue: site(1).taskQueue }];
      for (const [name, input, wrong] of [
        ['none', { sites: [] as FleetSite[] }, /no sites/],
        ['shared', { sites: shared }, /survey-site-1/],
        ['kind', { kind: 'guess' as 'plan' }, /unknown question "guess"/],
        ['revision', { revision: 0 }, /revision: expected a positive integer/],
      ] as [string, Partial<FleetSurveyInput>, RegExp][]) {
        const err = await (await survey(w, name, input)).result().then(
          () => assert.fail(`${name} was accepted`),
          (e: unknown) => e,
        );
        assert.ok(err instanceof WorkflowFailedError);
        assert.match(String((err.cause as Error).message), wrong);
      }
      assert.equal(fake.calls.filter((c) => c.name === 'answerSite').length, 0, 'no site was asked');
    });
  });
});
