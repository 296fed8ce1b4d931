/**
 * The engine floor's activities: one page of the paginated Node LIST, and
 * one guarded write of one node. Only the benchmark's engine-floor worker
 * registers them; product code never imports them.
 */
import { ApiException, CoreV1Api, type KubeConfig, type V1Node } from '@kubernetes/client-node';
import { pointerToken, type JsonPatchOp } from '../../src/core/plan/node-guard.ts';
import { isStaleWrite } from '../../src/kube/errors.ts';
import { createNodeApi, type NodeState } from '../../src/kube/nodes.ts';
import { FLOOR_LABEL_KEYS, FLOOR_OWNED_ANNOTATION, floorValues } from '../floor-labels.ts';

/** Writes of one node that met a changed `test` before the activity gives up (as relabel's conflict limit). */
const MAX_STALE_WRITES = 5;

/**
 * What the write of one node depends on, as the LIST saw it: its uid, and
 * its values of the floor's keys only (absent keys left out), so a page of
 * 500 stays a few tens of KB. `null`: the node had no labels (annotations)
 * map at all.
 */
export type FloorNode = {
  name: string;
  uid: string;
  labels: Record<string, string> | null;
  annotations: Record<string, string> | null;
};

/** One page of the LIST: the nodes with the prefix, the token of the next page, the last name the page held. */
export type FloorPage = { nodes: FloorNode[]; cont?: string; last?: string };

/** The tests and adds of one map: each key tested as read (absent: `null`), then set; an absent map is tested absent and added whole. */
function mapOps(
  field: 'labels' | 'annotations',
  read: Record<string, string> | null,
  next: Record<string, string>,
): { tests: JsonPatchOp[]; adds: JsonPatchOp[] } {
  const base = `/metadata/${field}`;
  if (read === null) return { tests: [{ op: 'test', path: base, value: null }], adds: [{ op: 'add', path: base, value: next }] };
  const entries = Object.entries(next);
  return {
    tests: entries.map(([k]) => ({ op: 'test', path: `${base}/${pointerToken(k)}`, value: read[k] ?? null })),
    adds: entries.map(([k, v]) => ({ op: 'add', path: `${base}/${pointerToken(k)}`, value: v })),
  };
}

/**
 * The floor's write of `node`: a JSON Patch that tests the node's uid and
 * every key it sets as the LIST read it, then sets the 16 labels and the
 * annotation. The shape of relabel's own write (`guardedPatch`): relabel
 * also tests each key its plan read and nothing else, so a write by anyone
 * else to anything else lands beside it; a resourceVersion-guarded merge
 * patch (the plain floor's) would fail on any heartbeat instead.
 */
export function floorPatch(node: FloorNode, tag: string): JsonPatchOp[] {
  const next = floorValues(tag);
  const labels = mapOps('labels', node.labels, next.labels);
  const annotations = mapOps('annotations', node.annotations, next.annotations);
  return [{ op: 'test', path: '/metadata/uid', value: node.uid }, ...labels.tests, ...annotations.tests, ...labels.adds, ...annotations.adds];
}

/** `state` as the floor's write needs it: the values of the floor's keys only. */
function floorNodeOf(state: Pick<NodeState, 'name' | 'uid' | 'labels' | 'annotations'>, hasLabels = true, hasAnnotations = true): FloorNode {
  const pick = (from: Record<string, string>, keys: readonly string[]) =>
    Object.fromEntries(keys.filter((k) => Object.hasOwn(from, k)).map((k) => [k, from[k] as string]));
  return {
    name: state.name,
    uid: state.uid ?? '',
    labels: hasLabels ? pick(state.labels, FLOOR_LABEL_KEYS) : null,
    annotations: hasAnnotations ? pick(state.annotations, [FLOOR_OWNED_ANNOTATION]) : null,
  };
}

/** Whether `state` already carries the pass's values. */
function carries(state: Pick<NodeState, 'labels' | 'annotations'>, tag: string): boolean {
  const next = floorValues(tag);
  return (
    Object.entries(next.labels).every(([k, v]) => state.labels[k] === v) &&
    state.annotations[FLOOR_OWNED_ANNOTATION] === next.annotations[FLOOR_OWNED_ANNOTATION]
  );
}

/**
 * The engine floor's activities over the cluster of `kc`, through the same
 * Node client relabel writes with (kept-alive connections, `qps` requests a
 * second at most, 0: no limit).
 */
export function createEngineFloorActivities(kc: KubeConfig, qps: number) {
  const nodes = createNodeApi(kc, { qps, burst: Math.max(1, qps * 2) });
  // Made after createNodeApi: it shares that client's connection pool.
  const core = kc.makeApiClient(CoreV1Api);
  const toPage = (items: V1Node[], prefix: string, cont: string | undefined): FloorPage => ({
    nodes: items
      .filter((n) => n.metadata?.name?.startsWith(prefix))
      .map((n) =>
        floorNodeOf(
          { name: n.metadata?.name ?? '', uid: n.metadata?.uid, labels: n.metadata?.labels ?? {}, annotations: n.metadata?.annotations ?? {} },
          n.metadata?.labels !== undefined,
          n.metadata?.annotations !== undefined,
        ),
      ),
    ...(cont ? { cont } : {}),
    ...(items.length > 0 ? { last: items.at(-1)?.metadata?.name } : {}),
  });
  return {
    /**
     * One page of at most `limit` Nodes from `cont` on, those named with
     * `prefix` kept. A continue token that expired (410) lists again from
     * the start and answers the first page holding names after `after`
     * (the LIST is ordered by name), so no node is skipped or repeated.
     */
    async listFloorNodes(input: { prefix: string; limit: number; cont?: string; after?: string }): Promise<FloorPage> {
      try {
        const page = await core.listNode({ limit: input.limit, ...(input.cont ? { _continue: input.cont } : {}) });
        return toPage(page.items, input.prefix, page.metadata?._continue || undefined);
      } catch (err) {
        if (!(err instanceof ApiException && err.code === 410) || input.after === undefined) throw err;
        const after = input.after;
        for (let cont: string | undefined, first = true; first || cont; first = false) {
          const page = await core.listNode({ limit: input.limit, ...(cont ? { _continue: cont } : {}) });
          cont = page.metadata?._continue || undefined;
          const items = page.items.filter((n) => (n.metadata?.name ?? '') > after);
          if (items.length > 0 || !cont) return toPage(items, input.prefix, cont);
        }
        return { nodes: [] };
      }
    },
    /**
     * Writes the pass's labels and annotation to one node with
     * {@link floorPatch}. A failed `test` (someone changed a key it read)
     * re-reads the node and writes again, at most {@link MAX_STALE_WRITES}
     * times; a node that already carries the values is not written again
     * and counts as written: the values are this pass's own (its tag), so an
     * earlier attempt whose answer was lost wrote them.
     */
    async patchFloorNode(input: { node: FloorNode; tag: string }): Promise<{ written: boolean }> {
      let node = input.node;
      for (let attempt = 1; ; attempt++) {
        try {
          await nodes.patchNode(node.name, floorPatch(node, input.tag));
          return { written: true };
        } catch (err) {
          if (!isStaleWrite(err) || attempt >= MAX_STALE_WRITES) throw err;
        }
        const state = await nodes.readNode(node.name);
        if (carries(state, input.tag)) return { written: true };
        node = floorNodeOf(state, Object.keys(state.labels).length > 0, Object.keys(state.annotations).length > 0);
      }
    },
  };
}

/** The engine floor's activities, for `proxyActivities` in its workflows (as types only). */
export type EngineFloorActivities = ReturnType<typeof createEngineFloorActivities>;
