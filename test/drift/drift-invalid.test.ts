/**
 * A revision committed with invalid documents (as `docs commit --force`
 * does) against the real Temporal server: drift detection — through the
 * CLI and the facade, and as its Schedule starts it, straight on the
 * worker — and a plugin poll both fail with DocumentValidationFailed and
 * carry every document error to the client, the same list the core's
 * validation finds, not just the first one or none.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { validateSite } from '../../src/core/site/validate-site.ts';
import { createDrift } from '../../src/facade/drift.ts';
import { RelabelError, relabelErrorOf } from '../../src/facade/relabel-error.ts';
import { detectDrift } from '../../src/workflows/detect-drift.ts';
import { DRIFT_ID_PREFIX } from '../../src/contracts/drift-messages.ts';
import { PLUGIN_SCHEDULE_PREFIX } from '../../src/contracts/plugin-messages.ts';
import { pollPlugins } from '../../src/workflows/poll-plugins.ts';
import { exits, relabelCli, startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

describe('drift detection and plugin polls of an invalid revision', () => {
  const prefix = `di${uniqueSuffix()}`;
  const site = `${prefix}-site`;
  // One bad label key on every node: one error per node, all of them listed.
  const invalid = prefixedSite(prefix, (doc) => {
    if (doc.schema === 'drydock/BaremetalNode/v1') doc.data.metadata.owner_data = { ...doc.data.metadata.owner_data, 'bad key!': 'x' };
  });
  const checked = validateSite(invalid.files);
  assert.ok(!checked.ok);
  // The store names each file by its bucket: `site/nodes.yaml`.
  const expected = JSON.parse(JSON.stringify(checked.errors.map((e) => ({ ...e, source: `site/${e.source}` })))) as unknown[];
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let storeUrl: string;
  let revision: number;

  before(async () => {
    ({ url: storeUrl } = await storeWithSite(prefixedSite(prefix).files));
    relabel = await startRelabel(storeUrl);
    // The store takes what it is given, as `docs commit --force` makes it.
    await relabel.store.revisions.stage('site', invalid.files);
    revision = (await relabel.store.revisions.commit({ message: 'forced, invalid' })).id;
  });
  after(async () => {
    await relabel.stop();
  });

  /**
   * The failure of a workflow started (as its Schedule would start it), as
   * the client helper reads it: DocumentValidationFailed with every error.
   */
  const everyErrorOf = async (started: Promise<WorkflowHandle>): Promise<RelabelError> => {
    const err = await (await started).result().then(
      () => assert.fail('the workflow should have failed'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof WorkflowFailedError, String(err));
    const rejected = relabelErrorOf(err);
    assert.ok(rejected, `not a relabel failure: ${String(err)}`);
    assert.equal(rejected.type, 'DocumentValidationFailed');
    assert.deepEqual(rejected.details, expected);
    assert.equal(rejected.problemCount, expected.length);
    return rejected;
  };

  it('a detection started as its Schedule starts it carries every document error to the client', async () => {
    assert.ok(expected.length > 1, `${expected.length} error(s)`);
    const workflowId = `${DRIFT_ID_PREFIX}/${site}/scheduled-${uniqueSuffix()}`;
    const rejected = await everyErrorOf(relabel.client.workflow.start(detectDrift, { workflowId, taskQueue: relabel.taskQueue, args: [{ site }] }));
    assert.match(rejected.message, new RegExp(`^revision ${revision}: ${expected.length} document error\\(s\\)`));
  });

  it('`relabel drift` and the facade answer with the whole error list', async () => {
    const drift = createDrift({ client: relabel.client, store: relabel.store, designs: relabel.designs, taskQueue: relabel.taskQueue, namespace: 'default' });
    await assert.rejects(drift.detect({ site }), (err: unknown) => {
      assert.ok(err instanceof RelabelError);
      assert.equal(err.type, 'DocumentValidationFailed');
      assert.deepEqual(JSON.parse(JSON.stringify(err.details)), expected);
      return true;
    });
    const cli = exits(await relabelCli(['drift', '-o', 'json'], { RELABEL_STORE_URL: storeUrl, RELABEL_TASK_QUEUE: relabel.taskQueue }), 2);
    const { error } = JSON.parse(cli.stdout) as { error: { type: string; details: unknown[] } };
    assert.equal(error.type, 'DocumentValidationFailed');
    assert.deepEqual(error.details, expected);
  });

  it('a plugin poll carries every document error to the client', async () => {
    const workflowId = `${PLUGIN_SCHEDULE_PREFIX}/${site}/now-${uniqueSuffix()}`;
    const rejected = await everyErrorOf(relabel.client.workflow.start(pollPlugins, { workflowId, taskQueue: relabel.taskQueue, args: [{ site }] }));
    assert.match(rejected.message, /plugins are not polled until a valid revision is committed/);
  });
});
