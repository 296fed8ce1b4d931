/**
 * Rollouts in waves through Shipyard's eyes: the action parameters that
 * roll a run out in waves (snake_case, as `shipyard create action --param
 * name=value` sends them: every value may come as text), how Shipyard's own
 * `unpause` moves a run on at a gate, and the wave an action view shows.
 * Pure.
 */
import { z } from 'zod';
import {
  ApprovalGate,
  MAX_HEALTH_TIMEOUT_SECONDS,
  parseWaveGrouping,
  parseWaveSize,
  type Parsed,
  type Rollout,
  type WaveGrouping,
  type WaveSize,
} from '../../core/plan/waves.ts';
import type { Progress, UpdateLabelsResult } from '../../contracts/messages.ts';

/** A parameter parsed by `parse`; a value it refuses is one issue with its message. */
function param<T>(parse: (text: string) => Parsed<T>, description: string) {
  return z
    .union([z.string().max(400), z.number()])
    .transform((v, ctx) => {
      const parsed = parse(String(v).trim());
      if (parsed.ok) return parsed.value;
      ctx.addIssue({ code: 'custom', message: parsed.message });
      return z.NEVER;
    })
    .optional()
    .meta({ description });
}

/** A whole number from `min` to `max`, as a JSON number or its text. */
function whole(min: number, max: number, what: string): (text: string) => Parsed<number> {
  return (text) => {
    const n = Number(text);
    return /^[0-9]{1,10}$/.test(text) && Number.isSafeInteger(n) && n >= min && n <= max ? { ok: true, value: n } : { ok: false, message: `must be ${what}` };
  };
}

const approvals = Object.values(ApprovalGate);
const approvalOf = (text: string): Parsed<ApprovalGate> =>
  (approvals as string[]).includes(text) ? { ok: true, value: text as ApprovalGate } : { ok: false, message: `must be one of ${approvals.join(', ')}` };

/** The rollout parameters of `POST actions` (each optional; over the label policy's `rollout:`). */
export const RolloutParameters = {
  waves: param<WaveGrouping | 'none'>(
    parseWaveGrouping,
    'roll the run out in waves: rack (one group per rack), label:<key> (one group per value of the label), or none (all at once, even when the policy has waves)',
  ),
  wave_size: param<WaveSize>(parseWaveSize, 'at most this many nodes per wave (25), or this share of the changed nodes (10%)'),
  canary: param(whole(1, 1e9, 'a whole number of nodes ≥ 1'), 'a first wave of this many nodes, before any other'),
  approval: param(
    approvalOf,
    'where the run waits for an approval (Shipyard: unpause; relabel: approve): none, first (after the first wave), each (after every wave but the last)',
  ),
  health_timeout_seconds: param(
    whole(0, MAX_HEALTH_TIMEOUT_SECONDS, `whole seconds from 0 to ${MAX_HEALTH_TIMEOUT_SECONDS}`),
    "seconds a wave's DaemonSet pods get to become Ready (and those it loses to go) before the run halts; 0: no health gate",
  ),
  max_failed_nodes: param(whole(0, 1e9, 'a whole number of nodes ≥ 0'), 'failed nodes a wave may have without halting the run (default 0)'),
};

/** The parsed rollout parameters of an action. */
export type RolloutParameterValues = { [K in keyof typeof RolloutParameters]?: z.output<(typeof RolloutParameters)[K]> };

/** The run's rollout from an action's parameters; undefined when none was given. */
export function rolloutOfParameters(p: RolloutParameterValues): Rollout | undefined {
  const rollout: Rollout = {
    ...(p.waves !== undefined ? { by: p.waves } : {}),
    ...(p.wave_size !== undefined ? { size: p.wave_size } : {}),
    ...(p.canary !== undefined ? { canary: p.canary } : {}),
    ...(p.approval !== undefined ? { approval: p.approval } : {}),
    ...(p.health_timeout_seconds !== undefined ? { healthTimeoutSeconds: p.health_timeout_seconds } : {}),
    ...(p.max_failed_nodes !== undefined ? { maxFailedNodes: p.max_failed_nodes } : {}),
  };
  return Object.keys(rollout).length > 0 ? rollout : undefined;
}

