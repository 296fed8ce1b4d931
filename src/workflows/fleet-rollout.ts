/**
 * `fleetRollout`: one change rolled out over the sites of a fleet, wave by
 * wave (a canary first), each site's update run a child on that site's own
 * task queue with the site's own waves and health gates. Between waves, an
 * approval gate if asked; when more sites fail than the rollout allows,
 * or a site's run halts at one of its own gates (it tells the rollout, see
 * `fleet-site-gate.ts`), no further site starts (those running finish or
 * halt) and the rollout halts, saying why, until `resume` or `abort`, which
 * reach the halted site runs too. `pause` starts no more sites until `unpause`.
 * Nothing is rolled back. History stays bounded: the rollout continues as
 * new between sites after a fixed number of them, carrying one letter per
 * site and the failure sample (`fleet-carried.ts`).
 * Workflow code: deterministic; the gates wait durably.
 */
import {
  ApplicationFailure,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { assignFleetWaves, effectiveFleetRollout, fleetApprovalAfter, fleetHalts, fleetRolloutErrors, type FleetWave } from '../core/fleet/fleet-waves.ts';
import { fleetErrors, type FleetSite } from '../core/fleet/sites.ts';
import { FailureType } from '../core/plan/failure-types.ts';
import { clip } from '../core/plan/text.ts';
import {
  DEFAULT_CONTINUE_AS_NEW_AFTER_SITES,
  DEFAULT_SITE_CONCURRENCY,
  FleetGate,
  fleetProgressQuery,
  MAX_SITE_REASON,
  siteGateSignal,
  SiteState,
  type FleetRolloutInput,
  type FleetRolloutResult,
} from '../contracts/fleet-messages.ts';
import { ControlVerb, RunStatus, fleetDecisionSignal } from '../contracts/messages.ts';
import { handleFleetControl, type FleetState } from './fleet-control.ts';
import { carry, stateOf } from './fleet-carried.ts';
import { endSite, failedCount, fleetCounts, fleetProgress, haltedSites } from './fleet-progress.ts';
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

/** Whether every running site's run is halted at a gate: the wave goes no further without a decision on them. */
function stuck(state: FleetState): boolean {
  if (state.running.size === 0) return false;
  for (const site of state.running) if (!state.halted.has(site)) return false;
  return true;
}

/** Halted site runs shown in the halted gate's reason. */
const HALTED_SHOWN = 3;

/** Why the rollout halts: too many failed sites, and the site runs halted at their gates, with their reasons. */
function haltReason(state: FleetState): string {
  const parts: string[] = [];
  if (halting(state)) {
    const what = state.halted.size > 0 ? 'failed or halted' : 'failed';
    parts.push(`${failedCount(state)} site(s) ${what}, more than the ${state.rollout.maxFailedSites} allowed`);
  }
  const halted = haltedSites(state);
  for (const { site, reason } of halted.slice(0, HALTED_SHOWN)) parts.push(`site ${site}'s run halted: ${reason}`);
  if (halted.length > HALTED_SHOWN) parts.push(`${halted.length - HALTED_SHOWN} more site run(s) halted`);
  return `${parts.join('; ')}: resume or abort`;
}

/** Hands the fleet's resume or abort to every halted site run; they go on, or end as aborted runs. */
async function decideHalted(state: FleetState, verb: ControlVerb, by: string | null): Promise<void> {
  const ids = [...state.children].filter(([, site]) => state.halted.has(site)).map(([id]) => id);
  await Promise.all(
    ids.map(async (id) => {
      try {
        await getExternalWorkflowHandle(id).signal(fleetDecisionSignal, { verb, ...(by !== null ? { by } : {}) });
      } catch (err) {
        // A site run that has ended meanwhile needs no decision.
        if (isCancellation(err)) throw err;
      }
    }),
  );
  state.halted.clear();
}

/** Records what a site's run says of its gate: halted (with why) or going on. Notices of runs not running now are dropped. */
function hearSiteGates(state: FleetState): void {
  setHandler(siteGateSignal, (notice) => {
    const site = typeof notice?.workflowId === 'string' ? state.children.get(notice.workflowId) : undefined;
    if (site === undefined || !state.running.has(site)) return;
    if (notice.halted === true) state.halted.set(site, clip(typeof notice.reason === 'string' ? notice.reason : 'halted at a gate', MAX_SITE_REASON));
    else state.halted.delete(site);
  });
}

/**
 * Waits at `gate` for one of `verbs`, or until `cleared` holds (nothing
 * left to decide: the halted site runs went on at their sites); records
 * who approved, and hands a resume or abort on to the halted site runs.
 */
async function gate(state: FleetState, waiting: FleetGate, reason: string, verbs: readonly ControlVerb[], cleared = () => false): Promise<void> {
  state.decision = undefined;
  state.waiting = { gate: waiting, reason };
  setCurrentDetails(`**Waiting**: ${reason}`);
  const decided = () => state.decision !== undefined && verbs.includes(state.decision.verb);
  await condition(() => decided() || cleared());
  const taken = decided() ? (state.decision as unknown as { verb: ControlVerb; by: string | null }) : undefined;
  state.decision = undefined;
  state.waiting = undefined;
  if (!taken) return;
  if (taken.verb === ControlVerb.approve) state.approvals.push({ wave: state.wave, by: taken.by });
  if (taken.verb === ControlVerb.resume || taken.verb === ControlVerb.abort) await decideHalted(state, taken.verb, taken.by);
  if (taken.verb === ControlVerb.resume) state.resumedAt = failedCount(state);
  if (taken.verb === ControlVerb.abort) state.aborted = true;
}

/**
 * Runs the sites of the current wave not yet started, `concurrency` at a
 * time; stops starting them when halting, paused, aborted or when every
 * running site's run is halted. Returns once no site runs, or every one
 * running is halted.
 */
async function runWave(state: FleetState, sites: readonly FleetSite[], input: FleetRolloutInput, budget: { left: number }): Promise<void> {
  const concurrency = Math.max(1, input.siteConcurrency ?? DEFAULT_SITE_CONCURRENCY);
  const context = {
    fleet: workflowInfo().workflowId,
    run: input.run,
    ...(input.audit ? { audit: input.audit } : {}),
    siteWaitSeconds: state.rollout.siteWaitSeconds,
  };
  const queue = sites.filter((s) => !state.ended.has(s.name) && !state.running.has(s.name));
  while (queue.length > 0 && budget.left > 0) {
    await condition(() => (state.running.size < concurrency && !state.paused) || halting(state) || state.aborted || stuck(state));
    if (halting(state) || state.aborted || stuck(state)) break;
    const site = queue.shift() as FleetSite;
    budget.left--;
    state.running.add(site.name);
    let child: string | undefined;
    void runSite(site, context, (id) => {
      child = id;
      state.children.set(id, site.name);
    })
      .then((outcome) => {
        state.running.delete(site.name);
        if (child !== undefined) state.children.delete(child);
        endSite(state, outcome);
        countSiteEnd(state.name, outcome);
      })
      .catch((err: unknown) => {
        // The rollout's own cancellation: the condition it waits on throws it too.
        if (!isCancellation(err)) throw err;
      });
  }
  await condition(() => state.running.size === 0 || stuck(state));
}

/** Runs a fleet rollout to its end (see the module's comment). */
export async function fleetRollout(input: FleetRolloutInput): Promise<FleetRolloutResult> {
  const waves = wavesOf(input);
  const state = stateOf(input, waves);
  const byName = new Map(input.sites.map((s) => [s.name, s]));
  setHandler(fleetProgressQuery, () => fleetProgress(state));
  handleFleetControl(state);
  hearSiteGates(state);
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
    // Halted only while some site has not ended (once every site has, the rollout ends with its failures), or while a site's run is.
    if ((halting(state) && state.ended.size < state.sites) || state.halted.size > 0) {
      // A site's operator may resume (or abort) a halted site run at the site: with nothing else to decide, the rollout goes on.
      await gate(state, FleetGate.halted, haltReason(state), [ControlVerb.resume, ControlVerb.abort], () => state.halted.size === 0 && !halting(state));
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
  // Aborted with site runs halted: they were told to abort, and end as aborted runs do.
  if (state.running.size > 0) await condition(() => state.running.size === 0);
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
