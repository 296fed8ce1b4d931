/**
 * The activities of a run in waves: split a planned run's changed nodes
 * into waves (recorded in the store), tell the workflow about one wave,
 * check the health gate after a wave against the cluster (polling until it
 * passes or its deadline), and settle the nodes an aborted run never
 * started. None writes a node.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { FailureType } from '../core/plan/failure-types.ts';
import { healthText, waveHealth, type WaveHealth } from '../core/plan/wave-health.ts';
import { assignWaves, effectiveRollout, MAX_WAVES, type EffectiveRollout, type Rollout, type WaveMember } from '../core/plan/waves.ts';
import type { Design } from '../core/site/validate-site.ts';
import type { NodeApi, NodeState } from '../kube/nodes.ts';
import { DEFAULT_WORKLOAD_PAGE, type WorkloadApi } from '../kube/workloads.ts';
import type { RunStore } from '../store/runs/run-store.ts';
import type { WaveInfo } from '../contracts/messages.ts';
import { all, podsOn, PODS_BY_NODE_THRESHOLD } from './plan-impact.ts';
import { GET_THRESHOLD, getNodes, listNodes } from './plan-run.ts';

/** Rows read from the store at a time. */
const PAGE = 5000;
/** How often the health gate looks again at a wave of a few nodes (their pods read node by node). */
export const HEALTH_POLL_MS = 2000;
/** How often it looks again at a larger wave, whose nodes and pods it LISTs. */
export const HEALTH_POLL_LARGE_MS = 10_000;

/** A planned run's waves: how many, and the rollout they follow. */
export interface PlannedWaves {
  count: number;
  rollout: EffectiveRollout;
}

/**
 * Splits the pending (changed) nodes of `run` into waves by the rollout in
 * effect (the policy's, with the run's over it) and records them. Undefined
 * when the rollout has no waves or nothing is pending. Refuses
 * (InvalidRequest, non-retryable) more than {@link MAX_WAVES} waves.
 */
export async function planWaves(store: RunStore, run: number, design: Design, asked: Rollout | undefined): Promise<PlannedWaves | undefined> {
  const rollout = effectiveRollout(design.policy.rollout, asked);
  if (!rollout) return undefined;
  const by = rollout.by;
  const members: WaveMember[] = [];
  for (let afterSeq = -1; ;) {
    const rows = await store.nodes(run, { status: 'pending', afterSeq, limit: PAGE });
    for (const { node, detail } of rows) {
      // A member of a node set is grouped by its set's entry (its row names the set).
      const set = detail?.nodeSet;
      const designed = design.nodes[node] ?? (set === undefined ? undefined : design.nodeSets?.[set]);
      const group = by === undefined ? null : by === 'rack' ? (designed?.rack ?? null) : (designed?.labels[by.label] ?? null);
      members.push({ node, group });
    }
    const last = rows.at(-1);
    if (rows.length < PAGE || last === undefined) break;
    afterSeq = last.seq;
  }
  if (members.length === 0) return undefined;
  const waves = assignWaves(members, rollout);
  if (waves.length > MAX_WAVES) {
    throw ApplicationFailure.nonRetryable(
      `run ${run} would have ${waves.length} waves; at most ${MAX_WAVES}: set a larger wave size or group otherwise`,
      FailureType.InvalidRequest,
    );
  }
  await store.setWaves(run, waves);
  return { count: waves.length, rollout };
}

/** Wave `wave` of `run` (name and size), or null when the run has no such wave. */
export async function waveInfo(store: RunStore, run: number, wave: number): Promise<WaveInfo | null> {
  const [found] = await store.waves(run, { afterIndex: wave - 1, limit: 1 });
  return found && found.index === wave ? { index: found.index, name: found.name, nodes: found.nodes } : null;
}

/** The nodes of wave `wave` that the run wrote or found right (success), as they are now. */
async function waveNodes(store: RunStore, nodes: NodeApi, run: number, wave: number): Promise<NodeState[]> {
  const names: string[] = [];
  for (let afterSeq = -1; ;) {
    const rows = await store.nodes(run, { status: 'success', wave, afterSeq, limit: PAGE });
    names.push(...rows.map((r) => r.node));
    const last = rows.at(-1);
    if (rows.length < PAGE || last === undefined) break;
    afterSeq = last.seq;
  }
  const states: NodeState[] = [];
  const pages = names.length > GET_THRESHOLD ? listNodes(nodes) : getNodes(nodes, names);
  const wanted = new Set(names);
  for await (const page of pages) {
    for (const item of page) {
      if ('error' in item) throw ApplicationFailure.nonRetryable(item.error.message, item.error.type);
      if (wanted.has(item.name)) states.push(item);
    }
  }
  return states;
}

/** What the health gate found: passed, or the verdict in words at its deadline. */
export type HealthOutcome = { healthy: true; checked: number } | { healthy: false; unhealthy: number; reason: string };

/**
 * The health gate after wave `wave` of `run`: polls every
 * {@link HEALTH_POLL_MS} ({@link HEALTH_POLL_LARGE_MS} for a wave whose
 * pods it LISTs cluster-wide) until every DaemonSet pod of the wave's nodes is as
 * it should be (see `waveHealth`), or `deadline` (epoch ms) passes.
 * Heartbeats each poll. Without workload access it fails (Forbidden) rather
 * than pass unchecked.
 */
export async function checkWaveHealth(
  deps: { store: RunStore; nodes: NodeApi; workloads?: WorkloadApi },
  input: { run: number; wave: number; deadline: number },
): Promise<HealthOutcome> {
  const { workloads } = deps;
  if (!workloads)
    throw ApplicationFailure.nonRetryable('the health gate needs to read DaemonSets and pods, and this worker has no workload access', FailureType.Forbidden);
  for (;;) {
    const nodes = await waveNodes(deps.store, deps.nodes, input.run, input.wave);
    const daemonSets = await all(workloads.listDaemonSets({ pageSize: DEFAULT_WORKLOAD_PAGE }));
    const pods = nodes.length === 0 ? new Map() : await podsOn(workloads, new Set(nodes.map((n) => n.name)));
    const health: WaveHealth = waveHealth(daemonSets, nodes, pods);
    Context.current().heartbeat({ unhealthy: health.unhealthy });
    if (health.unhealthy === 0) return { healthy: true, checked: health.checked };
    const every = nodes.length > PODS_BY_NODE_THRESHOLD ? HEALTH_POLL_LARGE_MS : HEALTH_POLL_MS;
    if (Date.now() + every > input.deadline) return { healthy: false, unhealthy: health.unhealthy, reason: healthText(health) };
    await Context.current().sleep(every);
  }
}
