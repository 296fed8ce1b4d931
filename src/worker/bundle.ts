/**
 * The workflow bundle, built in a short-lived child process: webpack's peak
 * memory (a few hundred MiB) then never counts against the long-running
 * worker, which only loads the finished bundle.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, type BundleOptions, type WorkflowBundle } from '@temporalio/worker';

/** Path of the workflow code the worker bundles. */
export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

/**
 * How relabel's workflow code is bundled, by the worker and the tests
 * alike. The workflow modules are preloaded: evaluated once per worker
 * thread and shared by every workflow it runs, instead of once per
 * workflow (each `relabelNode` child evaluated all 33 of relabel's
 * modules, most of them the parent's). Sharing is safe because no module
 * keeps state at module scope beyond constants, definitions (queries,
 * updates, search attribute keys, activity proxies, which reach the
 * running workflow only when called) and one bounded memo of a pure
 * function (`owned-labels.ts`); `test/architecture.test.ts` holds them
 * to that.
 */
export function workflowBundleOptions(): BundleOptions {
  return { workflowsPath: WORKFLOWS_PATH, preloadModules: [WORKFLOWS_PATH], logger: new DefaultLogger('WARN') };
}

/**
 * Bundles the workflow code in a child process and returns the bundle's
 * code (about 2 MB). The child writes it to a fresh temporary directory,
 * which is removed once read, whether bundling succeeded or not: the
 * worker leaves nothing in the temporary directory. Rejects with the
 * child's exit code when bundling fails.
 */
export async function buildBundle(): Promise<WorkflowBundle> {
  const dir = mkdtempSync(join(tmpdir(), 'relabel-bundle-'));
  try {
    const out = join(dir, 'workflows.js');
    const child = fork(fileURLToPath(import.meta.url), [out], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    if (code !== 0) throw new Error(`bundling the workflow code failed (exit ${code})`);
    return { code: readFileSync(out, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const out = process.argv[2];
  if (!out) throw new Error('usage: src/worker/bundle.ts OUTPUT_FILE');
  const { code } = await bundleWorkflowCode(workflowBundleOptions());
  writeFileSync(out, code);
}
