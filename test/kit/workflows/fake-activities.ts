/**
 * An in-memory fake of the activities relabel's workflows call: a run store
 * of a few nodes, a node "cluster" that never fails unless told to, and a
 * journal of every call, so that workflow tests run the real workflow code
 * in seconds and assert exactly what it asked for. Test code only: the
 * worker of a workflow test (see `environment.ts`) runs these in place of
 * `createActivities`.
 *
 * What it keeps is what the workflows rely on: nodes per run in target
 * order (`seq`), each pending until a child settles it or a stop or an abort
 * settles it `cancelled`; the waves a plan assigns; the run's outcome.
 * `applyNodePlan` can be held (every call waits until released) to look at
 * a run with its window full.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../../../src/core/plan/failure-types.ts';
import type { EffectiveRollout } from '../../../src/core/plan/waves.ts';
import type { Activities } from '../../../src/activities/index.ts';
import type { HealthOutcome } from '../../../src/activities/wave-activities.ts';
import type { DriftDetection } from '../../../src/contracts/drift-messages.ts';
import type { FleetSiteActivities } from '../../../src/contracts/fleet-messages.ts';
import type { FleetSurveyActivities, SiteAnswer, SurveyKind } from '../../../src/contracts/fleet-survey.ts';
import type { NodeError, RelabelNodeResult } from '../../../src/contracts/messages.ts';

/** The activities the workflows call, as the fake gives them (the real signatures). */
export type FakeActivities = Pick<
  Activities,
  | 'resolveRevision'
  | 'registerRun'
  | 'planRun'
  | 'pendingNodes'
  | 'waveInfo'
  | 'checkWaveHealth'
  | 'abortRunNodes'
  | 'setRunOutcome'
  | 'settleCancelledRun'
  | 'recordFailures'
  | 'applyNodePlan'
  | 'detectDrift'
  | 'startHealRun'
  | 'startReleaseRun'
  | 'awaitRun'
  | 'recordHeal'
> &
  FleetSiteActivities &
  FleetSurveyActivities;

/** One activity call, in the order the fake saw them. */
export interface Call {
  name: keyof FakeActivities;
  input: any;
}

/** What a node of a fake run is. */
export type FakeStatus = 'pending' | 'success' | 'failure' | 'cancelled';

/** One target of a fake run with something to change. */
interface FakeNode {
  seq: number;
  node: string;
  wave?: number;
  status: FakeStatus;
}

/** A run of the fake store: its nodes with something to change, what the plan settled, its waves and outcome. */
export interface FakeRun {
  nodes: FakeNode[];
  /** Targets the plan found already as desired (settled success, no child). */
  unchanged: number;
  /** The run's waves: each wave's name and nodes (absent: no waves). */
  waves?: { names: string[]; rollout: EffectiveRollout; of: string[][] };
  outcome?: string;
}

/** A fake run's shape: its nodes with something to change (in target order), and optionally waves. */
export interface FakeRunSpec {
  nodes: string[];
  unchanged?: number;
  /** Waves, each a list of the run's nodes, with the rollout in effect. */
  waves?: { of: string[][]; names?: string[]; rollout: Partial<EffectiveRollout> };
}

/** Orders node names as people do: `n-2` before `n-10`. */
export const byName = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true });

/** The site every fake run is of. */
export const FAKE_SITE = 'fake-site';
/** The revision the fake resolves when none is asked for. */
export const FAKE_REVISION = 4;

