/**
 * Where relabel finds Temporal, read from the environment in one place for
 * the worker, the CLI and the API: `TEMPORAL_ADDRESS` (default
 * localhost:7233), `TEMPORAL_NAMESPACE` (default `default`) and
 * `RELABEL_TASK_QUEUE` (default `relabel`). An empty variable counts as unset.
 */
import { DEFAULT_NAMESPACE, DEFAULT_TASK_QUEUE } from './core/constants.ts';

/** The Temporal frontend, namespace and task queue relabel uses. */
export interface TemporalSettings {
  temporalAddress: string;
  namespace: string;
  taskQueue: string;
}

/** {@link TemporalSettings} from `env`. */
export function temporalSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): TemporalSettings {
  return {
    temporalAddress: env.TEMPORAL_ADDRESS || 'localhost:7233',
    namespace: env.TEMPORAL_NAMESPACE || DEFAULT_NAMESPACE,
    taskQueue: env.RELABEL_TASK_QUEUE || DEFAULT_TASK_QUEUE,
  };
}
