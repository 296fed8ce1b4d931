import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { cachedNodeApi } from './node-cache.ts';
import { NodeInformer, type NodeSubscriber } from './node-informer.ts';
import type { NodeWatchApi, NodeWatchEvent } from './node-watch.ts';
import type { NodeApi, NodeState } from './nodes.ts';

const node = (name: string, resourceVersion: string): NodeState => ({ name, resourceVersion, labels: {}, annotations: {}, taints: [] });

/**
 * A cluster of `nodes` behind a NodeWatchApi that counts what the API
 * server would see: LISTs, watches started, watches open at once. `emit`
 * sends a change to every open watch.
 */
function counted(nodes: NodeState[], listVersion = '10') {
  const seen = { lists: 0, watches: 0, open: 0, mostOpen: 0 };
  const sinks = new Set<(e: NodeWatchEvent) => void>();
  const watch: NodeWatchApi = {
    async list(_size, onPage) {
      seen.lists++;
      await onPage(nodes, { resourceVersion: listVersion });
      return listVersion;
    },
    watch(rv, onEvent, signal) {
      seen.watches++;
      seen.mostOpen = Math.max(seen.mostOpen, ++seen.open);
      sinks.add(onEvent);
      return new Promise((resolve) => {
        const end = () => {
          seen.open--;
          sinks.delete(onEvent);
          resolve(rv);
        };
        if (signal.aborted) end();
        else signal.addEventListener('abort', end, { once: true });
      });
    },
  };
  const emit = (e: NodeWatchEvent) => {
    for (const sink of sinks) sink(e);
  };
  return { seen, watch, emit };
}

/** A subscriber that records what it is told: the Nodes of each sync, and the changes. */
function recorder() {
  const told = { syncs: [] as string[][], changes: [] as string[], failures: [] as string[] };
  let listing: string[] = [];
  const subscriber: NodeSubscriber = {
    listing: () => (listing = []),
    listed: (nodes) => listing.push(...nodes.map((n) => n.name)),
    synced: () => told.syncs.push(listing.sort()),
    changed: (e) => told.changes.push(`${e.type} ${e.node.name}`),
    failed: (during) => told.failures.push(during),
  };
  return { told, subscriber };
}

const api: NodeApi = {
  readNode: async () => assert.fail('no GET expected'),
  patchNode: async () => assert.fail('no PATCH expected'),
  listNodes: async function* () {
    yield [];
  },
};

describe('NodeInformer', () => {
  it('runs one LIST and one watch for the node cache and every join watcher; a subscriber that comes later is synced from the copy', async () => {
    const c = counted([node('a', '2'), node('b', '3')]);
    const informer = new NodeInformer(c.watch, { maxNodes: 10 });
    const cache = cachedNodeApi(api, informer, async () => '10');
    try {
      await cache.ready();
      const first = recorder();
      const second = recorder();
      const one = informer.subscribe(first.subscriber);
      const two = informer.subscribe(second.subscriber);
      await sleep(5);
      c.emit({ type: 'ADDED', node: node('c', '11') });
      c.emit({ type: 'DELETED', node: node('a', '12') });
      const late = recorder();
      const three = informer.subscribe(late.subscriber);
      await sleep(5);
      for (const { told } of [first, second]) {
        assert.deepEqual(told.syncs, [['a', 'b']]);
        assert.deepEqual(told.changes, ['ADDED c', 'DELETED a']);
      }
      assert.deepEqual(late.told.syncs, [['b', 'c']], 'the copy as the watch left it');
      await one.resync();
      assert.deepEqual(
        first.told.syncs,
        [
          ['a', 'b'],
          ['b', 'c'],
        ],
        'a resync from the copy too',
      );
      assert.deepEqual([c.seen.lists, c.seen.watches, c.seen.mostOpen], [1, 1, 1], 'one LIST and one watch in all');
      assert.equal(informer.resourceVersion, '12');
      for (const s of [one, two, three]) s.close();
    } finally {
      cache.close();
      informer.close();
    }
  });

  it('without a copy, starts at its first subscriber, LISTs again for a later one on the same single watch, and stops when the last leaves', async () => {
    const c = counted([node('a', '2')]);
    const informer = new NodeInformer(c.watch, { maxNodes: 0 });
    try {
      await sleep(5);
      assert.equal(c.seen.lists, 0, 'nothing follows the Nodes yet');
      const first = recorder();
      const one = informer.subscribe(first.subscriber);
      await sleep(5);
      const second = recorder();
      const two = informer.subscribe(second.subscriber);
      await sleep(5);
      assert.deepEqual(second.told.syncs, [['a']]);
      assert.deepEqual(first.told.syncs, [['a'], ['a']], 'the LIST for the later one syncs both');
      assert.deepEqual([c.seen.lists, c.seen.mostOpen, c.seen.open], [2, 1, 1]);
      one.close();
      two.close();
      await sleep(5);
      assert.equal(c.seen.open, 0, 'the watch stops with its last subscriber');
    } finally {
      informer.close();
    }
  });

  it('drops its copy when the cluster outgrows it, and goes on watching for its subscribers', async () => {
    const c = counted([node('a', '2')]);
    const warned: string[] = [];
    const informer = new NodeInformer(c.watch, { maxNodes: 1, log: (_level, message) => warned.push(message) });
    try {
      const follower = recorder();
      const sub = informer.subscribe(follower.subscriber);
      await informer.ready();
      await sleep(5);
      c.emit({ type: 'ADDED', node: node('b', '11') });
      c.emit({ type: 'MODIFIED', node: node('b', '12') });
      await sleep(5);
      assert.equal(informer.size, 0);
      assert.equal(informer.current, false);
      assert.ok(
        warned.some((m) => m.includes('more than 1 Nodes')),
        warned.join('\n'),
      );
      assert.deepEqual(follower.told.changes, ['ADDED b', 'MODIFIED b']);
      assert.equal(c.seen.open, 1, 'still watching');
      sub.close();
      await sleep(5);
      assert.equal(c.seen.open, 0);
    } finally {
      informer.close();
    }
  });

  it('tells its subscribers of a lost watch, and syncs them again from its next LIST', async () => {
    const c = counted([node('a', '2')]);
    let broken = true;
    const flaky: NodeWatchApi = {
      ...c.watch,
      watch: (rv, onEvent, signal) => {
        if (!broken) return c.watch.watch(rv, onEvent, signal);
        broken = false;
        return Promise.reject(new Error('connection reset'));
      },
    };
    const informer = new NodeInformer(flaky, { maxNodes: 0 });
    const follower = recorder();
    const sub = informer.subscribe(follower.subscriber);
    try {
      for (let i = 0; i < 100 && follower.told.syncs.length < 1; i++) await sleep(20);
      assert.deepEqual(follower.told.failures, ['watch']);
      assert.deepEqual(follower.told.syncs, [['a']]);
      assert.equal(c.seen.lists, 2, 'listed again after the backoff');
    } finally {
      sub.close();
      informer.close();
    }
  });
});
