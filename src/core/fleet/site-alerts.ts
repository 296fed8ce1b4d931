/**
 * The alerts of docs/deploy.md a site's state raises, judged from what the
 * site's worker reports of itself (its last run, its last drift detection,
 * its join watcher) rather than from Prometheus series, so a fleet view
 * shows them for every site whether or not the site's metrics are scraped.
 * Pure.
 */

/** The alerts a fleet view judges from a site's state (docs/deploy.md, "Alerts"). */
export const SiteAlert = {
  RelabelRunFailed: 'RelabelRunFailed',
  RelabelRunRejected: 'RelabelRunRejected',
  RelabelRunPartiallyFailed: 'RelabelRunPartiallyFailed',
  RelabelDriftFound: 'RelabelDriftFound',
  RelabelJoinsPending: 'RelabelJoinsPending',
} as const;
/** One of the {@link SiteAlert} names. */
export type SiteAlert = (typeof SiteAlert)[keyof typeof SiteAlert];

/** What the alerts read of a site's state. */
export interface AlertInput {
  lastRun?: { outcome: string | null; endedAt?: Date };
  drift?: { drifted: number; at: Date };
  joins?: { enabled: boolean; oldestPendingSeconds?: number };
}

/** How far back the alerts look, and how long they let drift and joins wait: the chart's defaults. */
export interface AlertWindows {
  /** A run or a detection counts within this many seconds (the chart's `window`, 1h). */
  windowSeconds: number;
  /** Joining nodes may wait this long before the alert (the chart's `joinPendingFor`, 15m). */
  joinPendingSeconds: number;
}

/** The chart's defaults. */
export const DEFAULT_ALERT_WINDOWS: AlertWindows = { windowSeconds: 3600, joinPendingSeconds: 900 };

/**
 * The alerts `state` raises at `now`: the last run's outcome when it ended
 * within the window (no end time known: it counts), drifted nodes at the
 * last detection within the window, and joining nodes waiting longer than
 * allowed. In the order of {@link SiteAlert}.
 */
export function siteAlerts(state: AlertInput, now: Date, windows: AlertWindows = DEFAULT_ALERT_WINDOWS): SiteAlert[] {
  const within = (at: Date | undefined) => at === undefined || now.getTime() - at.getTime() <= windows.windowSeconds * 1000;
  const alerts: SiteAlert[] = [];
  const run = state.lastRun;
  if (run && within(run.endedAt)) {
    if (run.outcome === 'failure') alerts.push(SiteAlert.RelabelRunFailed);
    if (run.outcome === 'rejected') alerts.push(SiteAlert.RelabelRunRejected);
    if (run.outcome === 'partial_success') alerts.push(SiteAlert.RelabelRunPartiallyFailed);
  }
  if (state.drift && state.drift.drifted > 0 && within(state.drift.at)) alerts.push(SiteAlert.RelabelDriftFound);
  if (state.joins?.enabled && (state.joins.oldestPendingSeconds ?? 0) > windows.joinPendingSeconds) alerts.push(SiteAlert.RelabelJoinsPending);
  return alerts;
}
