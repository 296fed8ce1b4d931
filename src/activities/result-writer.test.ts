import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createResultWriter } from './result-writer.ts';
import type { NodeResultUpdate } from '../store/runs/run-store.ts';

describe('createResultWriter', () => {
  it('groups results that arrive while a write is in flight, and settles each after its own commit', async () => {
    const writes: { run: number; nodes: string[] }[] = [];
    const committed = new Set<string>();
    let release: (() => void) | undefined;
    const writer = createResultWriter({
      async setNodeResults(run: number, updates: readonly NodeResultUpdate[]) {
        writes.push({ run, nodes: updates.map((u) => u.node) });
        if (writes.length === 1) await new Promise<void>((r) => (release = r));
        for (const u of updates) committed.add(u.node);
      },
    });
    const settled: string[] = [];
    const record = (run: number, node: string) =>
      writer.record(run, { node, status: 'success' }).then(() => {
        assert.ok(committed.has(node), `${node} settled before its commit`);
        settled.push(node);
      });
    const first = record(1, 'a');
    const rest = [record(1, 'b'), record(1, 'c'), record(2, 'd')];
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(settled, [], 'nothing settles before the first write commits');
    release?.();
    await Promise.all([first, ...rest]);
    assert.deepEqual(writes, [
      { run: 1, nodes: ['a'] },
      { run: 1, nodes: ['b', 'c'] },
      { run: 2, nodes: ['d'] },
    ]);
  });

  it('rejects exactly the callers whose write failed', async () => {
    const writer = createResultWriter({
      async setNodeResults(run: number) {
        if (run === 2) throw new Error('disk full');
      },
    });
    const ok = writer.record(1, { node: 'a', status: 'success' });
    const bad = writer.record(2, { node: 'b', status: 'success' });
    await ok;
    await assert.rejects(bad, /disk full/);
  });
});
