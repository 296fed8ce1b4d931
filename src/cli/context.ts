/**
 * What a command runs with: the configuration (environment, overridden by
 * the global flags), the output format, and the facade opened for the
 * command and closed after it.
 */
import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { openRelabel, relabelConfigFromEnv, type RelabelConfig } from '../facade/index.ts';
import { variableFromEnv } from '../settings/setting.ts';
import { VARIABLES } from '../settings/table.ts';
import type { Documents, Drift, Fleet, FleetRollouts, FleetSurveys, Joins, Plugins, Runs, Schedules } from '../facade/index.ts';
import type { OutputFormat } from './output.ts';

/** Sets the process's exit code once a command is done. */
export type SetExit = (code: number) => void;

/** The global flags. */
export interface GlobalOptions {
  store?: string;
  address?: string;
  namespace?: string;
  taskQueue?: string;
  fleetTaskQueue?: string;
}

/** The facade configuration: environment first, flags over it. */
export function configFrom(flags: GlobalOptions, env: NodeJS.ProcessEnv = process.env): RelabelConfig {
  const config = relabelConfigFromEnv(env);
  if (flags.store !== undefined) config.storeUrl = flags.store;
  if (flags.address !== undefined) config.temporalAddress = flags.address;
  if (flags.namespace !== undefined) config.namespace = flags.namespace;
  if (flags.taskQueue !== undefined) config.taskQueue = flags.taskQueue;
  if (flags.fleetTaskQueue !== undefined) config.fleetTaskQueue = flags.fleetTaskQueue;
  return config;
}

/** A command's view of the facade. */
export interface CliContext {
  format: OutputFormat;
  config: RelabelConfig;
  documents: Documents;
  /** The runs facade; Unavailable when Temporal cannot be reached. */
  runs(): Promise<Runs>;
  /** The schedules facade; Unavailable when Temporal cannot be reached. */
  schedules(): Promise<Schedules>;
  /** The drift facade; Unavailable when Temporal cannot be reached. */
  drift(): Promise<Drift>;
  /** The joins facade; Unavailable when Temporal cannot be reached. */
  joins(): Promise<Joins>;
  /** The label plugins facade; with `temporal`, connected to Temporal (Unavailable when it cannot be reached). */
  plugins(temporal?: boolean): Promise<Plugins>;
  /** The fleet registry; with `temporal`, connected to Temporal (Unavailable when it cannot be reached). */
  fleet(temporal?: boolean): Promise<Fleet>;
  /** Fleet rollouts; Unavailable when Temporal cannot be reached. */
  fleetRollouts(): Promise<FleetRollouts>;
  /** Fleet surveys (`fleet plan`, `fleet status` of every site); Unavailable when Temporal cannot be reached. */
  fleetSurveys(): Promise<FleetSurveys>;
}

/**
 * Opens the facade for one command, runs `body`, closes the facade whatever
 * happens, and returns the body's exit code (0 when it returns none).
 */
export async function withContext(command: Command, body: (ctx: CliContext) => Promise<number | void>): Promise<number> {
  const opts = command.optsWithGlobals<GlobalOptions & { output: OutputFormat }>();
  const config = configFrom(opts);
  const relabel = await openRelabel(config);
  try {
    const code = await body({
      format: opts.output,
      config,
      documents: relabel.documents,
      runs: () => relabel.runs(),
      schedules: () => relabel.schedules(),
      drift: () => relabel.drift(),
      joins: () => relabel.joins(),
      plugins: (temporal) => relabel.plugins(temporal),
      fleet: (temporal) => relabel.fleet(temporal),
      fleetRollouts: () => relabel.fleetRollouts(),
      fleetSurveys: () => relabel.fleetSurveys(),
    });
    return code ?? 0;
  } finally {
    await relabel.close();
  }
}

/**
 * Who runs this command, for the audit trail: the OS user's name, else
 * `$USER`, else `uid <n>` (a container may run as a user with no name).
 */
export function cliUser(): string {
  try {
    const name = userInfo().username;
    if (name) return name;
  } catch {
    // No passwd entry for the uid: fall back below.
  }
  return variableFromEnv(VARIABLES.user) ?? variableFromEnv(VARIABLES.logname) ?? `uid ${process.getuid?.() ?? '?'}`;
}
