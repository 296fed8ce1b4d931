import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { cachedNodeApi as cacheOver, type CachedNodeApi, type NodeCacheOptions, type NodeReadSource } from './node-cache.ts';
import { NodeInformer, type NodeInformerOptions } from './node-informer.ts';
import { WatchExpiredError, type NodeWatchApi, type NodeWatchEvent } from './node-watch.ts';
import type { NodeApi, NodeState } from './nodes.ts';

const node = (name: string, resourceVersion: string, labels: Record<string, string> = {}): NodeState => ({
  name,
  resourceVersion,
  labels,
  annotations: {},
  taints: [],
});

/** A cluster the test drives: what a LIST answers, its current version, and a watch fed by `emit`. */
function cluster(initial: NodeState[], listVersion = '10') {
  const state = { listed: 0, lists: 0, versionAsks: 0, current: listVersion, failNextWatch: undefined as Error | undefined };
  let push: ((e: NodeWatchEvent | { bookmark: string }) => void) | undefined;
  const watch: NodeWatchApi = {
    async list(_size, onPage) {
      state.lists++;
      await onPage(initial, { resourceVersion: listVersion });
      return listVersion;
    },
    watch(rv, onEvent, signal, onBookmark) {
      if (state.failNextWatch) {
        const err = state.failNextWatch;
        state.failNextWatch = undefined;
        return Promise.reject(err);
      }
      return new Promise((resolve) => {
        let version = rv;
        push = (e) => {
          if ('bookmark' in e) {
            version = e.bookmark;
            onBookmark?.(e.bookmark);
          } else {
            version = e.node.resourceVersion;
            onEvent(e);
          }
        };
        signal.addEventListener('abort', () => resolve(version), { once: true });
      });
    },
  };
  const api: NodeApi = {
    readNode: async () => assert.fail('no GET expected'),
    patchNode: async () => assert.fail('no PATCH expected'),
    async *listNodes() {
      state.listed++;
      yield initial;
    },
  };
  const emit = (e: NodeWatchEvent | { bookmark: string }) => {
    if (!push) throw new Error('no watch open');
    push(e);
  };
  return { state, watch, api, emit, version: async () => state.current };
}

/** The cache over an informer of its own, as the worker builds them; `close` stops both. */
function cachedNodeApi(
  api: NodeApi,
  watch: NodeWatchApi,
  version: () => Promise<string>,
  { maxNodes, log, ...options }: NodeCacheOptions & Pick<NodeInformerOptions, 'maxNodes' | 'log'>,
): CachedNodeApi {
  const informer = new NodeInformer(watch, { maxNodes, log });
  const cached = cacheOver(api, informer, version, options);
  const unsubscribe = cached.close;
  return Object.assign(cached, {
    close: () => {
      unsubscribe();
      informer.close();
    },
  });
}

async function read(api: NodeApi, pageSize = 2): Promise<NodeState[][]> {
  const pages: NodeState[][] = [];
  for await (const page of api.listNodes({ pageSize })) pages.push(page);
  return pages;
}

/** Heartbeats on `nodes` every `ms` until `stop` (the events a busy cluster's watch brings). */
function heartbeat(emit: (e: NodeWatchEvent) => void, c: { state: { current: string } }, names: string[], ms: number) {
  let on = true;
  void (async () => {
    for (let i = 0; on; i++) {
      const rv = String(Number(c.state.current) + 1);
      c.state.current = rv;
      emit({ type: 'MODIFIED', node: node(names[i % names.length] as string, rv) });
      await sleep(ms);
    }
  })();
  return () => (on = false);
}

