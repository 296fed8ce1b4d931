/**
 * The benchmark's `engine-floor` pass: a fresh engine-floor worker process
 * (relabel's worker settings and Node flags), one `engineFloor` run over
 * every bench node, timed like relabel's passes, with the same figures and
 * checks: every node written once (as the API server counts PATCHes), one
 * child per node, no payload over 512 KB nor execution over 10,240 events,
 * every node carrying the values.
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { CoreV1Api } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import { nodeRequestCount } from '../../stack/kube-metrics.ts';
import type { StackInfo } from '../../stack/stack.ts';
import { temporalCounts, temporalFigures } from '../../stack/temporal-metrics.ts';
import { DEFAULT_CONTINUE_AS_NEW_AFTER, MAX_HISTORY_BYTES, MAX_HISTORY_EVENTS } from '../../src/workflows/update-labels-window.ts';
import { historyFigures, overHistoryLimits, perChildFigures } from '../history.ts';
import { monotonicUs, nodeWritesBefore, profileWindow, workerExecArgv, writeFigures } from '../write-figures.ts';
import { cpuOf, machineCpu, machineFigures, peakRssMiB } from '../proc-figures.ts';
import { nodesWithout } from '../bench-nodes.ts';
import { WORKER_ENV } from '../../src/worker/config.ts';
import type { engineFloor } from './workflows.ts';

/** The engine floor's own task queue by default (a normal one, as relabel's). */
const TASK_QUEUE = 'engine-floor-bench';

/** What the pass needs of the benchmark's run. */
export interface EngineFloorPassContext {
  stack: StackInfo;
  client: Client;
  /** Its task queue (default `engine-floor-bench`): its own on each Temporal. */
  taskQueue?: string;
  /** A client of the admin kubeconfig, for the final check. */
  core: CoreV1Api;
  size: number;
  prefix: string;
  concurrency: number;
  /** The worker's client QPS, as relabel's worker gets it (0: no limit). */
  kubeQps: number;
  continueAsNewAfter?: number;
  floorMs: number;
  /** Whether others (the simulated cluster's controllers) may write nodes too: then the API server counts at least the pass's writes. */
  othersWrite?: boolean;
  /** The row's pass name (default `engine-floor`; `engine-floor-again` after relabel's passes). */
  pass?: string;
}

/** Forks the engine-floor worker; resolves once it is created. */
function startFloorWorker(stack: StackInfo, taskQueue: string, kubeQps: number, pass: string): Promise<ChildProcess> {
  const child = fork(new URL('./worker.ts', import.meta.url).pathname, [], {
    env: {
      ...process.env,
      // The process settings of relabel's worker, so that the two differ only in their code.
      ...WORKER_ENV,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      KUBECONFIG: stack.kubeconfig,
      ENGINE_FLOOR_TASK_QUEUE: taskQueue,
      ENGINE_FLOOR_KUBE_QPS: String(kubeQps),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: workerExecArgv(pass),
  });
  return new Promise((resolve, reject) => {
    child.once('message', () => resolve(child));
    child.once('exit', (code) => reject(new Error(`engine-floor worker exited early with ${code}`)));
  });
}

/**
 * Runs the pass; returns its time, its row of figures and what went wrong
 * (nothing, when every node was written once and carries the values).
 */
export async function engineFloorPass(ctx: EngineFloorPassContext): Promise<{ ms: number; row: Record<string, unknown>; problems: string[] }> {
  const { stack, client, size } = ctx;
  const taskQueue = ctx.taskQueue ?? TASK_QUEUE;
  const pass = ctx.pass ?? 'engine-floor';
  const worker = await startFloorWorker(stack, taskQueue, ctx.kubeQps, pass);
  try {
    const tag = Date.now().toString(36);
    const writesBefore = await nodeRequestCount(stack.adminKubeconfig, 'PATCH', { code: 200 });
    const writes0 = await nodeWritesBefore({ adminKubeconfig: stack.adminKubeconfig, prefix: ctx.prefix });
    const metricsUrl = `http://127.0.0.1:${stack.ports.temporalMetrics}/metrics`;
    const temporal0 = await temporalCounts(metricsUrl, taskQueue);
    const cpu0 = cpuOf(stack, worker);
    const machine0 = machineCpu();
    const [t0, from] = [performance.now(), monotonicUs()];
    const handle = await client.workflow.start<typeof engineFloor>('engineFloor', {
      taskQueue,
      workflowId: `engine-floor-${tag}`,
      args: [
        {
          prefix: ctx.prefix,
          tag,
          concurrency: ctx.concurrency,
          continueAsNewAfter: ctx.continueAsNewAfter ?? DEFAULT_CONTINUE_AS_NEW_AFTER,
          maxHistoryEvents: MAX_HISTORY_EVENTS,
          maxHistoryBytes: MAX_HISTORY_BYTES,
        },
      ],
    });
    const result = await handle.result();
    const [ms, to] = [performance.now() - t0, monotonicUs()];
    const cpu1 = cpuOf(stack, worker);
    const machine = machineFigures(machine0, machineCpu(), ms / 1000);
    const cpuSecondsUsed = Object.fromEntries(Object.entries(cpu1).map(([k, v]) => [k, +(v - (cpu0[k] ?? 0)).toFixed(1)]));
    const writes = (await nodeRequestCount(stack.adminKubeconfig, 'PATCH', { code: 200 })) - writesBefore;
    const history = await historyFigures(client, handle.workflowId, handle.firstExecutionRunId);
    const written = await writeFigures({ adminKubeconfig: stack.adminKubeconfig, prefix: ctx.prefix }, writes0, worker);
    // The server publishes its counters about once a second.
    await new Promise((r) => setTimeout(r, 2000));
    const temporalServer = temporalFigures(temporal0, await temporalCounts(metricsUrl, taskQueue), history.children);
    const wrong = await nodesWithout(ctx.core, ctx.prefix, tag);
    const row = {
      nodes: size,
      pass,
      seconds: +(ms / 1000).toFixed(2),
      ratioToFloor: +(ms / ctx.floorMs).toFixed(2),
      nodesPerSecond: Math.round(size / (ms / 1000)),
      written: result.written,
      writesCounted: writes,
      failed: result.failed,
      children: history.children,
      executions: history.executions,
      parentEvents: history.events,
      eventsPerChangedNode: history.children > 0 ? +(history.allEvents / history.children).toFixed(1) : null,
      largestPayloadKB: +(history.largestPayload / 1024).toFixed(1),
      workerPeakRssMiB: peakRssMiB(worker.pid as number),
      cpuSeconds: cpuSecondsUsed,
      machine,
      cpuMsPerChangedNode:
        history.children > 0 ? Object.fromEntries(Object.entries(cpuSecondsUsed).map(([k, v]) => [k, +((v * 1000) / history.children).toFixed(1)])) : null,
      temporalServer,
      ...written,
      ...perChildFigures(history),
      ...profileWindow(from, to),
      wrongNodes: wrong.length,
    };
    const problems = [
      result.written !== size && `result says ${result.written} written, expected ${size}`,
      (ctx.othersWrite ? writes < size : writes !== size) && `${writes} writes, expected ${size}`,
      result.failed !== 0 && `${result.failed} children failed`,
      history.children !== size && `${history.children} children, expected ${size}`,
      wrong.length > 0 && `${wrong.length} nodes without the values, e.g. ${wrong.slice(0, 3).join(', ')}`,
      ...overHistoryLimits(history),
    ].filter((p): p is string => typeof p === 'string');
    return { ms, row, problems };
  } finally {
    worker.kill('SIGTERM');
    await new Promise((r) => worker.once('exit', r));
  }
}
