/**
 * How a run in waves is shown to people: which wave it is in, what its gate
 * waits for and the command that moves it on; and, once it has ended, how
 * many waves it had and whether it was aborted at a gate.
 */
import type { ControlAnswer, GateWait, UpdateLabelsResult, WaveProgress } from '../contracts/messages.ts';

/** `wave 2 of 5 (rack r2, 12 nodes)`: waves are numbered from 1 for people. */
export function waveLine(w: WaveProgress): string {
  return `wave ${w.current.index + 1} of ${w.count} (${w.current.name}, ${w.current.nodes} node${w.current.nodes === 1 ? '' : 's'})`;
}

/** What the gate after the current wave waits for, and the command that moves the run on. */
export function waitingLine(w: WaveProgress, workflowId: string): string | undefined {
  const waiting: GateWait | undefined = w.waiting;
  if (waiting === undefined) return undefined;
  switch (waiting) {
    case 'approval':
      return `waiting for approval: relabel approve ${workflowId}${w.reason ? ` (${w.reason})` : ''}`;
    case 'halted':
      // The run's reason ends with what to do in words; the commands below say it exactly.
      return `halted: ${(w.reason ?? 'the run stopped at a gate').replace(/; resume to go on, abort to end the run here$/, '')} — relabel resume ${workflowId} or relabel abort ${workflowId}`;
    case 'health':
      return `health gate: ${w.reason ?? "waiting for the wave's DaemonSet pods to be Ready, and those it lost to go"}`;
    default:
      return `waiting: ${String(waiting)}`;
  }
}

/** Who approved the last approval gate, when someone did. */
export function approvedLine(w: WaveProgress): string | undefined {
  return w.approved ? `approved after wave ${w.approved.wave + 1} by ${w.approved.by ?? 'unknown'}` : undefined;
}

/** The lines of a running run in waves: the wave, what it waits for, the last approval. */
export function waveLines(w: WaveProgress, workflowId: string): string[] {
  return [waveLine(w), waitingLine(w, workflowId), approvedLine(w)].filter((l): l is string => l !== undefined);
}

/** A short note for the live progress line: `wave 2/5 rack r2, waiting for approval`. */
export function waveProgressNote(w: WaveProgress): string {
  const waiting = w.waiting === undefined ? '' : w.waiting === 'health' ? ', health gate' : w.waiting === 'approval' ? ', waiting for approval' : ', halted';
  return `wave ${w.current.index + 1}/${w.count} ${w.current.name}${waiting}`;
}

/** The lines of a finished run in waves: `waves: N`, and `aborted after wave K by USER`. */
export function waveResultLines(result: Pick<UpdateLabelsResult, 'waves' | 'aborted'>): string[] {
  const lines: string[] = [];
  if (result.waves !== undefined) lines.push(`waves: ${result.waves}`);
  if (result.aborted) {
    const { wave, by, notStarted } = result.aborted;
    lines.push(`aborted after wave ${wave + 1} by ${by ?? 'unknown'}: ${notStarted} node(s) of later waves were not started (nothing written to them)`);
  }
  return lines;
}

/** What a gate verb did, for people: the run's wave once it took effect. */
export function gateAnswerText(verb: 'approve' | 'resume' | 'abort', workflowId: string, runId: string, answer: ControlAnswer | undefined): string {
  const did = verb === 'approve' ? 'approved' : verb === 'resume' ? 'resumed' : 'aborted';
  const head = `${workflowId} (run ${runId}) ${did}`;
  const after =
    verb === 'abort'
      ? 'no more nodes start; those not started are settled as not started, and the run ends as a partial run'
      : answer
        ? `${answer.running} node(s) running, ${answer.pending} not started`
        : undefined;
  const lines = [after ? `${head}: ${after}` : head];
  if (answer?.wave) lines.push(...waveLines(answer.wave, workflowId));
  return lines.join('\n');
}