/** A fake of relabel's activities over one in-memory store; make one per test. */
export class FakeRelabel {
  /** Every activity call, in order. */
  readonly calls: Call[] = [];
  /** The store's runs by number. */
  readonly runs = new Map<number, FakeRun>();
  /** `applyNodePlan` calls now running, and the most there ever were at once. */
  inFlight = 0;
  maxInFlight = 0;
  /** Nodes `applyNodePlan` fails non-retryably, with the failure. */
  readonly failing = new Map<string, NodeError>();
  /** A rejection `planRun` throws (non-retryable), as the real one does for invalid documents or the brake. */
  rejectPlan: NodeError | undefined;
  /** What the health gate answers after each wave (absent: healthy). */
  readonly health = new Map<number, HealthOutcome>();
  /** What `detectDrift` finds (set by a drift test). */
  detection: DriftDetection | undefined;
  /** Starts a heal run (set by a drift test); absent: `startHealRun` says skipped. */
  startHeal:
    | ((input: { report: number; revision: number }) => Promise<{ workflowId: string; runId: string; run: number; nodes: number } | { skipped: string }>)
    | undefined;
  /** Starts a release run over the orphaned nodes (set by a drift test); absent: `startReleaseRun` says skipped. */
  startRelease:
    | ((input: { report: number; revision: number }) => Promise<{ workflowId: string; runId: string; run: number; nodes: number } | { skipped: string }>)
    | undefined;
  /** Waits for a heal run's end (set by a drift test). */
  awaitHeal: ((input: { workflowId: string; runId: string }) => Promise<{ status: string; written?: number; failed?: number }>) | undefined;
  /**
   * What each site prepares for a fleet rollout: its run's nodes (absent:
   * `<site>-n1`, `<site>-n2`) and waves, what its health gate answers after
   * each wave (absent: healthy), or a refusal.
   */
  readonly siteRuns = new Map<string, { nodes?: string[]; waves?: FakeRunSpec['waves']; health?: HealthOutcome[]; refuse?: NodeError }>();
  /** What the health gate answers after each wave of a run, by run (set for a site's run from its `siteRuns` entry). */
  readonly runHealth = new Map<number, HealthOutcome[]>();
  /** The run each site prepared, by site, in the order they were prepared. */
  readonly prepared = new Map<string, number>();
  /** What each site answers a fleet survey (absent: a plan writing two nodes, or a state with no alert), or a refusal. */
  readonly siteAnswers = new Map<string, Omit<SiteAnswer, 'site'> | { refuse: NodeError }>();
  private holding = false;
  private readonly held: { node: string; go: () => void }[] = [];
  private nextRun = 100;

  /** Adds run `run` to the store with `spec`'s targets; returns its number. */
  addRun(spec: FakeRunSpec, run = this.nextRun++): number {
    const wave = (node: string) => spec.waves?.of.findIndex((w) => w.includes(node));
    this.runs.set(run, {
      nodes: spec.nodes.map((node, seq) => ({ seq, node, status: 'pending' as const, ...(spec.waves ? { wave: wave(node) } : {}) })),
      unchanged: spec.unchanged ?? 0,
      ...(spec.waves
        ? {
            waves: {
              of: spec.waves.of,
              names: spec.waves.names ?? spec.waves.of.map((_, i) => `wave-${i + 1}`),
              rollout: { approval: 'none', healthTimeoutSeconds: 0, maxFailedNodes: 0, ...spec.waves.rollout },
            },
          }
        : {}),
    });
    return run;
  }

  /** Makes every `applyNodePlan` call from now on wait until released. */
  hold(): void {
    this.holding = true;
  }

  /** Nodes whose `applyNodePlan` is held, sorted. */
  heldNodes(): string[] {
    return this.held.map((h) => h.node).sort(byName);
  }

  /** Releases the held calls of `nodes` (all held calls, and stops holding, when absent). */
  release(nodes?: readonly string[]): void {
    if (nodes === undefined) this.holding = false;
    for (const h of [...this.held]) {
      if (nodes !== undefined && !nodes.includes(h.node)) continue;
      this.held.splice(this.held.indexOf(h), 1);
      h.go();
    }
  }

  /** The inputs of every call of activity `name`, in order. */
  inputsOf<K extends keyof FakeActivities>(name: K): Parameters<FakeActivities[K]>[0][] {
    return this.calls.filter((c) => c.name === name).map((c) => c.input);
  }

