/**
 * The facade's implementation of the activities' run starter
 * (`src/temporal/run-starter.ts`): the facade's own start, so a heal or a
 * join run is an ordinary numbered run with the same checks. The worker's
 * entry point hands it to the wiring, which gives it the worker's store and
 * design cache.
 */
import type { DesignCache } from '../../store/designs/design-cache.ts';
import type { Store } from '../../store/store.ts';
import type { RunStarter } from '../../temporal/run-starter.ts';
import { variableFromEnv } from '../../settings/setting.ts';
import { VARIABLES } from '../../settings/table.ts';
import { createRuns } from './runs.ts';

/** Where the runs start: the worker's task queue and namespace, and whether runs set search attributes (default: unless RELABEL_SEARCH_ATTRIBUTES=off). */
export interface RunStarterSettings {
  taskQueue: string;
  namespace: string;
  searchAttributes?: boolean;
}

/** A run starter over `store` and `designs`, on the activity's client. */
export function facadeRunStarter(settings: RunStarterSettings): (parts: { store: Store; designs: DesignCache }) => RunStarter {
  const searchAttributes = settings.searchAttributes ?? variableFromEnv(VARIABLES.searchAttributes);
  return ({ store, designs }) =>
    async (client, options) => {
      const runs = createRuns({ client, store, designs, taskQueue: settings.taskQueue, namespace: settings.namespace, searchAttributes });
      const { workflowId, runId, run } = await runs.start({
        targets: options.targets,
        revision: options.revision,
        action: options.action,
        ...(options.audit ? { audit: options.audit } : {}),
        ...(options.concurrency !== undefined ? { concurrency: options.concurrency } : {}),
        ...(options.release ? { release: true } : {}),
      });
      return { workflowId, runId, run };
    };
}
