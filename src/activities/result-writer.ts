/**
 * Group commit of per-node results: many activities finishing at once share
 * one store transaction. Each caller's promise settles only once its own row
 * is committed, so an activity never completes before its result is durable.
 */
import type { NodeResultUpdate, RunStore } from '../store/runs/run-store.ts';

/** Records node results, batching concurrent callers into one write per run. */
export interface ResultWriter {
  /** Resolves when `update` is committed to the store; rejects with the store's error. */
  record(run: number, update: NodeResultUpdate): Promise<void>;
}

type Waiting = { run: number; update: NodeResultUpdate; resolve(): void; reject(err: unknown): void };

/**
 * A {@link ResultWriter} over `store`. No timer: while one batch is being
 * written, later results queue and go together in the next one.
 */
export function createResultWriter(store: Pick<RunStore, 'setNodeResults'>, maxBatch = 500): ResultWriter {
  let queue: Waiting[] = [];
  let writing = false;

  async function drain(): Promise<void> {
    writing = true;
    while (queue.length > 0) {
      const batch = queue.slice(0, maxBatch);
      queue = queue.slice(batch.length);
      const byRun = new Map<number, Waiting[]>();
      for (const w of batch) byRun.set(w.run, [...(byRun.get(w.run) ?? []), w]);
      for (const [run, items] of byRun) {
        try {
          await store.setNodeResults(
            run,
            items.map((w) => w.update),
          );
          for (const w of items) w.resolve();
        } catch (err) {
          for (const w of items) w.reject(err);
        }
      }
    }
    writing = false;
  }

  return {
    record(run, update) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ run, update, resolve, reject });
        if (!writing) void drain();
      });
    },
  };
}
