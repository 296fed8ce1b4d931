/**
 * Replays recorded histories of real runs (test/histories, made by
 * scripts/record-histories.ts) against the current workflow code. A change
 * to updateLabels, relabelNode, pollPlugins, detectDrift, watchJoins or fleetRollout that would break runs already in flight —
 * steps reordered, an activity or child added or removed without a patch —
 * makes the replay fail with a nondeterminism error. See
 * docs/workflow-changes.md for how to change workflow code safely.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import proto from '@temporalio/proto';

const { temporal } = proto;
import { Worker } from '@temporalio/worker';
import { quietRuntime, workflowBundle } from '../helpers.ts';

const DIR = new URL('../histories/', import.meta.url).pathname;
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.binpb'))
  .sort();
const workflowIds = JSON.parse(readFileSync(`${DIR}workflow-ids.json`, 'utf8')) as Record<string, string>;

describe('recorded workflow histories replay against the current code', () => {
  it('has histories of every workflow and shape of run', () => {
    for (const name of [
      'relabel-node',
      'update-labels-partial',
      'update-labels-retry',
      'update-labels-dry-run',
      'update-labels-continued',
      'update-labels-after-continue',
      'update-labels-rejected',
      'update-labels-paused',
      'update-labels-cancelled',
      'update-labels-waves',
      'update-labels-aborted',
      'poll-plugins',
      'detect-drift',
      'detect-drift-release',
      'watch-joins-continued',
      'watch-joins-cancelled',
      'fleet-survey-plan',
      'fleet-rollout-waves',
      'fleet-rollout-halted',
      'fleet-rollout-continued',
      'fleet-rollout-after-continue',
      'fleet-rollout-site-halted',
      'update-labels-fleet-halted',
    ]) {
      assert.ok(files.includes(`${name}.binpb`), `test/histories/${name}.binpb is recorded`);
    }
  });

  for (const file of files) {
    it(`replays ${file}`, async () => {
      quietRuntime();
      const history = temporal.api.history.v1.History.decode(readFileSync(`${DIR}${file}`));
      await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, workflowIds[file]);
    });
  }
});
