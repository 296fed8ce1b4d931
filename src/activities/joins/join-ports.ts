/**
 * What a join watcher is given and reports to: its input (the workflow's
 * settings), the worker's metrics and the worker's readiness. Apart from
 * the watcher (join-watcher.ts) and its activity (join-watch.ts), so each
 * imports these and neither imports the other both ways.
 */
import type { WatchJoinsInput } from '../../contracts/join-messages.ts';

/** What the join watcher counts and measures (the worker's metrics); every method must not throw. */
export interface JoinTelemetry {
  /** A node handed to a join run was seen labelled, `seconds` after it was first seen joining. */
  labelled(site: string, seconds: number): void;
  /** Nodes waiting for a join run now. */
  pending(site: string, count: number): void;
  /** A joining node the design does not manage (no BaremetalNode names it, no node set matches it), left alone. */
  unmanaged(site: string): void;
  /** A join run ended with `nodes` nodes failed (a node two node sets match among them). */
  failed(site: string, nodes: number): void;
  /** A join run started, with `nodes` nodes. */
  run(site: string, nodes: number): void;
}

/** Where the worker's readiness learns whether its join watchers can watch. */
export interface JoinHealth {
  /** The watcher of `site` watches (`error` undefined) or cannot, saying why. */
  report(site: string, error: string | undefined): void;
  /** The watcher of `site` stopped in this process. */
  forget(site: string): void;
}

/** Input of the watching activity: the workflow's settings it acts on (defaults filled in there or here). */
export type WatchNodeJoinsInput = Pick<WatchJoinsInput, 'site' | 'enabledBy' | 'maxBatch' | 'batchDelayMs' | 'concurrency' | 'watchSeconds'>;
