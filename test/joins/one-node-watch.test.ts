/**
 * A worker runs one watch of Nodes, counted by the real kube-apiserver
 * (its `apiserver_longrunning_requests` gauge of open WATCHes on nodes):
 * one once its node cache is built, and still one while its join watcher
 * follows the same node informer, labelling a node that joins.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { APPLIED_ANNOTATION, UNINITIALIZED_TAINT_KEY } from '../../src/core/plan/constants.ts';
import { createJoins, type Joins } from '../../src/facade/joins.ts';
import { apiserverGet } from '../../stack/kube-metrics.ts';
import { metricValue } from '../../stack/prometheus.ts';
import { eventually } from '../api-support.ts';
import { adminCore, adminKubeconfigPath, createNode, startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

/** WATCH requests on Nodes the API server is serving now. */
async function openNodeWatches(): Promise<number> {
  const metrics = await apiserverGet(adminKubeconfigPath(), '/metrics');
  return metricValue(metrics, 'apiserver_longrunning_requests', { resource: 'nodes', subresource: '', verb: 'WATCH' });
}

/** The count once it has held for `ms` (sampled every 100 ms): watches of a process that just ended close within moments. */
async function settledWatches(ms = 1_000): Promise<number> {
  for (let tries = 0; tries < 50; tries++) {
    const first = await openNodeWatches();
    let held = true;
    for (let waited = 0; held && waited < ms; waited += 100) {
      await sleep(100);
      held = (await openNodeWatches()) === first;
    }
    if (held) return first;
  }
  assert.fail('the count of open Node watches did not settle');
}

describe('one watch of Nodes per worker', () => {
  const prefix = `ow${uniqueSuffix()}`;
  const site = prefixedSite(prefix);
  const siteName = `${prefix}-site`;
  let relabel: Awaited<ReturnType<typeof startRelabel>>;
  let joins: Joins;
  let before0 = 0;

  before(async () => {
    const { url } = await storeWithSite(site.files);
    before0 = await settledWatches();
    relabel = await startRelabel(url);
    joins = createJoins({ client: relabel.client, store: relabel.store, designs: relabel.designs, taskQueue: relabel.taskQueue, namespace: 'default' });
  });
  after(async () => {
    await joins.disable({ site: siteName }).catch(() => undefined);
    await relabel.stop();
  });

  it('the node cache and the join watcher share one watch, which the API server counts once', async () => {
    // The worker takes tasks once its copy of the Nodes is built: its watch is open by then.
    assert.equal(await settledWatches(), before0 + 1, 'the node cache: one watch');
    await joins.enable({ site: siteName, by: 'test', watch: { batchDelayMs: 50 } });
    await eventually(
      () => joins.status(siteName),
      (s) => s.watcher !== undefined,
      30_000,
      50,
    );
    const name = site.nodes[0] as string;
    await createNode(adminCore(), name, {}, [{ key: UNINITIALIZED_TAINT_KEY, effect: 'NoSchedule' }]);
    await eventually(
      () => adminCore().readNode({ name }),
      (n) => n.metadata?.annotations?.[APPLIED_ANNOTATION] !== undefined && !(n.spec?.taints ?? []).some((t) => t.key === UNINITIALIZED_TAINT_KEY),
      30_000,
      50,
    );
    assert.equal(await settledWatches(2_000), before0 + 1, 'the node cache and the join watcher: still one watch');
  });
});
