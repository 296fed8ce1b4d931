/**
 * The Temporal dev server (`temporal server start-dev`) with its Web UI and a
 * SQLite file, relabel's search attributes registered at start.
 */
import { join } from 'node:path';
import { SEARCH_ATTRIBUTES } from '../src/core/plan/constants.ts';
import { startProcess, waitUntil, portOpen, type ManagedProcess } from './processes.ts';
import { toolPath } from './tools.ts';

/**
 * Dynamic configuration of the local dev server, which runs every Temporal
 * service in one process on one SQLite connection:
 * - by default it re-reads the search attribute definitions and the
 *   namespace from its database, under one lock, every time it needs them
 *   (so that attributes added at run time show at once): several reads for
 *   every workflow started and closed. relabel's attributes are written
 *   into the namespace before the server starts, so its caches are right
 *   from the start;
 * - a task queue spread over four partitions (the server's default) only
 *   adds forwarding between partitions inside the one process, and leaves
 *   workflow tasks on partitions where no poller waits, to be written to
 *   the database and read back.
 */
export const DEV_SERVER_DYNAMIC_CONFIG: Readonly<Record<string, string>> = {
  'system.forceSearchAttributesCacheRefreshOnRead': 'false',
  'matching.numTaskqueueReadPartitions': '1',
  'matching.numTaskqueueWritePartitions': '1',
};

/**
 * The dev server flags every relabel Temporal server starts with, the
 * stack's and the workflow tests' alike: relabel's search attributes
 * registered, and {@link DEV_SERVER_DYNAMIC_CONFIG}.
 */
export function devServerFlags(): string[] {
  return [
    ...Object.entries(SEARCH_ATTRIBUTES).flatMap(([name, type]) => ['--search-attribute', `${name}=${type}`]),
    ...Object.entries(DEV_SERVER_DYNAMIC_CONFIG).flatMap(([key, value]) => ['--dynamic-config-value', `${key}=${value}`]),
  ];
}

/** The Temporal part of a running stack. */
export interface TemporalStack {
  process: ManagedProcess;
  /** gRPC address clients and workers connect to (host:port). */
  address: string;
  /** Base URL of the Temporal Web UI. */
  uiUrl: string;
}

/** Whether an HTTP GET of `url` answers 2xx. */
export async function httpOk(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
  await res.arrayBuffer();
  return res.ok;
}

/**
 * Starts the Temporal dev server under `dir` on loopback and waits until both
 * its frontend and Web UI answer. Throws with the log tail on failure.
 */
export async function startTemporal(
  dir: string,
  ports: { frontend: number; ui: number; http: number; metrics: number },
  env: NodeJS.ProcessEnv = process.env,
): Promise<TemporalStack> {
  const bin = toolPath('temporal', env);
  const proc = await startProcess(
    'temporal',
    bin,
    [
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(ports.frontend),
      '--ui-port',
      String(ports.ui),
      '--http-port',
      String(ports.http),
      '--metrics-port',
      String(ports.metrics),
      '--db-filename',
      join(dir, 'temporal.db'),
      // File SQLite without WAL is about ten times slower.
      '--sqlite-pragma',
      'journal_mode=wal',
      '--sqlite-pragma',
      'synchronous=off',
      '--log-level',
      'warn',
      ...devServerFlags(),
    ],
    join(dir, 'temporal.log'),
    env,
  );
  const address = `127.0.0.1:${ports.frontend}`;
  const uiUrl = `http://127.0.0.1:${ports.ui}`;
  await waitUntil(proc, 'frontend port open', () => portOpen(ports.frontend), 60_000);
  await waitUntil(proc, 'Web UI answering', () => httpOk(uiUrl), 60_000);
  return { process: proc, address, uiUrl };
}
