/**
 * The facade's implementation of the activities' run starter
 * (`src/temporal/run-starter.ts`): the facade's own start, so a heal or a
 * join run is an ordinary numbered run with the same checks. The worker's
 * entry point hands it to the wiring, which gives it the worker's store and
 * design cache.
 */
import type { DesignCache } from '../../store/designs/design-cache.ts';
import type { Store } from '../../store/store.ts';
import { runAudit, StartedVia } from '../../core/plan/run-audit.ts';
import { FailureType } from '../../core/plan/failure-types.ts';
import type { RunStarter, SiteRunPreparer } from '../../temporal/run-starter.ts';
import { RelabelError } from '../relabel-error.ts';
import { variableFromEnv } from '../../settings/setting.ts';
import { VARIABLES } from '../../settings/table.ts';
import { answerSite } from '../fleet-site-answers.ts';
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

/**
 * The site's side of the fleet over `store` and `designs`: its survey
 * answers (`fleet-site-answers.ts`), and the preparer of a run of every node of
 * the store's site (the members of its node sets included), at the
 * revision the fleet asks for (its latest committed one when none), in the
 * worker's store, not started. A request for another site is refused
 * (InvalidRequest) before anything is written: a site's worker acts for
 * its own site only.
 */
export function facadeSiteRuns(settings: RunStarterSettings): (parts: { store: Store; designs: DesignCache }) => SiteRunPreparer {
  const searchAttributes = settings.searchAttributes ?? variableFromEnv(VARIABLES.searchAttributes);
  return ({ store, designs }) => {
    const runsOf = (client: Parameters<SiteRunPreparer['prepare']>[0]) =>
      createRuns({ client, store, designs, taskQueue: settings.taskQueue, namespace: settings.namespace, searchAttributes });
    return {
      async prepare(client, request, key) {
        const runs = runsOf(client);
        const { revision, concurrency, allowMassRemoval, rollout } = request.run;
        const select = { all: true } as const;
        const checked = await runs.preflight({ targets: undefined, select, ...(revision !== undefined ? { revision } : {}) });
        if (checked.site !== request.site) {
          throw new RelabelError(
            FailureType.InvalidRequest,
            `this worker serves site ${checked.site}, not site ${request.site}: check the fleet registry's task queue for ${request.site}`,
          );
        }
        const prepared = await runs.prepare({
          targets: undefined,
          select,
          revision: checked.revision,
          action: 'update_labels',
          audit: runAudit(request.audit?.by ?? `fleet:${request.fleet}`, StartedVia.fleet),
          ...(concurrency !== undefined ? { concurrency } : {}),
          ...(allowMassRemoval ? { allowMassRemoval: true } : {}),
          ...(rollout ? { rollout } : {}),
          key,
        });
        return {
          run: prepared.record.id,
          workflowId: prepared.workflowId,
          input: prepared.input,
          memo: { ...prepared.memo, fleet: request.fleet },
          staticSummary: prepared.staticSummary,
          staticDetails: `${prepared.staticDetails}\n\nA site of fleet rollout ${request.fleet}.`,
        };
      },
      async settle(client, request) {
        await runsOf(client).settle(request.run, request.runId);
      },
      answer(client, question, alive) {
        return answerSite({ client, runs: runsOf(client), store, designs, taskQueue: settings.taskQueue, namespace: settings.namespace }, question, alive);
      },
    };
  };
}
