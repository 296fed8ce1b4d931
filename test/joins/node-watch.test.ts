/**
 * The join watcher's list and watch against the real kube-apiserver: the
 * list gives the resourceVersion to watch from, the watch reports a node
 * created, changed and deleted after it, in order, with bookmarks moving
 * the version on. (What the watcher does with a version the server no
 * longer has is unit-tested beside it.)
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { createNodeWatchApi, type NodeWatchEvent } from '../../src/kube/node-watch.ts';
import { loadKubeConfig } from '../../src/kube/nodes.ts';
import { tokenBucket } from '../../src/kube/rate-limit.ts';
import { adminCore, createNode, kubeconfigPath, uniqueSuffix } from '../helpers.ts';

describe('Node list and watch (the join watcher)', () => {
  const api = createNodeWatchApi(loadKubeConfig(kubeconfigPath()), tokenBucket(0, 0));

  it('lists from a resourceVersion and watches every change after it, in order', async () => {
    const core = adminCore();
    const name = `nw${uniqueSuffix()}`;
    // Three Nodes at least, so that the list takes two pages of two.
    for (const n of ['before', 'before-2', 'before-3']) await createNode(core, `${name}-${n}`);
    const listed: string[] = [];
    const told: { resourceVersion: string; remaining?: number }[] = [];
    const version = await api.list(2, (page, list) => {
      assert.ok(page.length <= 2, 'pages of the size asked for');
      listed.push(...page.map((n) => n.name));
      told.push(list);
    });
    assert.ok(listed.includes(`${name}-before`), 'the list holds a node created before it');
    assert.match(version, /^\d+$/);
    assert.ok(
      told.every((t) => t.resourceVersion === version),
      'every page tells the list version',
    );
    // The server counts what is left on every page but the last, so the first page's count gives the whole list's size.
    assert.ok(told.length > 1, 'more than one page');
    assert.equal((told[0]?.remaining ?? -1) + 2, listed.length, 'the first page counts the Nodes after it');
    const events: NodeWatchEvent[] = [];
    const stop = new AbortController();
    const watching = api.watch(version, (e) => events.push(e), stop.signal);
    await createNode(core, name);
    await core.patchNode({ name, body: { metadata: { labels: { 'example.com/x': 'y' } } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
    await core.deleteNode({ name });
    const deadline = Date.now() + 10_000;
    while (!events.some((e) => e.type === 'DELETED' && e.node.name === name) && Date.now() < deadline) await sleep(50);
    stop.abort();
    const last = await watching;
    const mine = events.filter((e) => e.node.name === name);
    assert.deepEqual(
      mine.map((e) => e.type),
      ['ADDED', 'MODIFIED', 'DELETED'],
    );
    assert.equal(mine[1]?.node.labels['example.com/x'], 'y');
    assert.ok(mine[0]?.node.uid, 'events carry the uid');
    assert.ok(BigInt(last) >= BigInt(mine[2]?.node.resourceVersion ?? '0'), 'the watch ends at the newest version it saw');
  });
});
