/**
 * The relabel worker's entry point: reads its settings from the flags and
 * the environment and runs the worker (src/worker/) with them.
 */
import { parseWorkerSettings } from './worker/config.ts';
import { runWorker } from './worker/run.ts';

if (import.meta.main) {
  runWorker(parseWorkerSettings(process.argv)).catch((err: unknown) => {
    console.error(`relabel-worker: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
