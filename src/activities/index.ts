/**
 * relabel's activities: the workflows' only way to the revision store and
 * the Kubernetes API. Built by {@link createActivities} from injected
 * clients; workflows import the resulting type only. This module only
 * wires: each group of activities lives in its own module (runs, node
 * apply, plugins, drift, joins in `joins/`).
 */
import type { Design } from '../core/site/validate-site.ts';
import type { NodeInformer } from '../kube/node-informer.ts';
import type { NodeApi } from '../kube/nodes.ts';
import type { WorkloadApi } from '../kube/workloads.ts';
import { createDesignCache, type DesignCache } from '../store/designs/design-cache.ts';
import type { Store } from '../store/store.ts';
import { createApplyNodeActivities } from './apply-node.ts';
import { documentValidationFailure } from './document-failure.ts';
import { createDriftActivities, type DriftTelemetry } from './drift-activities.ts';
import type { RunStarter, SiteRunPreparer } from '../temporal/run-starter.ts';
import { createFleetSiteActivities } from './fleet-site-activities.ts';
import { createJoinActivities } from './joins/join-watch.ts';
import type { JoinHealth, JoinTelemetry } from './joins/join-ports.ts';
import type { NodeEvents } from './node-events.ts';
import { createPluginActivities, type PluginTelemetry } from './plugin-activities.ts';
import { createResultWriter, type ResultWriter } from './result-writer.ts';
import { createRunActivities } from './run-activities.ts';
import { createRunPluginLabels } from './run-plugin-labels.ts';

export type { JoinHealth, JoinTelemetry } from './joins/join-ports.ts';

/** Injected clients. */
export interface ActivityDeps {
  nodes: NodeApi;
  store: Store;
  designs?: DesignCache;
  results?: ResultWriter;
  /** Starts heal runs for drift detection (the facade's start); without it, healing fails. */
  startRun?: RunStarter;
  /** Prepares this site's runs for fleet rollouts (the facade's); without it, the fleet's site activities refuse. */
  siteRuns?: SiteRunPreparer;
  /** Kubernetes Events about the nodes runs write or fail on; none recorded when absent. */
  events?: NodeEvents;
  /** Read-only lists of DaemonSets, pods and budgets; dry runs weigh their workload impact with them (none when absent). */
  workloads?: WorkloadApi;
  /** The worker's one list-and-watch of Nodes, which the join watchers follow; without it, watching joins fails. */
  informer?: NodeInformer;
  /** The join watcher's metrics (none when absent). */
  joinTelemetry?: JoinTelemetry;
  /** The worker's drift and plugin poll metrics. */
  watchTelemetry?: DriftTelemetry & PluginTelemetry;
  /** Where the join watcher reports whether it can watch (the worker's readiness). */
  joinHealth?: JoinHealth;
}

/**
 * Builds the activities over the given clients: one design cache, result
 * writer and plugin-set lookup shared by all of them (made here when not
 * injected).
 */
export function createActivities(deps: ActivityDeps) {
  const { nodes, store, events, workloads } = deps;
  const designs = deps.designs ?? createDesignCache(store);
  const results = deps.results ?? createResultWriter(store.runs);
  const { pinnedPluginSet, nodePluginLabels } = createRunPluginLabels(store);

  /** The revision's design; DocumentValidationFailed (every error listed) when its documents are invalid. */
  async function validDesign(revision: number): Promise<Design> {
    const result = await designs.get(revision);
    if (!result.ok) throw documentValidationFailure(revision, result.errors);
    return result.design;
  }

  return {
    ...createFleetSiteActivities(deps.siteRuns),
    ...createDriftActivities({
      nodes,
      store,
      designs,
      validDesign,
      startRun: deps.startRun,
      ...(deps.watchTelemetry ? { telemetry: deps.watchTelemetry } : {}),
    }),
    ...createRunActivities({ nodes, store, ...(events ? { events } : {}), ...(workloads ? { workloads } : {}), validDesign, pinnedPluginSet }),
    ...createPluginActivities({ store, designs, ...(deps.watchTelemetry ? { telemetry: deps.watchTelemetry } : {}) }),
    ...createJoinActivities({
      ...(deps.informer ? { informer: deps.informer } : {}),
      store,
      designs,
      ...(deps.startRun ? { startRun: deps.startRun } : {}),
      ...(deps.joinTelemetry ? { telemetry: deps.joinTelemetry } : {}),
      ...(deps.joinHealth ? { health: deps.joinHealth } : {}),
    }),
    ...createApplyNodeActivities({ nodes, store, results, ...(events ? { events } : {}), validDesign, nodePluginLabels }),
  };
}

/** The activities' type, for `proxyActivities<Activities>()` in workflows. */
export type Activities = ReturnType<typeof createActivities>;
