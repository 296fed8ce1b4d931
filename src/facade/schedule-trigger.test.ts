import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ScheduleDescription, ScheduleExecutionResult } from '@temporalio/client';
import { actionWorkflowId, triggeredAction, triggerTime } from './schedule-trigger.ts';

const BASE = 'relabel-drift/atl';
const at = (iso: string) => new Date(iso);
/** An action as `describe()` lists it: scheduled at `scheduled`, its workflow named by its nominal second. */
const action = (scheduled: string, runId: string, taken = scheduled): ScheduleExecutionResult => ({
  scheduledAt: at(scheduled),
  takenAt: at(taken),
  action: {
    type: 'startWorkflow',
    workflow: { workflowId: actionWorkflowId(BASE, Math.floor(at(scheduled).getTime() / 1000)), firstExecutionRunId: runId },
  },
});
/** What `triggerTime` reads of a described schedule: its intervals, its action's workflow ID, its recent and running actions. */
const described = (intervals: { every: number; offset?: number }[], recent: ScheduleExecutionResult[] = []) =>
  ({
    spec: { intervals: intervals.map((iv) => ({ offset: 0, ...iv })) },
    action: { type: 'startWorkflow', workflowId: BASE },
    info: { recentActions: recent, runningActions: recent.map((a) => a.action) },
  }) as unknown as Pick<ScheduleDescription, 'spec' | 'action' | 'info'>;

describe('which action a schedule trigger started', () => {
  it('is the one scheduled at the trigger’s time, though an interval action landed first', () => {
    const seen = action('2025-05-01T10:00:00Z', 'run-a', '2025-05-01T10:00:00.012Z');
    const interval = action('2025-05-01T10:00:02Z', 'run-b', '2025-05-01T10:00:02.020Z');
    const trigger = action('2025-05-01T10:00:03.417Z', 'run-c', '2025-05-01T10:00:03.431Z');
    const recent = [seen, interval, trigger];
    // Taken after the interval's: the first action not seen before the trigger (the old rule) is the interval's.
    assert.equal(
      recent.find((a) => a.action.workflow.firstExecutionRunId !== 'run-a'),
      interval,
    );
    assert.equal(triggeredAction(recent, at('2025-05-01T10:00:03.417Z')), trigger);
    assert.equal(triggeredAction([trigger, interval], at('2025-05-01T10:00:03.417Z')), trigger, 'whatever the order');
  });

  it('is none until the schedule records it, nor one scheduled in the same second', () => {
    assert.equal(triggeredAction([action('2025-05-01T10:00:02Z', 'run-b')], at('2025-05-01T10:00:03.417Z')), undefined);
    assert.equal(triggeredAction([action('2025-05-01T10:00:03.416Z', 'run-x')], at('2025-05-01T10:00:03.417Z')), undefined);
  });

  it('names workflows as the server does: the action’s workflow ID and the nominal second in RFC 3339', () => {
    assert.equal(actionWorkflowId(BASE, Date.UTC(2025, 4, 1, 10, 0, 3) / 1000), 'relabel-drift/atl-2025-05-01T10:00:03Z');
  });
});

describe('the time a trigger is sent with', () => {
  const now = Date.parse('2025-05-01T10:00:00.417Z');

  it('keeps now’s milliseconds in a second off the interval’s grid', () => {
    assert.equal(triggerTime(now, described([{ every: 2000 }])).toISOString(), '2025-05-01T10:00:01.417Z');
    assert.equal(triggerTime(now + 1000, described([{ every: 2000 }])).toISOString(), '2025-05-01T10:00:01.417Z');
    assert.equal(triggerTime(now, described([{ every: 600_000 }])).toISOString(), '2025-05-01T10:00:01.417Z');
    assert.equal(triggerTime(now + 5000, described([{ every: 600_000 }])).toISOString(), '2025-05-01T10:00:05.417Z');
    assert.equal(triggerTime(now, described([])).toISOString(), '2025-05-01T10:00:00.417Z', 'no interval: now');
  });

  it('reads the grid with its offset, and every interval of the spec', () => {
    assert.equal(triggerTime(now, described([{ every: 600_000, offset: 1000 }])).toISOString(), '2025-05-01T10:00:00.417Z');
    assert.equal(triggerTime(now + 1000, described([{ every: 600_000, offset: 1000 }])).toISOString(), '2025-05-01T10:00:02.417Z');
    assert.equal(triggerTime(now, described([{ every: 2000 }, { every: 3000, offset: 1000 }])).toISOString(), '2025-05-01T10:00:03.417Z');
  });

  it('is never a whole second: no spec’s action has its time', () => {
    assert.equal(triggerTime(Date.parse('2025-05-01T10:00:01Z'), described([{ every: 2000 }])).toISOString(), '2025-05-01T10:00:01.001Z');
  });

  it('skips a second one of the schedule’s recent or running workflows is named by', () => {
    const recent = [action('2025-05-01T10:00:01.200Z', 'run-t'), action('2025-05-01T10:00:03.900Z', 'run-u')];
    assert.equal(triggerTime(now, described([{ every: 2000 }], recent)).toISOString(), '2025-05-01T10:00:05.417Z');
    assert.equal(triggerTime(now, described([], recent)).toISOString(), '2025-05-01T10:00:00.417Z');
  });

  it('is in now’s second when every second is on the grid', () => {
    assert.equal(triggerTime(now, described([{ every: 1000 }])).toISOString(), '2025-05-01T10:00:00.417Z');
  });
});
