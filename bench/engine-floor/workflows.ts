/**
 * The engine floor: the least a Temporal workflow can do to write every
 * node the way relabel does, on the same stack and worker settings. A
 * parent reads the nodes one LIST page at a time and runs one child per
 * node in a sliding window, continuing as new at relabel's thresholds; each
 * child's only work is one guarded patch in a local activity. Relabel's
 * time over this one is relabel's own overhead. Bundled by the benchmark's
 * engine-floor worker only.
 */
import { condition, continueAsNew, executeChild, proxyActivities, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import type { EngineFloorActivities, FloorNode } from './activities.ts';

/**
 * Nodes read per LIST page. A node's entry holds its values of the 16
 * labels and the annotation as read (about 1.1 KB once a floor has written
 * them), so a page of 100 stays near 115 KB, well under Temporal's 512 KB
 * payload limit; relabel's pages of 500 hold only names (its store keeps
 * what each node's write depends on).
 */
const PAGE_SIZE = 100;

const { listFloorNodes } = proxyActivities<EngineFloorActivities>({ startToCloseTimeout: '60s', retry: { maximumInterval: '10s' } });

// The same timeout and retry policy as relabel's applyNodePlan.
const { patchFloorNode } = proxyLocalActivities<EngineFloorActivities>({
  startToCloseTimeout: '15s',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '10s', maximumAttempts: 10 },
});

/** Where a continued execution takes over: the LIST's position, the nodes of the page not yet started, the counts so far. */
export type EngineFloorCarried = { cont?: string; after?: string; rest: FloorNode[]; written: number; failed: number; children: number; executions: number };

/** The engine floor's input; the thresholds are relabel's (`DEFAULT_CONTINUE_AS_NEW_AFTER`, `MAX_HISTORY_*`), passed in by the benchmark. */
export type EngineFloorInput = {
  prefix: string;
  /** Distinguishes the values of one pass from another's, so every pass changes every node. */
  tag: string;
  concurrency: number;
  continueAsNewAfter: number;
  maxHistoryEvents: number;
  maxHistoryBytes: number;
  carried?: EngineFloorCarried;
};

/** Counts over every execution of the chain. */
export type EngineFloorResult = { written: number; failed: number; children: number; executions: number };

/** One child: writes its node with one guarded patch, in a local activity. */
export async function engineFloorNode(input: { node: FloorNode; tag: string }): Promise<{ written: boolean }> {
  return patchFloorNode(input);
}

/**
 * Writes the pass's values to every node named with `prefix`: one child per
 * node, `concurrency` at once; continues as new after `continueAsNewAfter`
 * children or when its history nears the limits, after the window drains.
 */
export async function engineFloor(input: EngineFloorInput): Promise<EngineFloorResult> {
  const state: EngineFloorCarried = input.carried
    ? { ...input.carried, executions: input.carried.executions + 1 }
    : { rest: [], written: 0, failed: 0, children: 0, executions: 1 };
  const queue = [...state.rest];
  let listed = input.carried !== undefined;
  let running = 0;
  let launched = 0;
  const { workflowId } = workflowInfo();
  const full = () => {
    const info = workflowInfo();
    return launched >= input.continueAsNewAfter || info.historyLength >= input.maxHistoryEvents || info.historySize >= input.maxHistoryBytes;
  };
  while (!full()) {
    if (queue.length === 0) {
      if (listed && state.cont === undefined) break;
      const page = await listFloorNodes({
        prefix: input.prefix,
        limit: PAGE_SIZE,
        ...(state.cont ? { cont: state.cont } : {}),
        ...(state.after ? { after: state.after } : {}),
      });
      listed = true;
      queue.push(...page.nodes);
      state.cont = page.cont;
      if (page.last !== undefined) state.after = page.last;
      continue;
    }
    await condition(() => running < input.concurrency);
    const node = queue.shift() as FloorNode;
    launched++;
    running++;
    state.children++;
    void executeChild(engineFloorNode, { workflowId: `${workflowId}/${node.name}`, args: [{ node, tag: input.tag }] })
      .then(
        (r) => void (r.written && state.written++),
        () => void state.failed++,
      )
      .finally(() => running--);
  }
  await condition(() => running === 0);
  if (queue.length > 0 || state.cont !== undefined) {
    await continueAsNew<typeof engineFloor>({ ...input, carried: { ...state, rest: queue } });
  }
  return { written: state.written, failed: state.failed, children: state.children, executions: state.executions };
}
