/**
 * What the worker's readiness knows of the join watchers running in it: a
 * watcher that has not been able to watch for a while (the API server
 * unreachable, its watch refused) makes the worker not ready, naming the
 * site and why, so an orchestrator moves it; a short blip does not.
 */
import type { JoinHealth } from '../activities/joins/join-ports.ts';

/** How long a watcher may fail before the worker is not ready. */
export const JOIN_UNHEALTHY_AFTER_MS = 60_000;

/** A {@link JoinHealth} that remembers each site's first failure since it last watched. */
export interface JoinHealthBoard extends JoinHealth {
  /** Undefined when every watcher here watches (or fails for less than {@link JOIN_UNHEALTHY_AFTER_MS}); else why not, naming the sites. */
  problem(now?: number): string | undefined;
  /** Sites watched in this process. */
  sites(): string[];
}

/** A new, empty board. */
export function joinHealthBoard(): JoinHealthBoard {
  const failing = new Map<string, { since: number; error: string } | undefined>();
  return {
    report(site, error) {
      if (error === undefined) failing.set(site, undefined);
      else failing.set(site, { since: failing.get(site)?.since ?? Date.now(), error });
    },
    forget(site) {
      failing.delete(site);
    },
    problem(now = Date.now()) {
      const bad = [...failing].filter(([, f]) => f !== undefined && now - f.since >= JOIN_UNHEALTHY_AFTER_MS);
      if (bad.length === 0) return undefined;
      return bad.map(([site, f]) => `join watcher of site ${site} cannot watch for ${Math.round((now - (f?.since ?? now)) / 1000)} s: ${f?.error}`).join('; ');
    },
    sites: () => [...failing.keys()],
  };
}
