/**
 * Figures read from a run's Temporal history: executions in its
 * continue-as-new chain, events, children started, and the largest payload
 * anywhere in the parent's histories and a sample of its children's; what
 * the parent's history holds per child, and what a child's holds (events,
 * bytes, the payloads of its input, its result and its activities).
 */
import type { Client } from '@temporalio/client';
import proto, { type temporal } from '@temporalio/proto';

const { History } = proto.temporal.api.history.v1;
const { EventType } = proto.temporal.api.enums.v1;

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
  /** Events of the longest execution of the chain (Temporal warns past 10,240). */
  largestExecutionEvents: number;
  /** When the chain's last event was recorded (epoch ms; NaN without one). */
  lastEventAt: number;
  /** Seconds from the run's start until its bulk plan started, and the plan's own seconds (first execution). */
  beforePlan?: number;
  plan?: number;
  /** Encoded bytes of the parent's histories. */
  historyBytes: number;
  /** Events by type in the parent's histories (`EVENT_TYPE_` left out). */
  eventTypes: Record<string, number>;
  /** Averages over the children sampled: events, encoded history bytes, payload bytes of input, result, and the rest (activities, markers). */
  child?: { sampled: number; events: number; historyBytes: number; inputBytes: number; resultBytes: number; otherPayloadBytes: number };
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

/** The summed `data` bytes of every payload inside `value`. */
function payloadBytes(value: unknown): number {
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return 0;
  const record = value as Record<string, unknown>;
  if (record.data instanceof Uint8Array && record.metadata !== undefined) return record.data.byteLength;
  return Object.values(record).reduce<number>((sum, v) => sum + payloadBytes(v), 0);
}

/** The encoded size of `history`, as the server stores it. */
const encodedBytes = (history: temporal.api.history.v1.IHistory) => History.encode(history).finish().byteLength;

/** The type of `e` without its `EVENT_TYPE_` prefix. */
const typeOf = (e: Event) => (EventType[e.eventType ?? 0] ?? '?').replace(/^EVENT_TYPE_/, '');

/** What the histories of `childIds` hold, averaged; also folds their largest payload into `figures`. */
async function childFigures(client: Client, childIds: string[], figures: HistoryFigures): Promise<{ events: number; child: HistoryFigures['child'] }> {
  const sum = { events: 0, historyBytes: 0, inputBytes: 0, resultBytes: 0, otherPayloadBytes: 0 };
  for (const id of childIds) {
    const history = await client.workflow.getHandle(id).fetchHistory();
    const events = history.events ?? [];
    sum.events += events.length;
    sum.historyBytes += encodedBytes(history);
    for (const e of events) {
      figures.largestPayload = largestPayload(e, figures.largestPayload);
      const [input, result] = [e.workflowExecutionStartedEventAttributes?.input, e.workflowExecutionCompletedEventAttributes?.result];
      sum.inputBytes += payloadBytes(input);
      sum.resultBytes += payloadBytes(result);
      if (!input && !result) sum.otherPayloadBytes += payloadBytes(e);
    }
  }
  if (childIds.length === 0) return { events: 0, child: undefined };
  const avg = (n: number) => Math.round(n / childIds.length);
  const child = { sampled: childIds.length, ...Object.fromEntries(Object.entries(sum).map(([k, n]) => [k, avg(n)])) };
  return { events: sum.events, child: child as HistoryFigures['child'] };
}

/** Temporal's limits every history must stay within: events of one execution, and bytes of one payload. */
export const HISTORY_LIMITS = { events: 10_240, payloadBytes: 512 * 1024 } as const;

/** What of a run's history is over {@link HISTORY_LIMITS}, in words (none: within them). */
export function overHistoryLimits(h: Pick<HistoryFigures, 'largestExecutionEvents' | 'largestPayload'>): string[] {
  return [
    h.largestExecutionEvents > HISTORY_LIMITS.events &&
      `an execution of ${h.largestExecutionEvents} events, past Temporal's warning at ${HISTORY_LIMITS.events}`,
    h.largestPayload > HISTORY_LIMITS.payloadBytes && `a payload of ${h.largestPayload} bytes`,
  ].filter((p): p is string => typeof p === 'string');
}

/** Walks the run's continue-as-new chain from its first execution. */
export async function historyFigures(client: Client, workflowId: string, firstRunId: string, sampleChildren = 5): Promise<HistoryFigures> {
  const figures: HistoryFigures = {
    executions: 0,
    events: 0,
    allEvents: 0,
    children: 0,
    largestPayload: 0,
    largestExecutionEvents: 0,
    lastEventAt: Number.NaN,
    historyBytes: 0,
    eventTypes: {},
  };
  const childIds: string[] = [];
  for (let runId: string | undefined = firstRunId; runId;) {
    const history: temporal.api.history.v1.IHistory = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const events: Event[] = history.events ?? [];
    if (figures.executions === 0) Object.assign(figures, planTimes(events));
    figures.executions++;
    figures.events += events.length;
    figures.largestExecutionEvents = Math.max(figures.largestExecutionEvents, events.length);
    const last = events.at(-1);
    figures.lastEventAt = Number(last?.eventTime?.seconds ?? Number.NaN) * 1000 + (last?.eventTime?.nanos ?? 0) / 1e6;
    figures.historyBytes += encodedBytes(history);
    for (const e of events) {
      figures.largestPayload = largestPayload(e, figures.largestPayload);
      figures.eventTypes[typeOf(e)] = (figures.eventTypes[typeOf(e)] ?? 0) + 1;
      const child = e.startChildWorkflowExecutionInitiatedEventAttributes;
      if (child) {
        figures.children++;
        if (childIds.length < sampleChildren && child.workflowId) childIds.push(child.workflowId);
      }
    }
    runId = last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  const { events: childEvents, child } = await childFigures(client, childIds, figures);
  if (child) figures.child = child;
  figures.allEvents = figures.events + (childIds.length > 0 ? (childEvents / childIds.length) * figures.children : 0);
  return figures;
}

/**
 * The row figures of what a history holds per child: the parent's events
 * and encoded bytes per child, its most frequent event types per child, and
 * the sampled children's averages. Nothing when the run started no child.
 */
export function perChildFigures(h: HistoryFigures, top = 8): Record<string, unknown> {
  if (h.children === 0) return {};
  const per = (n: number) => +(n / h.children).toFixed(2);
  const types = Object.entries(h.eventTypes)
    .sort((a, b) => b[1] - a[1])
    .slice(0, top);
  return {
    parentEventsPerChild: per(h.events),
    parentBytesPerChild: Math.round(h.historyBytes / h.children),
    parentEventTypesPerChild: Object.fromEntries(types.map(([t, n]) => [t, per(n)])),
    ...(h.child ? { child: h.child } : {}),
  };
}
