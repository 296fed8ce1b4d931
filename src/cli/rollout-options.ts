/**
 * The rollout flags of `relabel update-labels`: waves and the gates between
 * them (`--waves`, `--wave-size`, `--canary`, `--approval`,
 * `--health-timeout`, `--max-failed-nodes`). Parsed with the core's parsers,
 * so a bad value is a usage error (exit 2) naming the flag, before anything
 * is opened; what is given goes to the runs facade as the run's `rollout`,
 * over the label policy's `rollout:` block.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import {
  ApprovalGate,
  DEFAULT_HEALTH_TIMEOUT_SECONDS,
  MAX_HEALTH_TIMEOUT_SECONDS,
  parseWaveGrouping,
  parseWaveSize,
  rolloutErrors,
  type Parsed,
  type Rollout,
  type WaveGrouping,
  type WaveSize,
} from '../core/plan/waves.ts';
import { ExitCode } from './exit-codes.ts';

/** The parsed rollout flags, as commander gives them to the action. */
export interface RolloutFlags {
  waves?: WaveGrouping | 'none';
  waveSize?: WaveSize;
  canary?: number;
  approval?: ApprovalGate;
  healthTimeout?: number;
  maxFailedNodes?: number;
}

/** A core parse's value, or commander's InvalidArgumentError with its message. */
function valueOf<T>(parsed: Parsed<T>): T {
  if (!parsed.ok) throw new InvalidArgumentError(parsed.message);
  return parsed.value;
}

/** A whole number from `min` to `max`. */
function wholeNumber(min: number, max: number, what: string) {
  return (value: string): number => {
    const text = value.trim();
    const n = Number(text);
    if (!/^[0-9]+$/.test(text) || !Number.isSafeInteger(n) || n < min || n > max) throw new InvalidArgumentError(`must be ${what}`);
    return n;
  };
}

/** `--waves`: rack, label:<key> or none. */
export const parseWavesFlag = (value: string): WaveGrouping | 'none' => valueOf(parseWaveGrouping(value.trim()));
/** `--wave-size`: a count (25) or a percentage (10%). */
export const parseWaveSizeFlag = (value: string): WaveSize => valueOf(parseWaveSize(value));
/** `--canary`: a whole number of nodes ≥ 1. */
export const parseCanaryFlag = wholeNumber(1, 1e9, 'a whole number of nodes ≥ 1');
/** `--health-timeout`: whole seconds, 0 (no health gate) to a day. */
export const parseHealthTimeoutFlag = wholeNumber(0, MAX_HEALTH_TIMEOUT_SECONDS, `whole seconds from 0 (no health gate) to ${MAX_HEALTH_TIMEOUT_SECONDS}`);
/** `--max-failed-nodes`: a whole number ≥ 0. */
export const parseMaxFailedNodesFlag = wholeNumber(0, 1e9, 'a whole number of nodes ≥ 0');

/** Adds the rollout flags to `cmd`. */
export function withRolloutOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        '--waves <rack|label:KEY|none>',
        'roll the run out in waves: one group of nodes per rack, or per value of a label key (none: all at once, even when the policy rolls out in waves)',
      ).argParser(parseWavesFlag),
    )
    .addOption(
      new Option('--wave-size <N|P%>', 'at most N nodes (or P% of the changed nodes) per wave; splits a group into several waves').argParser(parseWaveSizeFlag),
    )
    .addOption(new Option('--canary <n>', 'a first wave of n nodes, before any other').argParser(parseCanaryFlag))
    .addOption(
      new Option(
        '--approval <gate>',
        'where the run waits for relabel approve: none, first (after the first wave), each (after every wave but the last)',
      ).choices(Object.values(ApprovalGate)),
    )
    .addOption(
      new Option(
        '--health-timeout <seconds>',
        `seconds a wave's DaemonSet pods get to become Ready (and those it loses to go) before the run halts; 0: no health gate (default ${DEFAULT_HEALTH_TIMEOUT_SECONDS})`,
      ).argParser(parseHealthTimeoutFlag),
    )
    .addOption(new Option('--max-failed-nodes <n>', 'failed nodes a wave may have without halting the run (default 0)').argParser(parseMaxFailedNodesFlag));
}

/** Help text of the rollout flags, for the command's `after` help. */
export const ROLLOUT_HELP =
  "Rollout: --waves, --wave-size or --canary roll the run out in waves (over the label policy's rollout:, which they\n" +
  "override; --waves none turns the policy's waves off). Between waves the health gate waits for the wave's DaemonSet\n" +
  'pods (--health-timeout), and an approval gate (--approval) for `relabel approve <id>`; too many failed nodes\n' +
  '(--max-failed-nodes) or a health gate timing out halt the run until `relabel resume <id>` or `relabel abort <id>`.\n' +
  'See docs/rollouts.md.';

/** The run's rollout from the flags given; undefined when none was. */
export function rolloutOf(flags: RolloutFlags): Rollout | undefined {
  const rollout: Rollout = {
    ...(flags.waves !== undefined ? { by: flags.waves } : {}),
    ...(flags.waveSize !== undefined ? { size: flags.waveSize } : {}),
    ...(flags.canary !== undefined ? { canary: flags.canary } : {}),
    ...(flags.approval !== undefined ? { approval: flags.approval } : {}),
    ...(flags.healthTimeout !== undefined ? { healthTimeoutSeconds: flags.healthTimeout } : {}),
    ...(flags.maxFailedNodes !== undefined ? { maxFailedNodes: flags.maxFailedNodes } : {}),
  };
  return Object.keys(rollout).length > 0 ? rollout : undefined;
}

/**
 * The run's rollout from the flags, checked as the facade checks it; a
 * usage error (exit 2) naming what is wrong otherwise.
 */
export function checkedRollout(flags: RolloutFlags, cmd: Command): Rollout | undefined {
  const rollout = rolloutOf(flags);
  const wrong = rollout ? rolloutErrors(rollout) : [];
  if (wrong.length > 0) cmd.error(`error: invalid rollout: ${wrong.join('; ')}`, { exitCode: ExitCode.invalidInput });
  return rollout;
}
