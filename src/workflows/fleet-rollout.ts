/**
 * `fleetRollout`: one change rolled out over the sites of a fleet, wave by
 * wave (a canary first), each site's update run a child on that site's own
 * task queue with the site's own waves and health gates. Between waves, an
 * approval gate if asked; when more sites fail than the rollout allows,
 * no further site starts (those running finish) and the rollout halts
 * until `resume` or `abort`. `pause` starts no more sites until `unpause`.
 * Nothing is rolled back. History stays bounded: the rollout continues as
 * new between sites after a fixed number of them, carrying one letter per
 * site and the failure sample (`fleet-carried.ts`).
 * Workflow code: deterministic; the gates wait durably.
 */
import { ApplicationFailure, condition, continueAsNew, setCurrentDetails, setHandler, workflowInfo } from '@temporalio/workflow';
import { assignFleetWaves, effectiveFleetRollout, fleetApprovalAfter, fleetHalts, fleetRolloutErrors, type FleetWave } from '../core/fleet/fleet-waves.ts';
import { fleetErrors, type FleetSite } from '../core/fleet/sites.ts';
import { FailureType } from '../core/plan/failure-types.ts';
import {
  DEFAULT_CONTINUE_AS_NEW_AFTER_SITES,
  DEFAULT_SITE_CONCURRENCY,
  FleetGate,
  fleetProgressQuery,
  SiteState,
  type FleetRolloutInput,
  type FleetRolloutResult,
} from '../contracts/fleet-messages.ts';
import { ControlVerb, RunStatus } from '../contracts/messages.ts';
import { handleFleetControl, type FleetState } from './fleet-control.ts';
import { carry, stateOf } from './fleet-carried.ts';
import { endSite, failedCount, fleetCounts, fleetProgress } from './fleet-progress.ts';
import { runSite } from './fleet-site.ts';
import { countSiteEnd } from './fleet-telemetry.ts';

/** The rollout's waves, or the workflow's failure naming what is wrong with its input. */
function wavesOf(input: FleetRolloutInput): FleetWave[] {
  const wrong = [...fleetErrors(input.sites), ...fleetRolloutErrors(input.rollout)];
  if (input.sites.length === 0) wrong.push('no sites: a fleet rollout needs at least one');
  const waves = wrong.length === 0 ? assignFleetWaves(input.sites, effectiveFleetRollout(input.rollout)) : undefined;
  if (waves && !waves.ok) wrong.push(waves.message);
  if (wrong.length > 0 || !waves?.ok) {
    throw ApplicationFailure.nonRetryable(
      `invalid fleet rollout: ${wrong.slice(0, 10).join('; ')}${wrong.length > 10 ? ` and ${wrong.length - 10} more` : ''}`,
      FailureType.InvalidRequest,
    );
  }
  return waves.value;
}

/** Whether failures stop new sites from starting: more than allowed, and more than when the rollout was last resumed. */
function halting(state: FleetState): boolean {
  const failed = failedCount(state);
  return fleetHalts(state.rollout, failed) && failed > (state.resumedAt ?? -1);
}

/** Waits at `gate` for one of `verbs`; records who approved. */
async function gate(state: FleetState, waiting: FleetGate, reason: string, verbs: readonly ControlVerb[]): Promise<ControlVerb> {
  state.decision = undefined;
  state.waiting = { gate: waiting, reason };
  setCurrentDetails(`**Waiting**: ${reason}`);
  await condition(() => state.decision !== undefined && verbs.includes(state.decision.verb));
  const taken = state.decision as unknown as { verb: ControlVerb; by: string | null };
  state.decision = undefined;
  state.waiting = undefined;
  if (taken.verb === ControlVerb.approve) state.approvals.push({ wave: state.wave, by: taken.by });
  if (taken.verb === ControlVerb.resume) state.resumedAt = failedCount(state);
  if (taken.verb === ControlVerb.abort) state.aborted = true;
  return taken.verb;
}

