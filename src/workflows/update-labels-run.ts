/**
 * What one execution of `updateLabels` keeps in memory and shows of itself:
 * its phase, the carried counts, the nodes running, the failures not yet
 * written to the store; the progress Query, the current details in the
 * Temporal UI and the `control` Update (pause, unpause).
 *
 * Bounded by design: the running set is at most the window, the failure
 * buffer is written out whenever it reaches {@link FLUSH_AT}, and the
 * carried failures are a capped sample. Workflow code: deterministic.
 */
import { condition, proxyActivities, setCurrentDetails, setHandler } from '@temporalio/workflow';
import type { Activities } from '../activities/index.ts';
import {
  RunPhase,
  progressQuery,
  type ControlVerb,
  type GateWait,
  type WaveInfo,
  type WaveProgress,
  type CarriedProgress,
  type NodeFailure,
  type Progress,
  type UpdateLabelsInput,
  type UpdateLabelsResult,
} from '../contracts/messages.ts';
import { handleControl } from './run-control.ts';

/** Failures buffered before they are written to the store. */
export const FLUSH_AT = 100;

const { recordFailures } = proxyActivities<Activities>({
  startToCloseTimeout: '60s',
  retry: { maximumInterval: '10s' },
});

/**
 * The state of one `updateLabels` execution. Made once at the start of
 * every execution (a continued one starts from `input.carried`); the
 * workflow's steps read and move it. Holds nothing that grows with the
 * number of nodes beyond the window and the failure buffer.
 */
export class UpdateRun {
  /** Where the run is. */
  phase: RunPhase;
  /** Counts, cursor and failure sample: what continue-as-new carries; set once the run is planned. */
  carried: CarriedProgress | undefined;
  /** The run's number in the store, once known (a failure buffer needs it to be written). */
  runNumber: number | undefined;
  /** Whether every node has been started (nothing is left to pause). */
  started = false;
  /** The run's result, once it is done. */
  result: UpdateLabelsResult | undefined;
  /** Nodes whose child is running. */
  readonly running = new Set<string>();
  /** Failed nodes not yet written to the store. */
  readonly unrecorded: NodeFailure[] = [];
  /** Whether the run is paused; the `control` Update moves it. */
  readonly control: { paused: boolean };
  /** A run in waves: the wave being applied (its name and size), once read. */
  wave: WaveInfo | undefined;
  /** What the run waits for at a gate, and why, while it waits. */
  gate: { waiting: GateWait; reason: string } | undefined;
  /** The gate verb the `control` Update delivered and who sent it, until the gate takes it. */
  decision: { verb: ControlVerb; by: string | null } | undefined;
  /** The last approval: after which wave, by whom. */
  approved: { wave: number; by: string | null } | undefined;
  /** Whether the run only plans (no child starts, nothing is written). */
  readonly dryRun: boolean;
  /** Whether the run sets relabel's custom search attributes. */
  readonly useSearchAttributes: boolean;
  /** The execution's input (a continued one's carries the state it goes on from). */
  readonly input: UpdateLabelsInput;

  constructor(input: UpdateLabelsInput) {
    this.input = input;
    this.dryRun = input.dryRun ?? false;
    this.useSearchAttributes = input.searchAttributes !== false;
    this.phase = input.carried ? RunPhase.applying : RunPhase.resolving;
    this.carried = input.carried;
    this.control = { paused: input.carried?.paused === true };
    this.runNumber = input.carried?.run ?? input.run;
  }

  /** Registers the progress Query and the `control` Update on this run; records nothing in the history. */
  listen(): void {
    setHandler(progressQuery, () => this.progress());
    handleControl(this.control, {
      dryRun: this.dryRun,
      started: () => this.started || this.phase === RunPhase.done,
      running: () => this.running.size,
      pending: () => this.progress().counts.pending,
      changed: () => this.showProgress(),
      gate: () => this.gate?.waiting,
      decide: (verb, by) => {
        this.decision = { verb, by };
      },
      wave: () => this.waveProgress(),
    });
  }

  /** The run's progress, as the progress Query answers it. */
  progress(): Progress {
    const { carried, input, running, control } = this;
    const c = carried?.counts;
    const total = c?.total ?? 0;
    const success = c?.success ?? 0;
    const wave = this.waveProgress();
    const failure = c?.failure ?? 0;
    return {
      phase: this.phase,
      run: carried?.run ?? input.run,
      revision: carried?.revision,
      site: carried?.site,
      dryRun: this.dryRun,
      total,
      counts: { pending: total - success - failure - running.size, running: running.size, success, failure, written: c?.written ?? 0 },
      failures: carried?.failures ?? [],
      status: this.result?.status,
      retryOf: input.retryOf,
      ...(control.paused ? { paused: true } : {}),
      ...(wave ? { wave } : {}),
    };
  }

  /** Where a run in waves stands: its current wave and what it waits for; undefined without waves. */
  waveProgress(): WaveProgress | undefined {
    const waves = this.carried?.waves;
    if (!waves) return undefined;
    return {
      current: this.wave ?? { index: waves.index, name: '', nodes: 0 },
      count: waves.count,
      ...(this.gate ? { waiting: this.gate.waiting, reason: this.gate.reason } : {}),
      ...(this.approved ? { approved: this.approved } : {}),
    };
  }

  /** Shows the progress as the run's current details in the Temporal UI. */
  showProgress(): void {
    const p = this.progress();
    const w = p.wave;
    const wave = w ? ` wave ${w.current.index + 1} of ${w.count}${w.current.name ? ` (${w.current.name}, ${w.current.nodes} nodes)` : ''}` : '';
    const gate = w?.waiting ? `\n\n**${w.waiting === 'halted' ? 'halted' : `waiting at the ${w.waiting} gate`}**: ${w.reason ?? ''}` : '';
    setCurrentDetails(
      `**${p.phase}**${this.control.paused ? ' (**paused**: no new node starts)' : ''} run ${p.run ?? '?'}, revision ${p.revision ?? '?'}${this.dryRun ? ' (dry run)' : ''}${wave}: ` +
        `${p.counts.success} ok, ${p.counts.failure} failed, ${p.counts.running} running, ${p.counts.pending} pending of ${p.total} (${p.counts.written} written)${gate}`,
    );
  }

  /** Writes the buffered failures to the store, {@link FLUSH_AT} at a time (none before the run's number is known). */
  async flush(): Promise<void> {
    while (this.unrecorded.length > 0 && this.runNumber !== undefined) {
      await recordFailures({ run: this.runNumber, failures: this.unrecorded.splice(0, FLUSH_AT) });
    }
  }

  /** Whether enough failures are buffered that a wait writes them first. */
  flushDue(): boolean {
    return this.unrecorded.length >= FLUSH_AT;
  }

  /** Waits for `ready`, writing buffered failures to the store whenever enough pile up. */
  async waitFor(ready: () => boolean): Promise<void> {
    for (;;) {
      await condition(() => ready() || this.flushDue());
      if (this.flushDue()) await this.flush();
      if (ready()) return;
    }
  }
}
