/** The docs/deploy.md alerts a site's state raises, judged at a given time. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { siteAlerts } from './site-alerts.ts';

const now = new Date('2026-12-01T12:00:00Z');
const minutesAgo = (m: number) => new Date(now.getTime() - m * 60_000);

describe('siteAlerts', () => {
  it("raises the run alerts for the last run's outcome within the window only", () => {
    assert.deepEqual(siteAlerts({ lastRun: { outcome: 'failure', endedAt: minutesAgo(10) } }, now), ['RelabelRunFailed']);
    assert.deepEqual(siteAlerts({ lastRun: { outcome: 'rejected', endedAt: minutesAgo(59) } }, now), ['RelabelRunRejected']);
    assert.deepEqual(siteAlerts({ lastRun: { outcome: 'partial_success' } }, now), ['RelabelRunPartiallyFailed'], 'no end time known: it counts');
    assert.deepEqual(siteAlerts({ lastRun: { outcome: 'failure', endedAt: minutesAgo(61) } }, now), [], 'older than the window');
    assert.deepEqual(siteAlerts({ lastRun: { outcome: 'success', endedAt: minutesAgo(1) } }, now), []);
    assert.deepEqual(siteAlerts({ lastRun: { outcome: null } }, now), [], 'a run still going raises nothing');
  });

  it('raises drift found for drifted nodes at a recent detection, and joins pending past their wait', () => {
    assert.deepEqual(siteAlerts({ drift: { drifted: 2, at: minutesAgo(5) } }, now), ['RelabelDriftFound']);
    assert.deepEqual(siteAlerts({ drift: { drifted: 0, at: minutesAgo(5) } }, now), []);
    assert.deepEqual(siteAlerts({ drift: { drifted: 2, at: minutesAgo(120) } }, now), []);
    assert.deepEqual(siteAlerts({ joins: { enabled: true, oldestPendingSeconds: 901 } }, now), ['RelabelJoinsPending']);
    assert.deepEqual(siteAlerts({ joins: { enabled: true, oldestPendingSeconds: 900 } }, now), []);
    assert.deepEqual(siteAlerts({ joins: { enabled: false, oldestPendingSeconds: 5000 } }, now), [], 'joins off: nothing watches, nothing pends');
    assert.deepEqual(siteAlerts({ drift: { drifted: 1, at: minutesAgo(5) } }, now, { windowSeconds: 60, joinPendingSeconds: 900 }), [], 'a window of its own');
  });
});
