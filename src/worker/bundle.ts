/**
 * The workflow bundle, built in a short-lived child process: webpack's peak
 * memory (a few hundred MiB) then never counts against the long-running
 * worker, which only loads the finished bundle file.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';

/** Path of the workflow code the worker bundles. */
export const WORKFLOWS_PATH = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

/**
 * Bundles the workflow code in a child process and returns the bundle
 * file's path (in a fresh temporary directory). Rejects with the child's
 * exit code when bundling fails.
 */
export async function buildBundleFile(): Promise<string> {
  const out = join(mkdtempSync(join(tmpdir(), 'relabel-bundle-')), 'workflows.js');
  const child = fork(fileURLToPath(import.meta.url), [out], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`bundling the workflow code failed (exit ${code})`);
  return out;
}

if (import.meta.main) {
  const out = process.argv[2];
  if (!out) throw new Error('usage: src/worker/bundle.ts OUTPUT_FILE');
  const { code } = await bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') });
  writeFileSync(out, code);
}
