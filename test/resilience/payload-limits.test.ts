/**
 * A run over 20,000 targets the design does not know (the case that used to
 * push the workflow result past Temporal's payload limit): it ends with a
 * reason for every node, no payload anywhere near the limit, and its
 * per-node results paged through the facade, the CLI and the HTTP API;
 * retrying its 20,000 failures works.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { historyFigures } from '../../bench/history.ts';
import { startRelabel, temporalAddress, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

const TARGETS = 20_000;
const run = promisify(execFile);

describe('a run over 20,000 targets', () => {
  const prefix = `sc${uniqueSuffix()}`;
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let storeUrl: string;
  const targets = Array.from({ length: TARGETS }, (_, i) => `${prefix}-ghost-${String(i).padStart(5, '0')}`);

  before(async () => {
    storeUrl = (await storeWithSite(prefixedSite(prefix).files)).url;
    relabel = await startRelabel(storeUrl);
  });
  after(async () => relabel.stop());

  it('reports every node, keeps every payload small, pages the results, and retries the failures', async () => {
    const started = await relabel.runs.start({ targets });
    const done = await relabel.runs.wait(started);
    assert.equal(done.result?.status, 'failure');
    assert.deepEqual(done.result?.counts, { total: TARGETS, success: 0, failure: TARGETS, written: 0 });
    assert.equal(done.result?.failures.length, 50, 'a capped sample of failures');
    assert.ok(JSON.stringify(done.result).length < 20_000, `result of ${JSON.stringify(done.result).length} bytes`);
    assert.ok(JSON.stringify(done.progress).length < 20_000, 'progress answer bounded');
    const history = await historyFigures(relabel.client, started.workflowId, started.runId);
    assert.ok(history.largestPayload < 64 * 1024, `largest payload ${history.largestPayload} bytes`);
    assert.equal(history.children, 0, 'no child for a node that is not in the design');

    const page = await relabel.runs.nodes(started.run, { status: 'failure', offset: TARGETS - 10, limit: 100 });
    assert.equal(page.total, TARGETS);
    assert.deepEqual(
      page.items.map((n) => n.node),
      targets.slice(-10),
    );
    assert.ok(page.items.every((n) => n.error?.type === 'NodeNotInDesign'));

    // The CLI pages through the same results.
    const env = { ...process.env, TEMPORAL_ADDRESS: temporalAddress(), RELABEL_STORE_URL: storeUrl, RELABEL_TASK_QUEUE: relabel.taskQueue };
    const cli = await run(
      process.execPath,
      ['src/client.ts', 'status', started.workflowId, '--run-id', started.runId, '--offset', '19995', '--limit', '3', '-o', 'json'],
      { env, maxBuffer: 1 << 20 },
    ).catch((err: { stdout: string }) => err);
    const report = JSON.parse(cli.stdout) as { nodes: { total: number; offset: number; items: { node: string }[] } };
    assert.equal(report.nodes.total, TARGETS);
    assert.deepEqual(
      report.nodes.items.map((n) => n.node),
      targets.slice(19995, 19998),
    );
    const text = await run(process.execPath, ['src/client.ts', 'status', started.workflowId, '--run-id', started.runId, '--limit', '2'], { env }).catch(
      (err: { stdout: string }) => err,
    );
    assert.match(text.stdout, /nodes 1–2 of 20000 \(more with --offset 2\)/);
    assert.ok(text.stdout.length < 5000, 'the default answer is a page, not 20,000 rows');

    const retry = await relabel.runs.retry(started.workflowId, started.runId);
    assert.equal(retry.targets.length, TARGETS);
    assert.equal((await relabel.store.runs.get(retry.run)).retryOf, started.run);
    const retried = await relabel.runs.wait(retry);
    assert.deepEqual(retried.result?.counts, { total: TARGETS, success: 0, failure: TARGETS, written: 0 });
  });
});