  /**
   * The nodes `applyNodePlan` was called for, in order. Children running at
   * once call it in any order: compare those with {@link appliedSet}.
   */
  applied(): string[] {
    return this.inputsOf('applyNodePlan').map((i) => i.node);
  }

  /** The nodes `applyNodePlan` was called for, sorted (a node called twice is there twice). */
  appliedSet(): string[] {
    return this.applied().sort(byName);
  }

  /** The nodes of `run` by status. */
  statuses(run: number): Record<FakeStatus, string[]> {
    const by: Record<FakeStatus, string[]> = { pending: [], success: [], failure: [], cancelled: [] };
    for (const n of this.runOf(run).nodes) by[n.status].push(n.node);
    return by;
  }

  runOf(run: number): FakeRun {
    const found = this.runs.get(run);
    if (!found) throw ApplicationFailure.nonRetryable(`no run ${run} in the fake store`, FailureType.RunNotFound);
    return found;
  }

  /** Settles every pending node of `run` as cancelled; returns how many. */
  private cancelPending(run: number): number {
    const pending = this.runOf(run).nodes.filter((n) => n.status === 'pending');
    for (const n of pending) n.status = 'cancelled';
    return pending.length;
  }

  /** The activities, each recording its call before it does anything. */
  activities(): FakeActivities {
    const fake: FakeActivities = {
      resolveRevision: async (input) => ({ revision: input.revision ?? FAKE_REVISION }),
      registerRun: async (input) => ({ run: this.addRun({ nodes: input.targets }) }),
      planRun: async ({ run, dryRun }) => {
        if (this.rejectPlan) throw ApplicationFailure.nonRetryable(this.rejectPlan.message, this.rejectPlan.type);
        const r = this.runOf(run);
        const changed = r.nodes.length;
        if (dryRun) for (const n of r.nodes) n.status = 'success';
        const waves = !dryRun && r.waves ? { waves: { count: r.waves.of.length, rollout: r.waves.rollout } } : {};
        return {
          site: FAKE_SITE,
          defaultConcurrency: 4,
          counts: { total: changed + r.unchanged, success: r.unchanged + (dryRun ? changed : 0), failure: 0, written: 0 },
          toChange: dryRun ? 0 : changed,
          failures: [],
          failureTypes: {},
          removal: { owned: 0, removed: 0, nodes: 0, keys: [], moreKeys: 0, maxFraction: 0.5, exceeded: false },
          ...waves,
        };
      },
      pendingNodes: async ({ run, afterSeq, limit, wave }) =>
        this.runOf(run)
          .nodes.filter((n) => n.status === 'pending' && n.seq > afterSeq && (wave === undefined || n.wave === wave))
          .slice(0, limit)
          .map(({ seq, node }) => ({ seq, node })),
      waveInfo: async ({ run, wave }) => {
        const waves = this.runOf(run).waves;
        const nodes = waves?.of[wave];
        return waves && nodes ? { index: wave, name: waves.names[wave] ?? '', nodes: nodes.length } : null;
      },
      checkWaveHealth: async ({ run, wave }) => this.runHealth.get(run)?.[wave] ?? this.health.get(wave) ?? { healthy: true, checked: 1 },
      abortRunNodes: async ({ run }) => ({ settled: this.cancelPending(run) }),
      setRunOutcome: async ({ run, outcome }) => {
        this.runOf(run).outcome = outcome;
      },
      settleCancelledRun: async ({ run }) => {
        const settled = this.cancelPending(run);
        this.runOf(run).outcome = 'cancelled';
        return { settled };
      },
      recordFailures: async ({ run, failures }) => {
        const nodes = this.runOf(run).nodes;
        for (const f of failures) {
          const n = nodes.find((x) => x.node === f.node);
          if (n) n.status = 'failure';
        }
      },
      applyNodePlan: async (input) => await this.apply(input),
      detectDrift: async () => {
        if (!this.detection) throw ApplicationFailure.nonRetryable('no revision has been committed yet', FailureType.NoCommittedRevision);
        return this.detection;
      },
      startHealRun: async (input) => (this.startHeal ? await this.startHeal(input) : { skipped: 'no heal starter in this test' }),
      startReleaseRun: async (input) => (this.startRelease ? await this.startRelease(input) : { skipped: 'no release starter in this test' }),
      awaitRun: async (input) => (this.awaitHeal ? await this.awaitHeal(input) : { status: 'rejected', message: 'no heal runs in this test' }),
      recordHeal: async () => undefined,
      prepareSiteRun: async ({ site, run: options }) => {
        const spec = this.siteRuns.get(site);
        if (spec?.refuse) throw ApplicationFailure.nonRetryable(spec.refuse.message, spec.refuse.type);
        const run = this.addRun({ nodes: spec?.nodes ?? [`${site}-n1`, `${site}-n2`], ...(spec?.waves ? { waves: spec.waves } : {}) });
        if (spec?.health) this.runHealth.set(run, spec.health);
        this.prepared.set(site, run);
        // The site's run reaches this test's fake as its fleet rollout did: by its workflow ID's first segment.
        const test = (Context.current().info.workflowExecution?.workflowId ?? '').split('/')[0] ?? '';
        return {
          run,
          workflowId: `${test}/update-labels/${site}`,
          input: { run, ...(options.revision !== undefined ? { revision: options.revision } : {}) },
          memo: { run },
          staticSummary: `Update labels of site ${site}`,
          staticDetails: `run ${run} of site ${site}`,
        };
      },
      settleSiteRun: async () => undefined,
      answerSite: async ({ site, kind }) => {
        const spec = this.siteAnswers.get(site);
        if (spec && 'refuse' in spec) throw ApplicationFailure.nonRetryable(spec.refuse.message, spec.refuse.type);
        return { site, ...(spec ?? defaultAnswer(kind)) };
      },
    };
    return Object.fromEntries(
      Object.entries(fake).map(([name, fn]) => [
        name,
        (input: unknown) => {
          this.calls.push({ name: name as keyof FakeActivities, input });
          return (fn as (i: unknown) => Promise<unknown>)(input);
        },
      ]),
    ) as unknown as FakeActivities;
  }

