/**
 * The Events relabel records about the nodes a run writes or fails on,
 * bounded so that a 5,000-node run cannot flood the API server: at most
 * {@link MAX_EVENTS_PER_RUN} Events of each reason per run in one worker
 * process, the rest only counted and logged once. Recording never waits
 * for the API server and never fails: an Event that cannot be created is
 * logged and counted, and the node's outcome stays what it was.
 */
import type { LabelPlan } from '../core/plan/label-plan.ts';
import { clip } from '../core/plan/text.ts';
import { NodeEventReason, type EventApi, type NodeEvent } from '../kube/events.ts';

/**
 * Most Events of one reason (LabelsApplied, RelabelFailed) one worker
 * process records for one run. Counted in the process: with several
 * workers a run gets at most this many per worker.
 */
export const MAX_EVENTS_PER_RUN = 100;

/** Runs whose Event counts a process keeps (the oldest is forgotten first). */
const RUNS_KEPT = 1000;

/** Keys a note names before `…`. */
const NOTE_KEYS = 8;

/** What happened to an Event: created, could not be created, or not sent (over the run's cap). */
export const EventResult = { created: 'created', failed: 'failed', suppressed: 'suppressed' } as const;
/** One of the {@link EventResult} strings. */
export type EventResult = (typeof EventResult)[keyof typeof EventResult];

/** Where recording reports. Both must not throw. */
export interface NodeEventsOptions {
  /** Told of every Event: its reason and what happened to it. */
  count?(reason: NodeEventReason, result: EventResult): void;
  /** Told when an Event could not be created, and when a run first reaches its cap. */
  warn?(message: string, fields: Record<string, unknown>): void;
  /** Per-run cap (tests); {@link MAX_EVENTS_PER_RUN} when absent. */
  maxPerRun?: number;
}

/** A node written for a run. */
export interface AppliedNode {
  run: number;
  revision: number;
  node: string;
  uid?: string;
  plan: LabelPlan;
}

/** A node a run failed on. */
export interface FailedNode {
  run: number;
  revision: number;
  node: string;
  uid?: string;
  error: { type: string; message: string };
}

/** Records Events about a run's nodes, without waiting (see the module). */
export interface NodeEvents {
  /** A LabelsApplied Event for a node written by `run`. */
  applied(node: AppliedNode): void;
  /** A RelabelFailed Event for a node `run` failed on; call only for a node that exists in the cluster. */
  failed(node: FailedNode): void;
  /** Resolves once every Event sent so far has been answered (tests, shutdown). */
  idle(): Promise<void>;
}

/** Up to {@link NOTE_KEYS} keys, then `…`. */
function keyList(keys: readonly string[]): string {
  return keys.length <= NOTE_KEYS ? keys.join(', ') : `${keys.slice(0, NOTE_KEYS).join(', ')}, …`;
}

/** The note of a LabelsApplied Event: run, revision, what changed and which keys. */
export function appliedNote(e: AppliedNode): string {
  const { plan } = e;
  const setKeys = Object.keys(plan.set);
  const parts = [`set ${setKeys.length}`, `removed ${plan.remove.length}`];
  if (plan.adopt.length > 0) parts.push(`adopted ${plan.adopt.length}`);
  const annotations = plan.annotations ? Object.keys(plan.annotations.set).length + plan.annotations.remove.length : 0;
  if (annotations > 0) parts.push(`${annotations} annotation(s) changed`);
  const taints = plan.taints?.changed ? plan.taints.add.length + plan.taints.remove.length : 0;
  if (taints > 0) parts.push(`${taints} taint(s) changed`);
  const keys = [...setKeys, ...plan.remove];
  return `run ${e.run} applied revision ${e.revision}: ${parts.join(', ')}${keys.length > 0 ? ` (${keyList(keys)})` : ''}`;
}

/** The note of a RelabelFailed Event: run, revision, failure type and message. */
export function failedNote(e: FailedNode): string {
  return `run ${e.run} could not apply revision ${e.revision}: ${e.error.type}: ${clip(e.error.message, 800)}`;
}

/** Records Events through `api` (see the module). */
export function createNodeEvents(api: EventApi, options: NodeEventsOptions = {}): NodeEvents {
  const max = options.maxPerRun ?? MAX_EVENTS_PER_RUN;
  const sent = new Map<number, Record<NodeEventReason, number>>();
  const pending = new Set<Promise<void>>();

  /** Takes one of the run's Events of `reason`; false (and a warning the first time) once the cap is reached. */
  const take = (run: number, reason: NodeEventReason): boolean => {
    let counts = sent.get(run);
    if (!counts) {
      counts = { [NodeEventReason.labelsApplied]: 0, [NodeEventReason.relabelFailed]: 0 };
      sent.set(run, counts);
      if (sent.size > RUNS_KEPT) sent.delete(sent.keys().next().value as number);
    }
    counts[reason]++;
    if (counts[reason] === max + 1) options.warn?.(`run ${run} reached ${max} ${reason} Events in this worker; no more are recorded for it`, { run, reason });
    return counts[reason] <= max;
  };

  const record = (run: number, event: NodeEvent): void => {
    if (!take(run, event.reason)) {
      options.count?.(event.reason, EventResult.suppressed);
      return;
    }
    const request = api
      .createNodeEvent(event)
      .then(
        () => options.count?.(event.reason, EventResult.created),
        (err: unknown) => {
          options.count?.(event.reason, EventResult.failed);
          options.warn?.('could not record an Event', {
            run,
            node: event.node,
            reason: event.reason,
            error: clip(err instanceof Error ? err.message : String(err), 300),
          });
        },
      )
      .catch(() => undefined);
    pending.add(request);
    void request.finally(() => pending.delete(request));
  };

  return {
    applied(e) {
      record(e.run, { node: e.node, ...(e.uid ? { uid: e.uid } : {}), reason: NodeEventReason.labelsApplied, note: appliedNote(e) });
    },
    failed(e) {
      record(e.run, { node: e.node, ...(e.uid ? { uid: e.uid } : {}), reason: NodeEventReason.relabelFailed, note: failedNote(e) });
    },
    async idle() {
      while (pending.size > 0) await Promise.all([...pending]);
    },
  };
}