/** Runs the sites of the current wave not yet ended, `concurrency` at a time; stops starting them when halting, paused or aborted. */
async function runWave(state: FleetState, sites: readonly FleetSite[], input: FleetRolloutInput, budget: { left: number }): Promise<void> {
  const concurrency = Math.max(1, input.siteConcurrency ?? DEFAULT_SITE_CONCURRENCY);
  const context = {
    fleet: workflowInfo().workflowId,
    run: input.run,
    ...(input.audit ? { audit: input.audit } : {}),
    siteWaitSeconds: state.rollout.siteWaitSeconds,
  };
  const queue = sites.filter((s) => !state.ended.has(s.name));
  const ran: Promise<void>[] = [];
  while (queue.length > 0 && budget.left > 0) {
    await condition(() => state.running.size < concurrency && !state.paused);
    if (halting(state) || state.aborted) break;
    const site = queue.shift() as FleetSite;
    budget.left--;
    state.running.add(site.name);
    ran.push(
      runSite(site, context).then((outcome) => {
        state.running.delete(site.name);
        endSite(state, outcome);
        countSiteEnd(state.name, outcome);
      }),
    );
  }
  await Promise.all(ran);
}

/** Runs a fleet rollout to its end (see the module's comment). */
export async function fleetRollout(input: FleetRolloutInput): Promise<FleetRolloutResult> {
  const waves = wavesOf(input);
  const state = stateOf(input, waves);
  const byName = new Map(input.sites.map((s) => [s.name, s]));
  setHandler(fleetProgressQuery, () => fleetProgress(state));
  handleFleetControl(state);
  const budget = { left: Math.max(1, input.continueAsNewAfterSites ?? DEFAULT_CONTINUE_AS_NEW_AFTER_SITES) };
  while (state.wave < waves.length && !state.aborted) {
    const wave = waves[state.wave] as FleetWave;
    setCurrentDetails(`**Wave ${state.wave + 1} of ${waves.length}** (${wave.name}): ${wave.sites.length} site(s)`);
    await runWave(
      state,
      wave.sites.map((name) => byName.get(name) as FleetSite),
      input,
      budget,
    );
    const left = wave.sites.some((s) => !state.ended.has(s));
    // Halted only while some site has not ended: once every site has, the rollout ends with its failures.
    if (halting(state) && state.ended.size < state.sites) {
      const failed = failedCount(state);
      await gate(state, FleetGate.halted, `${failed} site(s) failed, more than the ${state.rollout.maxFailedSites} allowed: resume or abort`, [
        ControlVerb.resume,
        ControlVerb.abort,
      ]);
      continue;
    }
    if (left) {
      // Out of budget mid-wave: the rest of the wave goes on in a new execution.
      await continueAsNew<typeof fleetRollout>({ ...input, carried: carry(state, input) });
    }
    if (fleetApprovalAfter(state.rollout, state.wave, waves.length)) {
      await gate(state, FleetGate.approval, `wave ${state.wave + 1} (${wave.name}) done: approve the next wave, or abort`, [
        ControlVerb.approve,
        ControlVerb.abort,
      ]);
      if (state.aborted) break;
    }
    state.wave++;
    if (state.wave < waves.length && budget.left <= 0) await continueAsNew<typeof fleetRollout>({ ...input, carried: carry(state, input) });
  }
  return result(state, input);
}

/** The result: every site not ended is skipped (the rollout was aborted). */
function result(state: FleetState, input: FleetRolloutInput): FleetRolloutResult {
  for (const site of input.sites) if (!state.ended.has(site.name)) state.ended.set(site.name, SiteState.skipped);
  const counts = fleetCounts(state);
  const status = counts.succeeded === counts.sites ? RunStatus.success : counts.succeeded > 0 ? RunStatus.partialSuccess : RunStatus.failure;
  setCurrentDetails(`**Done**: ${counts.succeeded} of ${counts.sites} site(s) succeeded${state.aborted ? ' (aborted)' : ''}`);
  return { name: state.name, status, aborted: state.aborted, counts, waves: state.waves.length, failures: state.failures };
}
