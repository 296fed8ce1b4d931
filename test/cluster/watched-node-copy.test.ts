/**
 * The worker's watched copy of the Nodes against the stack's real
 * kube-apiserver, through relabel's least-privilege kubeconfig: while the
 * cluster's Nodes change, a LIST served from the copy gives every Node as
 * a LIST of the server does, a write made just before it included and a
 * Node deleted just before it gone, and the server receives only the LIST
 * of one Node that gives the version to wait for.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { cachedNodeApi, clusterVersion, type NodeReadSource } from '../../src/kube/node-cache.ts';
import { NodeInformer } from '../../src/kube/node-informer.ts';
import { nodePageLister } from '../../src/kube/node-list.ts';
import { createNodeWatchApi } from '../../src/kube/node-watch.ts';
import { createNodeApi, loadKubeConfig, type NodeApi, type NodeState } from '../../src/kube/nodes.ts';
import { tokenBucket } from '../../src/kube/rate-limit.ts';
import { nodeRequestCount } from '../../stack/kube-metrics.ts';
import { adminCore, adminKubeconfigPath, createNode, kubeconfigPath, uniqueSuffix } from '../helpers.ts';

const NODES = 300;
const LABEL = 'relabel.test/node-cache';
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

async function everyNode(api: NodeApi, prefix: string): Promise<Map<string, NodeState>> {
  const found = new Map<string, NodeState>();
  for await (const page of api.listNodes({ pageSize: 100 })) for (const n of page) if (n.name.startsWith(prefix)) found.set(n.name, n);
  return found;
}

describe("the worker's watched copy of the Nodes, on the real API server", () => {
  const suffix = uniqueSuffix();
  const prefix = `nc-${suffix}-`;
  const names = Array.from({ length: NODES }, (_, i) => `${prefix}${String(i).padStart(3, '0')}`);
  const admin = adminCore();
  const kc = loadKubeConfig(kubeconfigPath());
  const limiter = tokenBucket(0, 0);
  const direct = createNodeApi(kc);
  const sources: NodeReadSource[] = [];
  const informer = new NodeInformer(createNodeWatchApi(kc, limiter), { maxNodes: 100_000 });
  const cached = cachedNodeApi(direct, informer, () => clusterVersion(nodePageLister(kc), limiter), {
    freshWaitMs: 2_000,
    onRead: (s) => sources.push(s),
  });

  before(async () => {
    for (let i = 0; i < names.length; i += 20) await Promise.all(names.slice(i, i + 20).map((n) => createNode(admin, n, { [LABEL]: suffix })));
  });
  after(async () => {
    cached.close();
    informer.close();
    await admin.deleteCollectionNode({ labelSelector: `${LABEL}=${suffix}` });
  });

  it('answers as a LIST does, with the write and the deletion made just before it, sending only a LIST of one Node', async () => {
    // Nodes that change every few ms, as heartbeats make them: the watch always has something to bring.
    let churning = true;
    const churn = (async () => {
      for (let i = 0; churning; i++) {
        await admin.patchNode({ name: names[0] as string, body: { metadata: { labels: { churn: String(i) } } } }, merge);
        await sleep(10);
      }
    })();
    try {
      for (let t = 0; t < 200 && (await everyNode(cached, prefix)).size < NODES; t++) await sleep(50);
      sources.length = 0;
      const listsBefore = await nodeRequestCount(adminKubeconfigPath(), 'LIST');
      await admin.patchNode({ name: names[1] as string, body: { metadata: { labels: { fresh: suffix } } } }, merge);
      await admin.deleteNode({ name: names[2] as string });
      const fromCopy = await everyNode(cached, prefix);
      const listsAfter = await nodeRequestCount(adminKubeconfigPath(), 'LIST');
      assert.deepEqual(sources, ['cache']);
      // The metric reads, the patch and the deletion are not Node LISTs; the cached read sent one, of one Node.
      assert.equal(listsAfter - listsBefore, 1);
      assert.equal(fromCopy.get(names[1] as string)?.labels.fresh, suffix, 'the write made just before is in the copy');
      assert.equal(fromCopy.has(names[2] as string), false, 'the Node deleted just before is gone');
      churning = false;
      await churn;
      await sleep(200);
      const fromServer = await everyNode(direct, prefix);
      // The copy may still be catching up with the last churn write: compare everything but that node's counter.
      const strip = (m: Map<string, NodeState>) =>
        [...m.values()].map((n) => (n.name === names[0] ? { ...n, resourceVersion: '', labels: { ...n.labels, churn: '' } } : n));
      assert.deepEqual(strip(fromCopy), strip(fromServer));
      assert.equal(fromCopy.size, NODES - 1);
    } finally {
      churning = false;
      await churn;
    }
  });
});
