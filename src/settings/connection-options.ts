/**
 * The options every server entry point shares: where Temporal and the store
 * are, and the kubeconfig, from the settings table.
 */
import type { Option } from 'commander';
import { settingOption } from './setting.ts';
import { CONNECTION } from './table.ts';

/**
 * `--address`, `--namespace`, `--task-queue` (defaulting to `read`: the
 * Temporal profile and variables as src/temporal/settings.ts read them),
 * `--fleet-task-queue`, `--store` and `--kubeconfig` (defaulting to their
 * variables in `env`).
 */
export function connectionOptions(env: NodeJS.ProcessEnv, read: { temporalAddress: string; namespace: string; taskQueue: string }): Option[] {
  return [
    settingOption(CONNECTION.address, { env, fallback: read.temporalAddress }),
    settingOption(CONNECTION.namespace, { env, fallback: read.namespace }),
    settingOption(CONNECTION.taskQueue, { env, fallback: read.taskQueue }),
    settingOption(CONNECTION.fleetTaskQueue, { env }),
    settingOption(CONNECTION.store, { env }),
    settingOption(CONNECTION.kubeconfig, { env }),
  ];
}
