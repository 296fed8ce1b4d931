/**
 * The join pass's eyes: one Node watch in the bench process (a LIST, then a
 * watch from its resourceVersion, as the join watcher itself does) that
 * notes the moment each expected node is first seen as its check wants it,
 * precise to the watch event rather than to a polling interval.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { readAppliedRun, type AppliedRun } from '../../src/core/plan/applied-run.ts';
import { UNINITIALIZED_TAINT_KEY } from '../../src/core/plan/constants.ts';
import type { Design } from '../../src/core/site/validate-site.ts';
import { createNodeWatchApi, WatchExpiredError } from '../../src/kube/node-watch.ts';
import type { NodeState } from '../../src/kube/nodes.ts';
import { UNLIMITED } from '../../src/kube/rate-limit.ts';

/** When a node was seen as wanted (`performance.now()` ms) and the run and revision its applied-run record then named (null: none). */
export interface Arrival {
  at: number;
  applied: AppliedRun | null;
}

/** A running watch; see {@link startLabelWatch}. */
export interface LabelWatch {
  /** Waits for `name` to be seen with `done` true of it; call before the node is created. */
  expect(name: string, done: (node: NodeState) => boolean): void;
  /** The arrivals of `names` once all have arrived, or those that have by `deadline` (`performance.now()` ms). */
  until(names: readonly string[], deadline: number): Promise<Map<string, Arrival>>;
  stop(): Promise<void>;
}

/** Nodes a LIST page holds. */
const LIST_PAGE = 1000;

/** Whether `node` carries every label the design gives it and no longer relabel's uninitialized taint. */
export function labelledAs(design: Design, name: string): (node: NodeState) => boolean {
  const want = Object.entries(design.nodes[name]?.labels ?? {});
  if (want.length === 0) throw new Error(`the design does not name ${name}`);
  return (node) => want.every(([k, v]) => node.labels[k] === v) && !node.taints.some((t) => t.key === UNINITIALIZED_TAINT_KEY);
}

/** Whether `node` carries every one of `labels`. */
export function carries(labels: Record<string, string>): (node: NodeState) => boolean {
  const want = Object.entries(labels);
  return (node) => want.every(([k, v]) => node.labels[k] === v);
}

/**
 * Lists every Node, then watches from the list's version until stopped:
 * again from the newest version seen when the server ends a watch, listing
 * again on 410 Gone, after a short pause on any other error.
 */
export async function startLabelWatch(kc: KubeConfig): Promise<LabelWatch> {
  const api = createNodeWatchApi(kc, UNLIMITED);
  const stopping = new AbortController();
  const expected = new Map<string, (node: NodeState) => boolean>();
  const arrivals = new Map<string, Arrival>();
  const waiters = new Set<() => void>();

  const observe = (node: NodeState) => {
    const done = expected.get(node.name);
    if (!done?.(node)) return;
    expected.delete(node.name);
    arrivals.set(node.name, { at: performance.now(), applied: readAppliedRun(node.annotations) });
    for (const wake of waiters) wake();
  };
  const list = () => api.list(LIST_PAGE, (page) => page.forEach(observe));

  let version = await list();
  const loop = (async () => {
    while (!stopping.signal.aborted) {
      try {
        version = await api.watch(version, (e) => e.type !== 'DELETED' && observe(e.node), stopping.signal);
      } catch (err) {
        if (stopping.signal.aborted) break;
        if (!(err instanceof WatchExpiredError)) await sleep(250);
        version = await list().catch(() => version);
      }
    }
  })();

  return {
    expect(name, done) {
      arrivals.delete(name);
      expected.set(name, done);
    },
    until(names, deadline) {
      const seen = () => {
        const out = new Map<string, Arrival>();
        for (const n of names) {
          const a = arrivals.get(n);
          if (a) out.set(n, a);
        }
        return out;
      };
      return new Promise((resolve) => {
        const finish = () => {
          waiters.delete(check);
          clearTimeout(timer);
          resolve(seen());
        };
        const check = () => {
          if (names.every((n) => arrivals.has(n))) finish();
        };
        const timer = setTimeout(finish, Math.max(0, deadline - performance.now()));
        waiters.add(check);
        check();
      });
    },
    async stop() {
      stopping.abort();
      await loop;
    },
  };
}