describe('cachedNodeApi', () => {
  it('serves a LIST from its copy, in name order, once the watch has passed the cluster version', async () => {
    const c = cluster([node('b', '3'), node('a', '2'), node('c', '4')]);
    const sources: NodeReadSource[] = [];
    const cached = cachedNodeApi(c.api, c.watch, c.version, { maxNodes: 10, freshWaitMs: 200, onRead: (s) => sources.push(s) });
    try {
      await sleep(5);
      const stop = heartbeat(c.emit, c, ['a', 'b'], 5);
      await sleep(40);
      stop();
      // A change made just now: the read waits for the watch to bring it.
      c.state.current = String(Number(c.state.current) + 1);
      const changed = c.state.current;
      setTimeout(() => c.emit({ type: 'MODIFIED', node: node('c', changed, { zone: 'z1' }) }), 20);
      const pages = await read(cached);
      assert.deepEqual(
        pages.map((p) => p.map((n) => n.name)),
        [['a', 'b'], ['c']],
      );
      assert.deepEqual(pages[1]?.[0]?.labels, { zone: 'z1' });
      assert.equal(c.state.listed, 0, 'no LIST of every Node');
      assert.deepEqual(sources, ['cache']);
    } finally {
      cached.close();
    }
  });

  it('LISTs when the watch does not reach the cluster version within the wait', async () => {
    const c = cluster([node('a', '2')]);
    const sources: NodeReadSource[] = [];
    const cached = cachedNodeApi(c.api, c.watch, c.version, { maxNodes: 10, freshWaitMs: 150, onRead: (s) => sources.push(s) });
    try {
      await sleep(5);
      const stop = heartbeat(c.emit, c, ['a'], 2);
      await sleep(30);
      stop();
      // The cluster moved on (another kind's write) and the watch is silent.
      c.state.current = String(Number(c.state.current) + 5);
      const started = performance.now();
      await read(cached);
      assert.ok(performance.now() - started >= 140, 'waited for the watch first');
      assert.equal(c.state.listed, 1);
      // A bookmark past it lets the next read use the copy.
      const beat = heartbeat(c.emit, c, ['a'], 2);
      c.emit({ bookmark: c.state.current });
      await read(cached);
      beat();
      assert.deepEqual(sources, ['list', 'cache']);
    } finally {
      cached.close();
    }
  });

  it('LISTs at once on a cluster whose Nodes rarely change', async () => {
    const c = cluster([node('a', '2')]);
    const cached = cachedNodeApi(c.api, c.watch, c.version, { maxNodes: 10, freshWaitMs: 400 });
    try {
      // Built, and no change for longer than the wait.
      await sleep(450);
      const started = performance.now();
      await read(cached);
      assert.ok(performance.now() - started < 300, 'did not wait for a change');
      assert.equal(c.state.listed, 1);
    } finally {
      cached.close();
    }
  });

  it('right after it is built, waits for the first change rather than LIST', async () => {
    const c = cluster([node('a', '2')]);
    const sources: NodeReadSource[] = [];
    const cached = cachedNodeApi(c.api, c.watch, c.version, { maxNodes: 10, freshWaitMs: 400, onRead: (s) => sources.push(s) });
    try {
      await sleep(5);
      c.state.current = '11';
      setTimeout(() => c.emit({ type: 'MODIFIED', node: node('a', '11', { zone: 'z2' }) }), 30);
      const pages = await read(cached);
      assert.deepEqual(sources, ['cache']);
      assert.deepEqual(pages[0]?.[0]?.labels, { zone: 'z2' });
      assert.equal(c.state.listed, 0);
    } finally {
      cached.close();
    }
  });

  it('waits up to what its own LIST took when that is longer than the wait', async () => {
    const c = cluster([node('a', '2')]);
    const slow: NodeWatchApi = {
      ...c.watch,
      async list(size, onPage) {
        await sleep(400);
        return c.watch.list(size, onPage);
      },
    };
    const sources: NodeReadSource[] = [];
    const cached = cachedNodeApi(c.api, slow, c.version, { maxNodes: 10, freshWaitMs: 20, onRead: (s) => sources.push(s) });
    try {
      await read(cached);
      // The change comes well after 20 ms, well within the 400 ms the LIST took.
      c.state.current = '11';
      setTimeout(() => c.emit({ type: 'MODIFIED', node: node('a', '11', { zone: 'z3' }) }), 120);
      const pages = await read(cached);
      assert.deepEqual(sources, ['cache', 'cache']);
      assert.deepEqual(pages[0]?.[0]?.labels, { zone: 'z3' });
      assert.equal(c.state.listed, 0);
    } finally {
      cached.close();
    }
  });

  it('follows additions and deletions', async () => {
    const c = cluster([node('a', '2'), node('b', '3')]);
    const cached = cachedNodeApi(c.api, c.watch, c.version, { maxNodes: 10, freshWaitMs: 200 });
    try {
      await sleep(5);
      c.emit({ type: 'DELETED', node: node('a', '11') });
      c.emit({ type: 'ADDED', node: node('0', '12') });
      c.state.current = '12';
      const stop = heartbeat(c.emit, c, ['b'], 5);
      await sleep(30);
      const names = (await read(cached, 10)).flat().map((n) => n.name);
      stop();
      assert.deepEqual(names, ['0', 'b']);
      assert.equal(cached.size, 2);
    } finally {
      cached.close();
    }
  });

  it('drops the copy and LISTs every read once the cluster has more Nodes than it may hold', async () => {
    const c = cluster([node('a', '2'), node('b', '3')]);
    const logged: string[] = [];
    const cached = cachedNodeApi(c.api, c.watch, c.version, { maxNodes: 2, freshWaitMs: 200, log: (_level, m) => logged.push(m) });
    try {
      await sleep(5);
      c.emit({ type: 'ADDED', node: node('c', '11') });
      await sleep(5);
      assert.equal(cached.size, 0);
      assert.ok(
        logged.some((m) => m.includes('more than 2 Nodes')),
        logged.join('\n'),
      );
      await read(cached);
      assert.equal(c.state.listed, 1);
      assert.equal(c.state.lists, 1, 'the copy is not built again');
    } finally {
      cached.close();
    }
  });

  it('follows the watch from the first page on: changes made while the LIST goes on are in the copy it builds', async () => {
    const c = cluster([]);
    const pages = [
      [node('a', '2'), node('b', '3')],
      [node('c', '4'), node('d', '5'), node('e', '6')],
    ];
    const listing: NodeWatchApi = {
      ...c.watch,
      async list(_size, onPage) {
        await onPage(pages[0] as NodeState[], { resourceVersion: '10', remaining: 3 });
        // Between the pages: c changes, d is deleted, f is added and e deleted then added again.
        c.emit({ type: 'MODIFIED', node: node('c', '11', { zone: 'z2' }) });
        c.emit({ type: 'DELETED', node: node('d', '12') });
        c.emit({ type: 'ADDED', node: node('f', '13') });
        c.emit({ type: 'DELETED', node: node('e', '14') });
        c.emit({ type: 'ADDED', node: node('e', '15', { again: 'yes' }) });
        // The later page is of the LIST's version, older than every change above.
        await onPage(pages[1] as NodeState[], { resourceVersion: '10' });
        return '10';
      },
    };
    c.state.current = '15';
    const cached = cachedNodeApi(c.api, listing, c.version, { maxNodes: 10, freshWaitMs: 200 });
    try {
      await cached.ready();
      const stop = heartbeat(c.emit, c, ['a'], 5);
      const read1 = await read(cached, 10);
      stop();
      assert.equal(c.state.listed, 0, 'served from the copy');
      const byName = new Map(read1.flat().map((n) => [n.name, n]));
      assert.deepEqual([...byName.keys()], ['a', 'b', 'c', 'e', 'f']);
      assert.deepEqual(byName.get('c')?.labels, { zone: 'z2' }, "the watch's change, not the page's older c");
      assert.deepEqual(byName.get('e')?.labels, { again: 'yes' });
    } finally {
      cached.close();
    }
  });

  it("drops the copy on the first page when the server's count of the rest is over the limit, listing no further", async () => {
    const c = cluster([]);
    let pagesListed = 0;
    const listing: NodeWatchApi = {
      ...c.watch,
      async list(_size, onPage) {
        for (let i = 0; i < 3; i++) {
          pagesListed++;
          await onPage([node(`n${i}`, '2')], { resourceVersion: '10', remaining: 2 - i });
        }
        return '10';
      },
    };
    const logged: string[] = [];
    const cached = cachedNodeApi(c.api, listing, c.version, { maxNodes: 2, freshWaitMs: 200, log: (_level, m) => logged.push(m) });
    try {
      await cached.ready();
      assert.equal(pagesListed, 1);
      assert.equal(cached.size, 0);
      assert.ok(
        logged.some((m) => m.includes('more than 2 Nodes')),
        logged.join('\n'),
      );
      await read(cached);
      assert.equal(c.state.listed, 1, 'every read LISTs');
    } finally {
      cached.close();
    }
  });

  it('is ready once a slow build that keeps receiving pages ends, or once a build receives none for the stall time', async () => {
    const c = cluster([]);
    let stalled = false;
    const paging: NodeWatchApi = {
      ...c.watch,
      async list(_size, onPage) {
        // Ten pages, 30 ms apart: 300 ms in all, each page well within the 100-ms stall time; or, stalled, one page then none for 1 s.
        for (let i = 0; i < 10; i++) {
          await sleep(stalled && i === 1 ? 1000 : 30);
          await onPage([node(`n${i}`, '2')], { resourceVersion: '10' });
        }
        return '10';
      },
    };
    const slow = cachedNodeApi(c.api, paging, c.version, { maxNodes: 100, freshWaitMs: 20 });
    try {
      const t0 = performance.now();
      await slow.ready(100);
      assert.ok(performance.now() - t0 >= 250, `waited ${Math.round(performance.now() - t0)} ms for the whole build`);
      assert.equal(slow.size, 10);
    } finally {
      slow.close();
    }
    stalled = true;
    const stuck = cachedNodeApi(c.api, paging, c.version, { maxNodes: 100, freshWaitMs: 20 });
    try {
      const t0 = performance.now();
      await stuck.ready(100);
      const waited = performance.now() - t0;
      assert.ok(waited >= 100 && waited < 700, `waited ${Math.round(waited)} ms: the stall time after the last page, not the build`);
      assert.equal(stuck.size, 1);
    } finally {
      stuck.close();
    }
  });

  it('builds the copy again after the watch expires, and LISTs meanwhile', async () => {
    const c = cluster([node('a', '2')]);
    c.state.failNextWatch = new WatchExpiredError('too old');
    const cached = cachedNodeApi(c.api, c.watch, c.version, { maxNodes: 10, freshWaitMs: 200 });
    try {
      await sleep(20);
      assert.equal(c.state.lists, 2);
      const stop = heartbeat(c.emit, c, ['a'], 5);
      await sleep(30);
      await read(cached);
      stop();
      assert.equal(c.state.listed, 0);
    } finally {
      cached.close();
    }
  });

  it('gives no copy when the server answers versions that are not integers', async () => {
    const c = cluster([node('a', 'x')], 'abc');
    const cached = cachedNodeApi(c.api, c.watch, c.version, { maxNodes: 10, freshWaitMs: 200 });
    try {
      await read(cached);
      assert.equal(c.state.listed, 1);
    } finally {
      cached.close();
    }
  });
});
