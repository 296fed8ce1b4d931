/**
 * The one facade over update runs shared by the CLI and the HTTP API,
 * assembled from its halves: start (`run-start.ts`: the same checks the
 * workflow makes, so bad requests fail before anything starts, and retry),
 * read (`run-reads.ts`: status, wait, list, rows), control
 * (`run-control.ts`: pause, unpause, stop) and the Shipyard view of an
 * action (`run-actions.ts`). Entry points stay thin.
 */
import type { Client } from '@temporalio/client';
import type { DesignCache } from '../../store/designs/design-cache.ts';
import type { Store } from '../../store/store.ts';
import { createRunActions, type RunActions } from './run-actions.ts';
import { createRunControl, type RunControls } from './run-control.ts';
import { createRunReads, type RunReads } from './run-reads.ts';
import { createRunStarts, type RunStarts } from './run-start.ts';

export { MAX_NODE_PAGE, nodeOutcome, type NodeOutcome, type NodePage } from './run-results.ts';
export type { TaskRequestMemo } from './run-memo.ts';
export type { NodeQuery, RunListFilter, RunListing, RunOrigin, RunRef, RunStatusReport } from './run-reads.ts';
export type { RetryOptions, StartedRun, StartOptions, TargetSelection } from './run-start.ts';

/** What the facade needs. */
export interface RunsDeps {
  client: Client;
  store: Store;
  taskQueue: string;
  namespace: string;
  /** Base URL of the Temporal Web UI, for links. */
  uiUrl?: string;
  /** Whether the server has relabel's search attributes registered. */
  searchAttributes?: boolean;
  /** Validated designs by revision, shared by the facade's parts (revisions are immutable: each is validated once). */
  designs: DesignCache;
}

/** The runs facade: start, read, control and the Shipyard view of update runs. */
export interface Runs extends RunStarts, RunReads, RunControls, RunActions {}

/** Builds the facade. */
export function createRuns(deps: RunsDeps): Runs {
  const { client, store, designs } = deps;
  const reads = createRunReads({ client, store, designs, taskQueue: deps.taskQueue, namespace: deps.namespace, uiUrl: deps.uiUrl });
  return {
    ...reads,
    ...createRunStarts({ client, store, designs, taskQueue: deps.taskQueue, searchAttributes: deps.searchAttributes, reads }),
    ...createRunControl({ client, store, reads }),
    ...createRunActions({ client, store, namespace: deps.namespace }),
  };
}
