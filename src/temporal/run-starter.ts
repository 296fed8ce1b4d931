/**
 * The port through which activities start an update run (a heal of drift,
 * a batch of joining nodes): defined here, below the activities and the
 * facade, so neither imports the other. The facade implements it
 * (`src/facade/runs/run-starter.ts`); the worker's entry point injects that
 * implementation into the worker's wiring.
 */
import type { Client } from '@temporalio/client';
import type { RunAudit } from '../core/plan/run-audit.ts';
import type { PreparedSiteRun, PrepareSiteRunInput, SettleSiteRunInput } from '../contracts/fleet-messages.ts';
import type { SiteAnswer, SiteQuestion } from '../contracts/fleet-survey.ts';

/** What a started run is: its workflow, its Temporal run and its number in the store. */
export interface StartedRun {
  workflowId: string;
  runId: string;
  run: number;
}

/** What an activity asks a run to do. */
export interface RunStartOptions {
  targets: string[];
  revision: number;
  action: string;
  audit?: RunAudit;
  concurrency?: number;
  /** Release the targets (take back what relabel owns on them) instead of applying the revision. */
  release?: boolean;
}

/**
 * Starts an update run as the facade does (preflight, a numbered run in the
 * store, the `update-labels/<site>` workflow) on `client` (the activity's);
 * throws an error carrying a failure `type` (RunInProgress when a run of the
 * site is going) when it cannot.
 */
export type RunStarter = (client: Client, options: RunStartOptions) => Promise<StartedRun>;

/**
 * The port through which a site's worker does the fleet's work for its own
 * site: prepares, for a fleet rollout, a run of every node of its site in
 * its own store (not started: the rollout starts it as its child), then
 * settles it; and answers a fleet survey's question (its plan, a dry run
 * computed here; its state). The facade implements it
 * (`src/facade/runs/run-starter.ts`), as it does the run starter. Each
 * refuses a site that is not the worker's own.
 */
export interface SiteRunPreparer {
  /** `key` is the same for every attempt of one prepare: a retry whose first attempt made the run gets that run, so none is left behind unstarted. */
  prepare(client: Client, request: PrepareSiteRunInput, key: string): Promise<PreparedSiteRun>;
  settle(client: Client, request: SettleSiteRunInput): Promise<void>;
  /** The site's answer; `alive` is called while a long answer (a plan) is computed. */
  answer(client: Client, question: SiteQuestion, alive: () => void): Promise<SiteAnswer>;
}
