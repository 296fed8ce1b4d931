/**
 * Figures read from a run's Temporal history: executions in its
 * continue-as-new chain, events, children started, and the largest payload
 * anywhere in the parent's histories and a sample of its children's.
 */
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';

/** What the bench reports of a run's histories. */
export interface HistoryFigures {
  executions: number;
  /** Events of the parent's executions. */
  events: number;
  /** Events of the parent's executions plus (estimated from a sample) its children's. */
  allEvents: number;
  children: number;
  /** Bytes of the largest single payload seen. */
  largestPayload: number;
  /** Seconds from the run's start until its bulk plan started, and the plan's own seconds (first execution). */
  beforePlan?: number;
  plan?: number;
}

type Event = temporal.api.history.v1.IHistoryEvent;

const seconds = (e: Event | undefined) => (e?.eventTime ? Number(e.eventTime.seconds ?? 0) + (e.eventTime.nanos ?? 0) / 1e9 : Number.NaN);

/** When the first execution's `planRun` activity started and how long it took, from its events. */
function planTimes(events: Event[]): Pick<HistoryFigures, 'beforePlan' | 'plan'> {
  const scheduled = events.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'planRun');
  if (!scheduled) return {};
  const id = String(scheduled.eventId);
  const started = events.find((e) => String(e.activityTaskStartedEventAttributes?.scheduledEventId) === id);
  const completed = events.find((e) => String(e.activityTaskCompletedEventAttributes?.scheduledEventId) === id);
  const round = (s: number) => +s.toFixed(2);
  return { beforePlan: round(seconds(started) - seconds(events[0])), plan: round(seconds(completed) - seconds(started)) };
}

/** The largest `data` of any payload inside `value` (a history event as decoded). */
function largestPayload(value: unknown, seen = 0): number {
  if (value === null || typeof value !== 'object') return seen;
  if (value instanceof Uint8Array) return seen;
  const record = value as Record<string, unknown>;
  if (record.data instanceof Uint8Array && record.metadata !== undefined) return Math.max(seen, record.data.byteLength);
  let max = seen;
  for (const v of Object.values(record)) max = largestPayload(v, max);
  return max;
}

/** Walks the run's continue-as-new chain from its first execution. */
export async function historyFigures(client: Client, workflowId: string, firstRunId: string, sampleChildren = 5): Promise<HistoryFigures> {
  const figures: HistoryFigures = { executions: 0, events: 0, allEvents: 0, children: 0, largestPayload: 0 };
  const childIds: string[] = [];
  for (let runId: string | undefined = firstRunId; runId;) {
    const history: temporal.api.history.v1.IHistory = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const events: Event[] = history.events ?? [];
    if (figures.executions === 0) Object.assign(figures, planTimes(events));
    figures.executions++;
    figures.events += events.length;
    for (const e of events) {
      figures.largestPayload = largestPayload(e, figures.largestPayload);
      const child = e.startChildWorkflowExecutionInitiatedEventAttributes;
      if (child) {
        figures.children++;
        if (childIds.length < sampleChildren && child.workflowId) childIds.push(child.workflowId);
      }
    }
    runId = events.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  let childEvents = 0;
  for (const id of childIds) {
    const events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
    childEvents += events.length;
    for (const e of events) figures.largestPayload = largestPayload(e, figures.largestPayload);
  }
  figures.allEvents = figures.events + (childIds.length > 0 ? (childEvents / childIds.length) * figures.children : 0);
  return figures;
}
