/**
 * The Temporals the end-to-end benchmark measures on (`--temporal`; see
 * bench/e2e.ts), each in turn on the same stack and simulated cluster: the
 * stack's own dev server, or temporal-server on PostgreSQL
 * (stack/temporal-postgres.ts) started beside it for its passes and stopped
 * after them. Each gets its own client and task queues, and a view of the
 * stack in which it is the Temporal: the passes connect their workers to it,
 * read its metrics and count its processes' CPU (the idle dev server's is
 * left out while the other one is measured).
 */
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { freeLoopbackPort, stopProcess } from '../stack/processes.ts';
import { restartTemporal, StackTemporal, type StackInfo } from '../stack/stack.ts';
import { startTemporalPostgres } from '../stack/temporal-postgres.ts';

/** One Temporal of the run, ready for its passes. */
export interface BenchTemporal {
  kind: StackTemporal;
  /** The stack as its passes see it: this Temporal's address, metrics port and processes. */
  stack: StackInfo;
  client: Client;
  /** relabel's task queue on it; the engine floor's. */
  taskQueue: string;
  engineFloorTaskQueue: string;
}

/** The task queues of `kind`: the dev server keeps the names the benchmark always used. */
function taskQueues(kind: StackTemporal): { taskQueue: string; engineFloorTaskQueue: string } {
  const suffix = kind === StackTemporal.dev ? '' : `-${kind}`;
  return { taskQueue: `relabel-bench${suffix}`, engineFloorTaskQueue: `engine-floor-bench${suffix}` };
}

/**
 * Runs `passes` on the Temporal `kind` beside the stack in `stack` (whose
 * own Temporal is the dev server): for `postgres`, starts temporal-server
 * on a PostgreSQL of its own under `dir` first and stops both afterwards.
 */
export async function withBenchTemporal<T>(stack: StackInfo, dir: string, kind: StackTemporal, passes: (temporal: BenchTemporal) => Promise<T>): Promise<T> {
  let view = stack;
  let stop = async () => {};
  if (kind === StackTemporal.postgres) {
    const t0 = performance.now();
    const ports = { frontend: await freeLoopbackPort(), http: await freeLoopbackPort(), metrics: await freeLoopbackPort() };
    const server = await startTemporalPostgres(join(dir, 'temporal-postgres'), ports);
    stop = async () => {
      for (const p of [...server.processes].reverse()) await stopProcess(p);
    };
    view = {
      ...stack,
      temporal: kind,
      temporalAddress: server.address,
      temporalUiUrl: '',
      ports: { ...stack.ports, temporal: ports.frontend, temporalHttp: ports.http, temporalMetrics: ports.metrics },
      processes: [...stack.processes.filter((p) => p.name !== 'temporal'), ...server.processes],
    };
    console.log(`# temporal-server on PostgreSQL ready at ${server.address} in ${Math.round(performance.now() - t0)} ms`);
  }
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address: view.temporalAddress });
    return await passes({ kind, stack: view, client: new Client({ connection }), ...taskQueues(kind) });
  } finally {
    await connection?.close();
    await stop();
  }
}

/**
 * `--fresh-temporal`: restarts the stack's dev server on an empty database
 * (same ports; the bench's client reconnects) and puts the new process in
 * `stack`, which every pass's view shares, so that the CPU counted as
 * Temporal's is the new server's. Returns the milliseconds it took.
 */
export async function restartEmptyTemporal(stack: StackInfo): Promise<number> {
  const t0 = performance.now();
  const started = await restartTemporal(stack.dir, 0, { empty: true });
  const i = stack.processes.findIndex((p) => p.name === 'temporal');
  if (i < 0) throw new Error('--fresh-temporal: the stack runs no dev server');
  stack.processes[i] = started;
  return performance.now() - t0;
}
