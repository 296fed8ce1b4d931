/**
 * The steps of a run in waves: instead of one `relabel_nodes` step, one step
 * per wave (`relabel_wave_1`, `relabel_wave_2`, …; the id is the wave's
 * position, stable for the run), each with an Airflow task state from the
 * store's counts of the wave's nodes and where the run stands. Bounded: at
 * most {@link MAX_WAVE_STEPS} are listed, the last one listed saying how
 * many more there are. Pure.
 */
import type { RunWave } from '../../store/runs/run-store.ts';
import type { GateWait } from '../../contracts/messages.ts';
import { waveStepId } from './action-rollout.ts';

/** Most wave steps an action lists (a run may have up to 5000 waves). */
export const MAX_WAVE_STEPS = 100;

/** `relabel_wave_<n>`: the step of wave n (from 1). */
export const WAVE_STEP_ID = /^relabel_wave_[1-9][0-9]{0,3}$/;

/** An Airflow task state, as Shipyard passes them through; null: not reached. */
export type StepState = 'queued' | 'running' | 'success' | 'failed' | 'upstream_failed' | 'skipped' | 'up_for_reschedule' | null;

/** What the wave steps are derived from. */
export interface WaveStepsInput {
  /** The run's first waves with their nodes counted by status (the store's `runs.waves`, at most {@link MAX_WAVE_STEPS} are used). */
  waves: readonly RunWave[];
  /** Waves in the run (the progress query's or the result's count; the waves given when neither is known). */
  count?: number;
  /** While the run goes on: its current wave (from 0) and what the gate after it waits for. */
  current?: { index: number; waiting?: GateWait };
  /** The run was aborted at a gate: waves not started were skipped on purpose. */
  aborted?: boolean;
}

/** One wave as its step shows it: the wave, where the run stands at it, and (on the last step listed) how many waves are not listed. */
export interface WaveFacts extends RunWave {
  /** Waves in the run. */
  count: number;
  /** What the gate after this wave waits for, when the run waits there. */
  waiting?: GateWait;
  /** Waves after this one that are not listed (on the last step listed only). */
  more?: number;
}

/** The state of a settled wave: every node succeeded, or some failed, or none started (skipped when the run was aborted, upstream_failed when stopped). */
function settled(w: RunWave, aborted: boolean): StepState {
  if (w.failure > 0) return 'failed';
  if (w.success >= w.nodes) return 'success';
  // Some nodes done, the rest cancelled when the run was stopped: the wave did not finish.
  if (w.success > 0) return 'failed';
  return aborted ? 'skipped' : 'upstream_failed';
}

/**
 * Each wave's state, given the state the single relabel_nodes step would
 * have (`overall`). Not reached, upstream_failed or skipped (a dry run):
 * every wave the same. While the run goes on: waves before the current one
 * by their counts; the current one `running` while its nodes are applied,
 * and `up_for_reschedule` while its gate waits (the health gate, an
 * approval, or a halted run) — Airflow's state of a sensor waiting between
 * pokes: not failed, holding no worker, going on once its condition holds,
 * which Shipyard counts among the running states (the action is not judged
 * yet); waves after it not reached (null). Once the run has ended, each
 * wave by its counts.
 */
export function waveStates(overall: StepState, input: WaveStepsInput, waves: readonly RunWave[]): StepState[] {
  if (overall === null || overall === 'queued' || overall === 'upstream_failed' || overall === 'skipped') return waves.map(() => overall);
  const aborted = input.aborted === true;
  if (overall !== 'running') return waves.map((w) => settled(w, aborted));
  const current = input.current;
  return waves.map((w) => {
    if (current === undefined) {
      // No wave reported yet: judge by the counts alone.
      if (w.pending === 0) return settled(w, aborted);
      return w.success + w.failure + w.cancelled > 0 ? 'running' : null;
    }
    if (w.index < current.index) return w.pending > 0 ? 'running' : settled(w, aborted);
    if (w.index > current.index) return null;
    return current.waiting !== undefined ? 'up_for_reschedule' : 'running';
  });
}

/** The waves listed as steps (the first {@link MAX_WAVE_STEPS}) with their facts. */
export function waveFacts(input: WaveStepsInput): WaveFacts[] {
  const listed = input.waves.slice(0, MAX_WAVE_STEPS);
  const count = Math.max(input.count ?? 0, input.waves.length);
  const more = count - listed.length;
  return listed.map((w, i) => ({
    ...w,
    count,
    ...(input.current?.index === w.index && input.current.waiting !== undefined ? { waiting: input.current.waiting } : {}),
    ...(i === listed.length - 1 && more > 0 ? { more } : {}),
  }));
}

/** The step id of a wave. */
export const waveStep = (w: Pick<RunWave, 'index'>): string => waveStepId(w.index);

/** What a wave's step note says: its name and counts, what its gate waits for, how many waves are not listed. */
export function waveNoteText(w: WaveFacts, paused: boolean): string {
  const notStarted = w.cancelled + w.pending;
  const parts = [
    `wave ${w.index + 1} of ${w.count}: ${w.name} (${w.nodes} node${w.nodes === 1 ? '' : 's'}: ${w.success} succeeded, ${w.failure} failed, ${notStarted} not done)`,
  ];
  if (paused) parts.push('paused: no node starts until the action is unpaused');
  if (w.waiting === 'approval') parts.push('waiting for approval: unpause (or approve) the action to go on, abort to end it here');
  else if (w.waiting === 'halted') parts.push('halted: unpause (or resume) the action to go on, abort to end it here');
  else if (w.waiting === 'health') parts.push("health gate: waiting for the wave's DaemonSet pods");
  if (w.more !== undefined) parts.push(`${w.more} more wave${w.more === 1 ? '' : 's'} not listed as steps; the action's waves field names the current one`);
  return parts.join('; ');
}
