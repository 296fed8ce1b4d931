/**
 * The join pass's scenarios, each timed per node from just before its
 * Node is created until the bench's own Node watch sees it labelled (every
 * design label present, relabel's uninitialized taint gone): nodes joining
 * one at a time, a burst joining at once, and nodes joining while an
 * operator's run over every registered node goes. Each scenario's row also
 * carries the runs it caused, read back once they ended: writes, whether
 * any node was written by two runs, history sizes against Temporal's limits.
 */
import type { CoreV1Api, V1Node } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import { UNINITIALIZED_TAINT_KEY } from '../../src/core/plan/constants.ts';
import { StartedVia } from '../../src/core/plan/run-audit.ts';
import type { Design } from '../../src/core/site/validate-site.ts';
import type { Runs } from '../../src/facade/runs/runs.ts';
import type { SourceFile } from '../../src/store/revisions/revision-store.ts';
import type { Store } from '../../src/store/store.ts';
import { nodeRequestCount } from '../../stack/kube-metrics.ts';
import { kwokNode } from '../../stack/kwok.ts';
import type { StackInfo } from '../../stack/stack.ts';
import { pool } from '../bench-nodes.ts';
import { withChangedNodes } from '../bench-site.ts';
import { historyProblems, runFigures, runsFrom, writers } from './join-runs.ts';
import { labelledAs, type Arrival, type LabelWatch } from './label-watch.ts';
import { percentiles } from './latency.ts';

/** A row of the report and what is wrong with it (nothing: ok). */
export interface PassOutcome {
  row: Record<string, unknown>;
  problems: string[];
}

/** What the scenarios share: the clients, the watch, the design nodes join into, and the next run number. */
export interface Scene {
  stack: StackInfo;
  core: CoreV1Api;
  client: Client;
  store: Store;
  runs: Runs;
  watch: LabelWatch;
  size: number;
  concurrency: number;
  /** Nodes created at once in a burst. */
  width: number;
  registered: readonly string[];
  siteFiles: SourceFile[];
  design: Design;
  /** The number the next run will get: every run from it on is the current scenario's. */
  nextRun: number;
  commit(files: SourceFile[], message: string): Promise<Design>;
}

/** Longest a node joining on its own may take before the pass gives up on it. */
const ONE_DEADLINE_MS = 30_000;
/** Longest a burst may take, besides {@link PER_NODE_DEADLINE_MS} per node: generous, as the machine's two cores are shared. */
const BURST_DEADLINE_MS = 60_000;
const PER_NODE_DEADLINE_MS = 200;
/** How soon after the operator's run ends each node that joined during it must be labelled. */
const AFTER_RUN_LIMIT_MS = 15_000;

