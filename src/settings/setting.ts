/**
 * A setting: one value the worker, the API server or the CLI is configured
 * with, from a flag or the environment variable behind it, through one
 * parser. Commander options and environment reading are both derived from
 * it, so a value is refused the same way whichever way it came.
 */
import { Option, type Command } from 'commander';

/** Longest part of a refused value repeated in the message. */
const MAX_VALUE = 40;

/** One setting: its flag, its variable, how its value is read, its default and help. */
export interface Setting<T> {
  /** Commander's flags: `--kube-qps <n>`. */
  flags: string;
  /** What it sets, without the variable (added to the help). */
  help: string;
  /** Environment variable behind the flag; empty counts as unset. */
  env?: string;
  /** A word on the variable for the help (`in-cluster when absent`). */
  envNote?: string;
  /**
   * The variable is read by src/temporal/settings.ts (with Temporal's
   * profile, through the SDK's environment configuration):
   * {@link settingFromEnv} leaves it alone and the caller gives the value
   * as the default.
   */
  envReadElsewhere?: boolean;
  /** The value from its text; throws InvalidArgumentError with the rule broken. */
  parse: (value: string) => T;
  /** Value when neither the flag nor the variable is given. */
  default?: T;
}

/**
 * A setting with no flag: only its environment variable sets it (links,
 * switches, secrets kept off the command line, variables of the OS).
 */
export type Variable<T> = Omit<Setting<T>, 'flags' | 'env' | 'envReadElsewhere'> & { flags?: undefined; env: string };

/** A value from the environment the setting's parser refused; the message names the flag, the variable and the value. */
export class SettingError extends Error {
  override name = 'SettingError';
}

/**
 * The setting's value from `env`, parsed as its flag's would be, or
 * undefined when the variable is unset, empty, or read by the SDK. A value
 * the parser refuses throws a {@link SettingError} worded as commander
 * words a refused flag: `option '--kube-qps <n>' value 'fifty' from env
 * 'RELABEL_KUBE_QPS' is invalid. must be a whole number ≥ 0`.
 */
export function settingFromEnv<T>(setting: Setting<T> | Variable<T>, env: NodeJS.ProcessEnv = process.env): T | undefined {
  if (setting.env === undefined || ('envReadElsewhere' in setting && setting.envReadElsewhere)) return undefined;
  const value = env[setting.env];
  if (value === undefined || value === '') return undefined;
  try {
    return setting.parse(value);
  } catch (err) {
    const shown = value.length > MAX_VALUE ? `${value.slice(0, MAX_VALUE)}…` : value;
    const source =
      setting.flags === undefined ? `env '${setting.env}' value '${shown}'` : `option '${setting.flags}' value '${shown}' from env '${setting.env}'`;
    throw new SettingError(`${source} is invalid. ${(err as Error).message}`);
  }
}

/** The variable's value from `env`, else its default; throws {@link SettingError} when its parser refuses it. */
export function variableFromEnv<T>(variable: Variable<T> & { default: T }, env?: NodeJS.ProcessEnv): T;
export function variableFromEnv<T>(variable: Variable<T>, env?: NodeJS.ProcessEnv): T | undefined;
export function variableFromEnv<T>(variable: Variable<T>, env: NodeJS.ProcessEnv = process.env): T | undefined {
  return settingFromEnv(variable, env) ?? variable.default;
}

/** The setting's help: what it sets, then its variable. */
export function settingHelp(setting: Setting<unknown>): string {
  if (setting.env === undefined) return setting.help;
  return `${setting.help} (${setting.env}${setting.envNote ? `; ${setting.envNote}` : ''})`;
}

/**
 * The setting as a commander Option with its parser. With `env`, its
 * default is the variable's value (else `fallback`, else the setting's own
 * default); a refused variable throws {@link SettingError}. Without `env`
 * the option has no default: the caller merges the environment later.
 */
export function settingOption<T>(setting: Setting<T>, from?: { env: NodeJS.ProcessEnv; fallback?: T }): Option {
  const option = new Option(setting.flags, settingHelp(setting)).argParser((value: string) => setting.parse(value));
  if (from === undefined) return option;
  const value = settingFromEnv(setting, from.env) ?? from.fallback ?? setting.default;
  return value === undefined ? option : option.default(value);
}

/** Help lines for the variables behind `settings`: `  VARIABLE  what it sets (note)  --flag`, aligned. */
export function environmentHelp(settings: readonly (Setting<unknown> | Variable<unknown>)[]): string {
  const rows = settings
    .filter((s) => s.env !== undefined)
    .map((s) => [s.env ?? '', `${s.help}${s.envNote ? ` (${s.envNote})` : ''}`, s.flags?.split(' ')[0] ?? '']);
  const width = (i: number) => Math.max(...rows.map((r) => (r[i] ?? '').length));
  return rows.map(([env, help, flag]) => `  ${(env ?? '').padEnd(width(0))}  ${(help ?? '').padEnd(width(1))}  ${flag}`.trimEnd()).join('\n');
}

/**
 * Runs `read` (which reads the environment and builds the options from it)
 * and adds its options to `program`; returns what it read. A variable the
 * table refuses stops the program with commander's usage error (exit code
 * 1), as a refused flag does.
 */
export function addSettingOptions<T>(program: Command, read: () => { options: Option[]; read: T }): T {
  try {
    const { options, read: value } = read();
    for (const option of options) program.addOption(option);
    return value;
  } catch (err) {
    if (err instanceof SettingError) program.error(`error: ${err.message}`);
    throw err;
  }
}