/** The verbs `POST actions/{id}/control/{verb}` takes: Shipyard's, then relabel's gate verbs. */
export const ACTION_CONTROL_VERBS = ['pause', 'unpause', 'stop', 'approve', 'resume', 'abort'] as const;
/** One of {@link ACTION_CONTROL_VERBS}. */
export type ActionControlVerb = (typeof ACTION_CONTROL_VERBS)[number];

/**
 * The verb a control is applied as. Shipyard's client knows only pause,
 * unpause and stop, so its `unpause` moves a run on wherever it stands:
 * a paused run is unpaused first (a run paused at a gate takes a second
 * unpause to pass it); a run waiting at an approval gate is approved; a
 * halted run is resumed. `stop` stays a cancellation; every other verb is
 * applied as given.
 */
export function appliedVerb(verb: ActionControlVerb, progress: Pick<Progress, 'paused' | 'wave'> | undefined): ActionControlVerb {
  if (verb !== 'unpause' || progress === undefined || progress.paused === true) return verb;
  const waiting = progress.wave?.waiting;
  return waiting === 'approval' ? 'approve' : waiting === 'halted' ? 'resume' : 'unpause';
}

/** Whether a running run stands at a gate only a person moves it past (an approval, or halted): Shipyard's Paused. */
export function waitsForPerson(progress: Pick<Progress, 'wave'> | undefined): boolean {
  const waiting = progress?.wave?.waiting;
  return waiting === 'approval' || waiting === 'halted';
}

/** The id of the step of wave `index` (from 0): `relabel_wave_1`, `relabel_wave_2`, … */
export const waveStepId = (index: number): string => `relabel_wave_${index + 1}`;

const who = z.object({ wave: z.int().meta({ description: 'the wave (from 0) the gate followed' }), by: z.string().nullable() }).strict();

/** Where a run in waves stands, as an action shows it. */
export const WaveStateView = z
  .object({
    count: z.int().nullable().meta({ description: 'waves in the run (null while not planned yet)' }),
    current: z
      .object({
        index: z.int().meta({ description: 'from 0' }),
        name: z.string(),
        nodes: z.int(),
        step_id: z.string().meta({ description: 'its step: relabel_wave_<index + 1>' }),
      })
      .strict()
      .nullable()
      .meta({ description: 'the wave being applied, or whose gate the run waits at; null once the run has ended' }),
    waiting: z.enum(['health', 'approval', 'halted']).nullable().meta({
      description:
        'what the gate after the current wave waits for: the health gate, an approval (unpause or approve), or a halted run (unpause or resume; abort ends it)',
    }),
    reason: z.string().nullable(),
    approved: who.nullable().meta({ description: 'who approved the last approval gate' }),
    aborted: who
      .extend({ not_started: z.int().meta({ description: 'nodes of later waves it never started' }) })
      .strict()
      .nullable()
      .meta({ description: 'the run was aborted at the gate after this wave: the nodes of later waves were not started' }),
  })
  .strict();
/** Where a run in waves stands. */
export type WaveStateView = z.infer<typeof WaveStateView>;

/** The wave view of a run from its progress or result; null for a run without waves. */
export function waveState(
  progress: Pick<Progress, 'wave'> | undefined,
  result: Pick<UpdateLabelsResult, 'waves' | 'aborted'> | undefined,
): WaveStateView | null {
  const w = progress?.wave;
  if (result) {
    if (result.waves === undefined && !result.aborted) return null;
    const a = result.aborted;
    return {
      count: result.waves ?? null,
      current: null,
      waiting: null,
      reason: null,
      approved: w?.approved ?? null,
      aborted: a ? { wave: a.wave, by: a.by, not_started: a.notStarted } : null,
    };
  }
  if (!w) return null;
  return {
    count: w.count,
    current: { ...w.current, step_id: waveStepId(w.current.index) },
    waiting: w.waiting ?? null,
    reason: w.reason ?? null,
    approved: w.approved ?? null,
    aborted: null,
  };
}
