/**
 * The activities of `detectDrift`: detect (bulk, see `detect-drift.ts`),
 * start a heal run, or a release run over the orphaned nodes, through the
 * injected run starter (the facade's own start, so each is a normal
 * numbered run), wait for it, record what healing and releasing did.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType, isFailureType } from '../core/plan/failure-types.ts';
import { DriftState, type DriftCounts } from '../core/plan/drift.ts';
import { RELEASE_ACTION } from '../core/plan/release.ts';
import type { RunAudit } from '../core/plan/run-audit.ts';
import type { Design } from '../core/site/validate-site.ts';
import type { NodeApi } from '../kube/nodes.ts';
import type { DesignCache } from '../store/designs/design-cache.ts';
import type { Store } from '../store/store.ts';
import { failureSummary } from '../temporal/failure.ts';
import type { RunStarter } from '../temporal/run-starter.ts';
import type { DetectDriftInput, DriftDetection, HealOutcome } from '../contracts/drift-messages.ts';
import type { UpdateLabelsResult } from '../contracts/messages.ts';
import { detectDrift, driftedNodes } from './detect-drift.ts';

/** The action name heal runs carry in their memo. */
export const HEAL_ACTION = 'heal_drift';

/** A heal run just started: the run and how many nodes it heals. */
export type StartedHeal = { workflowId: string; runId: string; run: number; nodes: number };

/** Where the worker's metrics learn what a detection found. */
export interface DriftTelemetry {
  /** A detection of `site` classified its nodes as `counts` say. */
  detected(site: string, counts: DriftCounts): void;
}

/** What the drift activities need. */
export interface DriftActivityDeps {
  nodes: NodeApi;
  store: Store;
  designs: DesignCache;
  validDesign(revision: number): Promise<Design>;
  startRun?: RunStarter;
  telemetry?: DriftTelemetry;
}

/** How often waiting for a heal run heartbeats. */
const HEARTBEAT_MS = 10_000;

/** Builds the drift activities. */
export function createDriftActivities(deps: DriftActivityDeps) {
  const { store } = deps;
  return {
    /**
     * Classifies every node of the latest committed revision's design and
     * records the report. Rejects (non-retryable) with NoCommittedRevision,
     * DocumentValidationFailed, or InvalidArgument when `site` is not the
     * site of that revision. Writes no node.
     */
    async detectDrift(input: DetectDriftInput & { key: string; workflowId: string }): Promise<DriftDetection> {
      const context = Context.current();
      context.heartbeat({ classified: 0 });
      const latest = await store.revisions.latest();
      if (!latest)
        throw ApplicationFailure.nonRetryable('no revision has been committed yet: nothing to compare the nodes with', FailureType.NoCommittedRevision);
      const design = await deps.validDesign(latest.id);
      const site = design.site;
      if (input.site !== undefined && input.site !== site) {
        throw ApplicationFailure.nonRetryable(
          `unknown site ${input.site}: the store's latest revision (${latest.id}) is of site ${site}`,
          FailureType.InvalidArgument,
        );
      }
      const found = await detectDrift(
        { nodes: deps.nodes, store, designs: deps.designs, progress: (classified) => context.heartbeat({ classified }) },
        { key: input.key, workflowId: input.workflowId, revision: latest.id, design },
      );
      deps.telemetry?.detected(found.site, found.counts);
      return found;
    },

    /**
     * Starts one update run over exactly the drifted nodes of `report` that
     * carry `revision`, against that revision. `{skipped}` instead when the
     * run cannot start for a reason of relabel's own (RunInProgress: a run
     * of the site is going), never retried. The started run is noted on the
     * report at once, so a retried attempt returns it rather than meeting
     * its own run as RunInProgress. The run records `audit` (absent only in
     * histories from before heal runs recorded one).
     */
    async startHealRun(input: { report: number; revision: number; audit?: RunAudit }): Promise<StartedHeal | { skipped: string }> {
      if (!deps.startRun) throw ApplicationFailure.nonRetryable('this worker cannot start heal runs (no run starter)', FailureType.InternalError);
      // An earlier attempt that started the run but whose completion was lost left it on the report.
      const earlier = (await store.drift.getReport(input.report)).heal as { starting?: StartedHeal & { revision: number } } | null;
      if (earlier?.starting?.revision === input.revision) return earlier.starting;
      const targets = await driftedNodes(store, input.report, input.revision);
      if (targets.length === 0) return { skipped: `no drifted node of revision ${input.revision} in drift report ${input.report}` };
      try {
        const started = {
          ...(await deps.startRun(Context.current().client, {
            targets,
            revision: input.revision,
            action: HEAL_ACTION,
            ...(input.audit ? { audit: input.audit } : {}),
          })),
          nodes: targets.length,
        };
        await store.drift.setHeal(input.report, { runs: [], starting: { ...started, revision: input.revision } });
        return started;
      } catch (err) {
        const type = (err as { type?: unknown }).type;
        if (isFailureType(type)) return { skipped: `${type}: ${(err as Error).message}` };
        throw err;
      }
    },

    /**
     * Starts one release run over exactly the orphaned nodes of `report`
     * (see `core/plan/release.ts`), at `revision` (the report's). As
     * {@link startHealRun}: `{skipped}` when relabel cannot start it
     * (RunInProgress) or there is no orphan, and a retried attempt returns
     * the run an earlier one started (noted on the report at once).
     */
    async startReleaseRun(input: { report: number; revision: number; audit: RunAudit }): Promise<StartedHeal | { skipped: string }> {
      if (!deps.startRun) throw ApplicationFailure.nonRetryable('this worker cannot start release runs (no run starter)', FailureType.InternalError);
      const noted = (await store.drift.getReport(input.report)).heal as (HealOutcome & { releasing?: StartedHeal }) | null;
      if (noted?.releasing) return noted.releasing;
      const targets = await driftedNodes(store, input.report, undefined, DriftState.orphaned);
      if (targets.length === 0) return { skipped: `no orphaned node in drift report ${input.report}` };
      try {
        const options = { targets, revision: input.revision, action: RELEASE_ACTION, audit: input.audit, release: true };
        const started = { ...(await deps.startRun(Context.current().client, options)), nodes: targets.length };
        await store.drift.setHeal(input.report, { ...(noted ?? { runs: [] }), releasing: started });
        return started;
      } catch (err) {
        const type = (err as { type?: unknown }).type;
        if (isFailureType(type)) return { skipped: `${type}: ${(err as Error).message}` };
        throw err;
      }
    },

    /** Waits for an update run to end (heartbeating) and returns how it ended. */
    async awaitRun(input: { workflowId: string; runId: string }): Promise<{ status: string; written?: number; failed?: number; message?: string }> {
      const context = Context.current();
      const beat = setInterval(() => context.heartbeat(), HEARTBEAT_MS);
      try {
        const result = (await context.client.workflow.getHandle(input.workflowId, input.runId).result()) as UpdateLabelsResult;
        return { status: result.status, written: result.counts.written, failed: result.counts.failure };
      } catch (err) {
        const { type, message } = failureSummary(err);
        return { status: 'rejected', message: `${type}: ${message.slice(0, 1000)}` };
      } finally {
        clearInterval(beat);
      }
    },

    /** Records what healing did on the report. */
    async recordHeal(input: { report: number; heal: HealOutcome }): Promise<void> {
      await store.drift.setHeal(input.report, input.heal);
    },
  };
}
