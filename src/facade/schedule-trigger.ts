/**
 * `relabel schedule trigger`: takes a Temporal Schedule's action now and names
 * the workflow that trigger started, never one the Schedule's own interval
 * started in the same moments.
 *
 * The trigger carries a time of its own: PatchSchedule's
 * `TriggerImmediatelyRequest.scheduled_time` ("timestamp used for the identity
 * of the target workflow"), which the SDK's `ScheduleHandle.trigger` leaves
 * out. What this relies on, in temporalio/temporal's workflow-backed scheduler
 * (`service/worker/scheduler/workflow.go`, which runs every schedule on
 * 1.29 and 1.32; the CHASM scheduler is off by default):
 *  - a trigger's start takes `scheduled_time` as its nominal and actual time
 *    (`processPatch`: `addStart(t, t, …, manual)`; the frontend puts in its own
 *    clock only when the request has none), and the action it records has
 *    `schedule_time`, the SDK's `recentActions[].scheduledAt`, set to that
 *    actual time unchanged;
 *  - an action of the spec (interval, calendar, backfill) is recorded with its
 *    nominal time plus jitter: relabel's schedules have no jitter, nominal
 *    times are whole seconds, and the time sent here never is.
 * So the one action scheduled at exactly the time sent is this trigger's (only
 * another trigger of the same schedule sending the same millisecond could be
 * too). Not `takenAt`: that is when the start returned (`RealStartTime`), for a
 * trigger as for any action, never equal to `scheduledAt`. A server that
 * ignores `scheduled_time` (the CHASM scheduler, through 1.32 at least, uses
 * its clock) records no action at that time: the trigger is then reported as
 * not seen, never as another action's workflow.
 *
 * The workflow a trigger starts is named `<action's workflow ID>-<that time to
 * the second, RFC 3339>`, as an interval's are with their nominal time: the
 * second is chosen off the intervals' grids and unused by the schedule's recent
 * and running workflows, so its start does not fail as already started.
 */
import { randomUUID } from 'node:crypto';
import {
  encodeScheduleOverlapPolicy,
  isGrpcServiceError,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  type Client,
  type ScheduleDescription,
  type ScheduleExecutionResult,
  type ScheduleHandle,
} from '@temporalio/client';
import { msTimestamp } from '../temporal/timestamp.ts';

/** How long `triggerSchedule` waits for the schedule to report the started workflow. */
export const TRIGGER_WAIT_MS = 10_000;

/** How far ahead, in seconds, a trigger's time may move to find a second no workflow of the schedule has. */
const MAX_SHIFT_S = 60;

/** gRPC's NOT_FOUND status code. */
const GRPC_NOT_FOUND = 5;

/** The workflow ID a schedule's action of nominal time `second` (epoch seconds) gets, as the server forms it. */
export function actionWorkflowId(base: string, second: number): string {
  return `${base}-${new Date(second * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z')}`;
}

/**
 * The time to trigger `d` with, from the clock's `nowMs`: now's milliseconds
 * (1 for 0: never a whole second) in the first second from now on that is on
 * none of the schedule's interval grids (nominal seconds where second − offset
 * is a multiple of every, as the server computes them) and names none of its
 * recent and running workflows; now's second when none within a minute is
 * (an interval of a second).
 */
export function triggerTime(nowMs: number, d: Pick<ScheduleDescription, 'spec' | 'action' | 'info'>): Date {
  const now = Math.floor(nowMs / 1000);
  const ms = nowMs - now * 1000 || 1;
  const grids = (d.spec.intervals ?? []).map((iv) => ({
    every: Math.max(1, Math.floor(iv.every / 1000)),
    offset: Math.max(0, Math.floor((iv.offset ?? 0) / 1000)),
  }));
  const base = d.action.type === 'startWorkflow' ? d.action.workflowId : undefined;
  const used = new Set([...d.info.recentActions.map((a) => a.action), ...d.info.runningActions].map((a) => a.workflow.workflowId));
  const free = (s: number) => grids.every((g) => (s - g.offset) % g.every !== 0) && (base === undefined || !used.has(actionWorkflowId(base, s)));
  let second = now;
  for (let s = now; s < now + MAX_SHIFT_S; s++) {
    if (free(s)) {
      second = s;
      break;
    }
  }
  return new Date(second * 1000 + ms);
}

/** The action a trigger sent with time `at` started, among `actions`: the one scheduled at exactly `at`. */
export function triggeredAction(actions: readonly ScheduleExecutionResult[], at: Date): ScheduleExecutionResult | undefined {
  return actions.find((a) => a.scheduledAt.getTime() === at.getTime());
}

/**
 * Triggers the schedule of `h` with a time of its own ({@link triggerTime}),
 * its action taken whether or not one runs (the overlap policy ALLOW_ALL, as
 * `ScheduleHandle.trigger` sends it), and returns the workflow it started once
 * the schedule reports it (within `waitMs`), else undefined.
 * ScheduleNotFoundError when there is no such schedule.
 */
export async function triggerSchedule(
  client: Client,
  h: Pick<ScheduleHandle, 'scheduleId' | 'describe'>,
  waitMs = TRIGGER_WAIT_MS,
): Promise<{ workflowId: string; runId: string } | undefined> {
  const at = triggerTime(Date.now(), await h.describe());
  try {
    await client.schedule.workflowService.patchSchedule({
      namespace: client.schedule.options.namespace,
      identity: client.schedule.options.identity,
      requestId: randomUUID(),
      scheduleId: h.scheduleId,
      patch: {
        triggerImmediately: {
          overlapPolicy: encodeScheduleOverlapPolicy(ScheduleOverlapPolicy.ALLOW_ALL),
          scheduledTime: msTimestamp(at.getTime()),
        },
      },
    });
  } catch (err) {
    if (isGrpcServiceError(err) && Number(err.code) === GRPC_NOT_FOUND) throw new ScheduleNotFoundError(err.details || 'Schedule not found', h.scheduleId);
    throw err;
  }
  for (const deadline = Date.now() + waitMs; ;) {
    const found = triggeredAction((await h.describe()).info.recentActions, at);
    if (found) return { workflowId: found.action.workflow.workflowId, runId: found.action.workflow.firstExecutionRunId };
    if (Date.now() >= deadline) return undefined;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
