/**
 * The relabel worker's entry point: reads its settings from the flags and
 * the environment and runs the worker (src/worker/) with them, injecting
 * the facade's run starter, through which heal and join runs start as
 * ordinary numbered runs, and its site run preparer, through which a fleet
 * rollout starts this site's runs (src/worker/ does not import the facade).
 * With `--role centre` it runs the fleet's workflows only, and neither port
 * is used: the centre has no store for them to start runs in.
 */
import { facadeRunStarter, facadeSiteRuns } from './facade/runs/run-starter.ts';
import { parseWorkerSettings } from './worker/config.ts';
import { runWorker } from './worker/run.ts';

if (import.meta.main) {
  const settings = parseWorkerSettings(process.argv);
  runWorker(settings, { runStarter: facadeRunStarter(settings.config), siteRuns: facadeSiteRuns(settings.config) }).catch((err: unknown) => {
    console.error(`relabel-worker: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