/** A Node as a kubelet registers it with `--register-with-taints` relabel's uninitialized taint (KWOK plays the kubelet). */
function joiningNode(name: string): V1Node {
  return { ...kwokNode(name), spec: { taints: [{ key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' }] } };
}

/** What a scenario measured. */
interface Measured {
  t0: number;
  writes0: number;
  firstRun: number;
  created: Map<string, number>;
  arrivals: Map<string, Arrival>;
}

/** Starts measuring: the time, node writes so far, the next run number. */
async function mark(s: Scene): Promise<Measured> {
  return {
    t0: performance.now(),
    writes0: await nodeRequestCount(s.stack.adminKubeconfig, 'PATCH', { code: 200 }),
    firstRun: s.nextRun,
    created: new Map(),
    arrivals: new Map(),
  };
}

/** Creates `names` as joining nodes, `width` at once, noting when each create was sent. */
async function createJoiners(s: Scene, m: Measured, names: readonly string[], width: number): Promise<void> {
  await pool(names, width, async (name) => {
    m.created.set(name, performance.now());
    await s.core.createNode({ body: joiningNode(name) });
  });
}

const round = (n: number, digits = 2) => +n.toFixed(digits);

/** Milliseconds from `m.t0` until the last node was seen labelled (until now when some never were). */
export function lastArrivalMs(m: { t0: number; arrivals: ReadonlyMap<string, Arrival> }, complete: boolean): number {
  return (complete ? Math.max(...[...m.arrivals.values()].map((a) => a.at)) : performance.now()) - m.t0;
}

/** A scenario's row: latencies from creation, the runs it caused and their histories, and what is wrong. */
async function outcome(s: Scene, pass: string, joiners: readonly string[], m: Measured, extra: PassOutcome = { row: {}, problems: [] }): Promise<PassOutcome> {
  const missing = joiners.filter((n) => !m.arrivals.has(n));
  const ms = lastArrivalMs(m, missing.length === 0);
  const writes = (await nodeRequestCount(s.stack.adminKubeconfig, 'PATCH', { code: 200 })) - m.writes0;
  const records = await runsFrom(s.store.runs, m.firstRun);
  s.nextRun = m.firstRun + records.length;
  const figures = [];
  for (const r of records) figures.push(await runFigures(s.client, s.store.runs, r));
  const joinRuns = figures.filter((f) => f.via === StartedVia.join);
  const joinIds = new Set(joinRuns.map((f) => f.run));
  const twice = [
    ...(await writers(
      s.store.runs,
      figures.map((f) => f.run),
      new Set(joiners),
    )),
  ].filter(([, runs]) => runs.length > 1);
  const notByJoin = [...m.arrivals].filter(([, a]) => !a.applied || !joinIds.has(a.applied.run));
  const relabelWrites = joinRuns.reduce((sum, f) => sum + f.written, 0);
  const row = {
    nodes: s.size,
    pass,
    seconds: round(ms / 1000),
    ...percentiles([...m.arrivals].map(([name, a]) => a.at - (m.created.get(name) ?? m.t0))),
    joiners: joiners.length,
    labelled: m.arrivals.size,
    writesCounted: writes,
    writesPerJoinedNode: round(writes / joiners.length),
    relabelWritesPerJoinedNode: round(relabelWrites / joiners.length),
    refused: joinRuns.reduce((sum, f) => sum + f.refused, 0),
    joinRuns: joinRuns.length,
    maxEventsPerExecution: Math.max(0, ...figures.map((f) => f.maxEvents)),
    largestPayloadKB: round(Math.max(0, ...figures.map((f) => f.largestPayload)) / 1024, 1),
    // Each run's start and end, in seconds from the scenario's start: where the time went.
    runs: figures.slice(0, 20).map((f) => ({
      run: f.run,
      via: f.via,
      targets: f.targets,
      written: f.written,
      refused: f.refused,
      outcome: f.outcome,
      executions: f.executions,
      maxEvents: f.maxEvents,
      children: f.children,
      fromS: round((f.createdAt - performance.timeOrigin - m.t0) / 1000),
      toS: round((f.lastEventAt - performance.timeOrigin - m.t0) / 1000),
    })),
    ...extra.row,
  };
  const problems = [
    missing.length > 0 && `${missing.length} of ${joiners.length} not labelled by the deadline (${missing.slice(0, 3).join(', ')})`,
    twice.length > 0 &&
      `${twice.length} written by two runs (${twice
        .slice(0, 3)
        .map(([n, runs]) => `${n}: runs ${runs.join(', ')}`)
        .join('; ')})`,
    notByJoin.length > 0 &&
      `${notByJoin.length} labelled under no join run's record (${notByJoin
        .slice(0, 3)
        .map(([n, a]) => `${n}: ${a.applied ? `run ${a.applied.run}` : 'none'}`)
        .join(', ')})`,
    ...joinRuns
      .filter((f) => f.outcome !== 'success')
      .slice(0, 3)
      .map((f) => `join run ${f.run} ended ${f.outcome ?? 'without an outcome'}`),
    ...historyProblems(figures),
    ...extra.problems,
  ].filter((p): p is string => typeof p === 'string');
  return { row, problems };
}

/** (a) Nodes joining one at a time: each created once the one before is labelled. */
export async function oneAtATime(s: Scene, pass: string, joiners: readonly string[]): Promise<PassOutcome> {
  const m = await mark(s);
  for (const name of joiners) {
    s.watch.expect(name, labelledAs(s.design, name));
    m.created.set(name, performance.now());
    await s.core.createNode({ body: joiningNode(name) });
    const seen = (await s.watch.until([name], performance.now() + ONE_DEADLINE_MS)).get(name);
    if (!seen) break;
    m.arrivals.set(name, seen);
  }
  return outcome(s, pass, joiners, m);
}

/** (b) A scale-up: every node created as fast as the bench can, `width` at once. */
export async function burst(s: Scene, pass: string, joiners: readonly string[]): Promise<PassOutcome> {
  for (const name of joiners) s.watch.expect(name, labelledAs(s.design, name));
  const m = await mark(s);
  await createJoiners(s, m, joiners, s.width);
  const createMs = performance.now() - m.t0;
  m.arrivals = await s.watch.until(joiners, m.t0 + BURST_DEADLINE_MS + joiners.length * PER_NODE_DEADLINE_MS);
  return outcome(s, pass, joiners, m, { row: { createSeconds: round(createMs / 1000) }, problems: [] });
}

/**
 * (c) A revision changing every registered node is committed and an
 * operator's run over them started; the nodes join as soon as it goes. Two
 * rows: latency from each node's creation, and from the operator run's end
 * (its close time in Temporal), which must be at most 15 s for every node.
 */
export async function duringRun(s: Scene, pass: string, joiners: readonly string[]): Promise<PassOutcome[]> {
  const files = withChangedNodes(s.siteFiles, new Set(s.registered), `join${Date.now().toString(36)}`);
  s.design = await s.commit(files, 'bench: every registered node changed while nodes join');
  for (const name of joiners) s.watch.expect(name, labelledAs(s.design, name));
  const m = await mark(s);
  const operator = await s.runs.start({ targets: s.registered, concurrency: s.concurrency });
  await createJoiners(s, m, joiners, s.width);
  const createdAt = performance.now();
  const done = await s.runs.wait(operator, undefined, 100);
  const endAt = done.closeTime ? Date.parse(done.closeTime) - performance.timeOrigin : performance.now();
  m.arrivals = await s.watch.until(joiners, Math.max(performance.now(), endAt) + BURST_DEADLINE_MS + joiners.length * PER_NODE_DEADLINE_MS);
  const inOperatorRun = [];
  for (const name of joiners) if ((await s.store.runs.node(operator.run, name)) !== null) inOperatorRun.push(name);
  const status = done.result?.status ?? done.execution;
  const main = await outcome(s, pass, joiners, m, {
    row: {
      operatorRun: operator.run,
      operatorStatus: status,
      operatorSeconds: round((endAt - m.t0) / 1000),
      createdBeforeRunEnded: [...m.created.values()].filter((t) => t < endAt).length,
      createSeconds: round((createdAt - m.t0) / 1000),
    },
    problems: [
      ...(status === 'success' ? [] : [`the operator's run ${operator.run} ended ${status}`]),
      ...(inOperatorRun.length > 0 ? [`${inOperatorRun.length} joiners among the operator run's targets`] : []),
    ],
  });
  const afterEnd = [...m.arrivals.values()].map((a) => Math.max(0, a.at - endAt));
  const late = afterEnd.filter((ms) => ms > AFTER_RUN_LIMIT_MS).length;
  const fromEnd = {
    row: {
      nodes: s.size,
      pass: `${pass}: from the run's end`,
      seconds: round(Math.max(0, ...afterEnd) / 1000),
      ...percentiles(afterEnd),
      joiners: joiners.length,
      labelled: m.arrivals.size,
      limitMs: AFTER_RUN_LIMIT_MS,
    },
    problems: late > 0 ? [`${late} labelled more than ${AFTER_RUN_LIMIT_MS / 1000} s after the operator's run ended`] : [],
  };
  return [main, fromEnd];
}
