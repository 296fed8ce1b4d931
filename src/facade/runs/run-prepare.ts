/**
 * What a run is before it starts: the options it was asked with, what its
 * checks found, and its prepared start — a numbered run in the store with
 * its label plugin set pinned, and the input, memo and summaries its
 * `update-labels/<site>` workflow starts with. The facade starts it at
 * once; a fleet rollout starts it as its child on the site's task queue.
 */
import { randomUUID } from 'node:crypto';
import { runAudit, type RunAudit } from '../../core/plan/run-audit.ts';
import type { Rollout } from '../../core/plan/waves.ts';
import type { NodeFilterSet } from '../../core/site/node-filter.ts';
import type { RunRecord } from '../../store/runs/run-store.ts';
import type { Store } from '../../store/store.ts';
import { runWorkflowId, type UpdateLabelsInput } from '../../contracts/messages.ts';
import { taskMemo, type TaskRequestMemo } from './run-memo.ts';

/**
 * Targets chosen from the design of the revision a run applies, instead of
 * named: every node (the members of its node sets included), the nodes a
 * Drydock node filter selects (of those BaremetalNodes name), or the
 * members of the named node sets (found in the cluster when the run is
 * planned).
 */
export type TargetSelection = { all: true } | { filter: NodeFilterSet } | { nodeSets: string[] };

/** Options of a new update run. */
export interface StartOptions {
  /** Node names; leave undefined when `select` chooses the targets. */
  targets: unknown;
  /** Choose the targets from the design instead (not together with `targets`). */
  select?: TargetSelection;
  revision?: number;
  concurrency?: number;
  dryRun?: boolean;
  /** Go ahead even when the run removes more owned labels than the policy allows (the mass-removal brake). */
  allowMassRemoval?: boolean;
  /** Roll the run out in waves with gates between them, over the policy's rollout (checked: InvalidRequest). */
  rollout?: Rollout;
  continueAsNewAfter?: number;
  retryOf?: { workflowId: string; runId: string };
  /** Run number of the run retried, kept on the new run's record. */
  retryOfRun?: number;
  /** The action name the run was asked for (Shipyard's `update_labels` or `relabel_nodes`), kept in its memo. */
  action?: string;
  /** The action's context marker (a UUID, as Shipyard's client sends in X-Context-Marker); a fresh one when absent. */
  contextMarker?: string;
  /** Who starts the run and how: kept with the run in the store, in the workflow's input and in its memo. */
  audit?: RunAudit;
  /** The Drydock task request that starts the run, kept in its memo (the node filter only up to MAX_MEMO_FILTER bytes of JSON). */
  task?: TaskRequestMemo;
  /** Release the named targets instead of applying the revision to them (see `core/plan/release.ts`). */
  release?: boolean;
  /** Idempotency key of the run's record: a second prepare with it gets the first's run, not a second (a fleet's retried prepare). */
  key?: string;
}

/** What a run's checks found: its named targets, the node sets whose members it targets too, the revision and site. */
export type Preflight = { targets: string[]; nodeSets?: string[]; revision: number; site: string };

/** The first few targets, for the run's static details in the Temporal UI. */
function shownTargets(targets: readonly string[]): string {
  return targets.length <= 5 ? targets.join(', ') : `${targets.slice(0, 5).join(', ')} and ${targets.length - 5} more`;
}

/** The workflow input of run `run` started with `options`. */
function inputOf(run: number, checked: Preflight, options: StartOptions, audit: RunAudit | undefined, searchAttributes: boolean): UpdateLabelsInput {
  return {
    run,
    revision: checked.revision,
    dryRun: options.dryRun ?? false,
    ...(checked.nodeSets ? { nodeSets: checked.nodeSets } : {}),
    searchAttributes,
    ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
    ...(options.allowMassRemoval ? { allowMassRemoval: true } : {}),
    ...(options.rollout ? { rollout: options.rollout } : {}),
    ...(options.continueAsNewAfter !== undefined ? { continueAsNewAfter: options.continueAsNewAfter } : {}),
    ...(options.retryOf ? { retryOf: options.retryOf } : {}),
    ...(audit ? { audit } : {}),
    ...(options.release ? { release: true } : {}),
  };
}

/** A run prepared and not started: its record, what its checks found, and what its workflow starts with. */
export interface PreparedStart {
  checked: Preflight;
  record: RunRecord;
  workflowId: string;
  input: UpdateLabelsInput;
  memo: Record<string, unknown>;
  staticSummary: string;
  staticDetails: string;
}

/** Makes run `checked` of `options` in `store` (the record, its plugin set pinned) and what its workflow starts with. */
export async function prepareStart(store: Store, checked: Preflight, options: StartOptions, searchAttributes: boolean): Promise<PreparedStart> {
  const { targets, revision, site } = checked;
  const dryRun = options.dryRun ?? false;
  const workflowId = dryRun ? `${runWorkflowId(site)}/dry-run/${randomUUID().slice(0, 8)}` : runWorkflowId(site);
  const audit = options.audit && runAudit(options.audit.by, options.audit.via);
  const record = await store.runs.create({
    ...(options.key !== undefined ? { key: options.key } : {}),
    workflowId,
    revision,
    dryRun,
    targets,
    ...(checked.nodeSets ? { targetsAtPlan: true } : {}),
    ...(options.retryOfRun !== undefined ? { retryOf: options.retryOfRun } : {}),
    ...(audit ? { startedBy: audit.by, startedVia: audit.via } : {}),
    ...(options.contextMarker !== undefined ? { contextMarker: options.contextMarker } : {}),
  });
  // The label plugin set the run applies: a retry keeps its run's, a new run takes the site's newest (0: none).
  const retried = options.retryOfRun !== undefined ? await store.plugins.pinnedSet(options.retryOfRun) : null;
  await store.plugins.pinRun(record.id, retried ?? (await store.plugins.latestSet(site))?.id ?? 0);
  return {
    checked,
    record,
    workflowId,
    input: inputOf(record.id, checked, options, audit, searchAttributes),
    memo: {
      run: record.id,
      ...(record.actionId ? { actionId: record.actionId } : {}),
      ...(options.action ? { action: options.action } : {}),
      ...(audit ? { audit } : {}),
      ...(options.task ? { task: taskMemo(options.task) } : {}),
      ...(options.select && 'nodeSets' in options.select ? { nodeSets: checked.nodeSets } : {}),
    },
    staticSummary:
      `${dryRun ? 'Dry run: plan' : options.release ? 'Release' : 'Update'} labels of ${targets.length} node(s)` +
      `${checked.nodeSets ? ` and the members of node set(s) ${checked.nodeSets.join(', ')}` : ''} to revision ${revision}`,
    staticDetails:
      `update_labels on site **${site}**, revision ${revision}, run ${record.id}${dryRun ? ' (dry run: nothing written)' : ''}.\n\n` +
      `Targets: ${shownTargets(targets)}.` +
      (audit ? `\n\nStarted by **${audit.by}** via ${audit.via}.` : '') +
      (options.retryOf ? `\n\nRetry of ${options.retryOf.workflowId} run ${options.retryOf.runId}.` : ''),
  };
}