  /** `applyNodePlan`: waits while held, then writes the node (or fails it, when it is failing). */
  private async apply(input: { run: number; node: string; revision: number }): Promise<RelabelNodeResult> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.holding) await new Promise<void>((go) => this.held.push({ node: input.node, go }));
      const node = this.runOf(input.run).nodes.find((n) => n.node === input.node);
      const failure = this.failing.get(input.node);
      if (failure) throw ApplicationFailure.nonRetryable(failure.message, failure.type);
      if (node) node.status = 'success';
      return { node: input.node, written: true, counts: { set: 1, removed: 0, adopted: 0, unchanged: 0 }, taintLifted: false, attempts: 1 };
    } finally {
      this.inFlight--;
    }
  }
}

/** What a site answers a survey when a test does not say: two nodes to write, one key gained on both. */
function defaultAnswer(kind: SurveyKind): Omit<SiteAnswer, 'site'> {
  if (kind === 'state') return { state: 'answered', status: { revision: 1, joins: { enabled: false }, alerts: [] } };
  return {
    state: 'answered',
    plan: {
      revision: 1,
      run: 1,
      workflowId: 'update-labels/site/dry-run/x',
      targets: 2,
      planned: 2,
      notPlanned: {},
      changing: 2,
      gain: 2,
      change: 0,
      lose: 0,
      adopt: 0,
      keys: [{ key: 'example.com/role', gain: 2, change: 0, lose: 0, adopt: 0, sources: ['HostProfile/edge'], moreSources: 0 }],
      moreKeys: 0,
      brake: { owned: 0, removed: 0, maxFraction: 0.5, exceeded: false },
      warnings: [],
    },
  };
}
