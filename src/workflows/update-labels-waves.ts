/**
 * A run in waves: the window of `updateLabels` over one wave's nodes at a
 * time, and between waves the gates, in order: too many failed nodes halt
 * the run; the health gate waits (up to its timeout) for the wave's
 * DaemonSet pods to be Ready and those it lost to be gone, and halts the
 * run if they are not; an approval gate waits for `approve`. A halted run
 * waits for `resume` or `abort` (a fleet's site run tells its fleet it
 * halted); an aborted run settles the nodes it never started and ends as a
 * partial run. Nothing is rolled back.
 * Workflow code: deterministic; the gates wait durably (a worker restart or
 * a Temporal restart replays them from the history).
 */
import { condition, proxyActivities } from '@temporalio/workflow';
import { approvalAfter } from '../core/plan/waves.ts';
import type { Activities } from '../activities/index.ts';
import { ControlVerb, GateWait, type CarriedProgress, type CarriedWaves } from '../contracts/messages.ts';
import type { UpdateRun } from './update-labels-run.ts';
import { runWindow, type WindowOptions } from './update-labels-window.ts';
import { tellFleet } from './fleet-site-gate.ts';

const { waveInfo, abortRunNodes } = proxyActivities<Activities>({
  startToCloseTimeout: '60s',
  retry: { maximumInterval: '10s' },
});

/** How a run in waves ended its waves: every wave applied, or aborted at a gate. */
export type WavesEnd = { more: boolean; aborted?: { wave: number; by: string | null; notStarted: number } };

/** Waits at a gate for one of `verbs`; returns the verb and who sent it. */
async function decision(run: UpdateRun, waiting: GateWait, reason: string, verbs: readonly ControlVerb[]): Promise<{ verb: ControlVerb; by: string | null }> {
  run.decision = undefined;
  run.gate = { waiting, reason };
  run.showProgress();
  await condition(() => run.decision !== undefined && verbs.includes(run.decision.verb));
  const taken = run.decision as unknown as { verb: ControlVerb; by: string | null };
  run.decision = undefined;
  run.gate = undefined;
  run.showProgress();
  return taken;
}

/** A halted run: waits for resume (true) or abort (false, with who). */
async function halt(run: UpdateRun, reason: string): Promise<{ go: boolean; by: string | null }> {
  const waiting = decision(run, GateWait.halted, `${reason}; resume to go on, abort to end the run here`, [ControlVerb.resume, ControlVerb.abort]);
  await tellFleet(run.input.fleet, true, reason);
  const { verb, by } = await waiting;
  await tellFleet(run.input.fleet, false);
  return { go: verb === ControlVerb.resume, by };
}

/** The wave's name for messages: `wave 2 (rack r2)`. */
function waveName(run: UpdateRun, waves: CarriedWaves): string {
  return `wave ${waves.index + 1}${run.wave?.name ? ` (${run.wave.name})` : ''}`;
}

/**
 * The gates after the current wave. Returns undefined to go on, or who
 * aborted the run.
 */
async function gates(run: UpdateRun, state: CarriedProgress, waves: CarriedWaves): Promise<{ by: string | null } | undefined> {
  const { rollout } = waves;
  const name = waveName(run, waves);
  const failed = state.counts.failure - waves.failedBefore;
  if (failed > rollout.maxFailedNodes) {
    const h = await halt(run, `${name}: ${failed} node(s) failed, more than the ${rollout.maxFailedNodes} allowed`);
    if (!h.go) return { by: h.by };
  }
  if (rollout.healthTimeoutSeconds > 0) {
    run.gate = {
      waiting: GateWait.health,
      reason: `${name}: waiting up to ${rollout.healthTimeoutSeconds} s for its DaemonSet pods to be Ready and those it lost to be gone`,
    };
    run.showProgress();
    const { checkWaveHealth } = proxyActivities<Activities>({
      startToCloseTimeout: `${rollout.healthTimeoutSeconds + 120}s`,
      heartbeatTimeout: '60s',
      retry: { maximumInterval: '10s' },
      summary: `health gate after ${name}`,
    });
    const health = await checkWaveHealth({ run: state.run, wave: waves.index, timeoutSeconds: rollout.healthTimeoutSeconds });
    run.gate = undefined;
    if (!health.healthy) {
      const h = await halt(run, `${name}: the health gate timed out after ${rollout.healthTimeoutSeconds} s: ${health.reason}`);
      if (!h.go) return { by: h.by };
    }
  }
  if (approvalAfter(rollout, waves.index, waves.count)) {
    const { verb, by } = await decision(
      run,
      GateWait.approval,
      `${name} is done: approve to start wave ${waves.index + 2} of ${waves.count}, abort to end the run here`,
      [ControlVerb.approve, ControlVerb.abort],
    );
    if (verb === ControlVerb.abort) return { by };
    run.approved = { wave: waves.index, by };
  }
  return undefined;
}

/**
 * Applies the run's waves from the carried one on: each wave's window,
 * then its gates (none after the last). Returns `more` when the execution
 * should continue as new (its window filled the history; the wave and the
 * cursor are carried), and `aborted` when a gate ended the run.
 */
export async function runWaves(run: UpdateRun, state: CarriedProgress, waves: CarriedWaves, options: WindowOptions): Promise<WavesEnd> {
  while (waves.index < waves.count) {
    if (run.wave?.index !== waves.index) {
      run.wave = (await waveInfo({ run: state.run, wave: waves.index })) ?? { index: waves.index, name: '', nodes: 0 };
      run.showProgress();
    }
    const last = waves.index === waves.count - 1;
    const more = await runWindow(run, state, { ...options, wave: { index: waves.index, last } });
    if (more) return { more: true };
    if (last) break;
    const aborted = await gates(run, state, waves);
    if (aborted) {
      const { settled } = await abortRunNodes({ run: state.run, after: waveName(run, waves), by: aborted.by });
      return { more: false, aborted: { wave: waves.index, by: aborted.by, notStarted: settled } };
    }
    waves.index++;
    waves.failedBefore = state.counts.failure;
    state.cursor = -1;
  }
  return { more: false };
}
