/**
 * Contract cases for concurrent writers: two separate processes (and two
 * connections inside one process) staging and committing against one store at
 * the same time must get distinct, gapless revisions, and no commit's content
 * may be lost; runs created at once get distinct, gapless numbers too.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { openStore } from '../../../src/store/open-store.ts';
import type { Store } from '../../../src/store/store.ts';
import type { StoreFixture } from './fixture.ts';

const CHILD = fileURLToPath(new URL('./commit-child.ts', import.meta.url));
const PER_PROCESS = 40;

interface Child {
  readonly process: ChildProcessWithoutNullStreams;
  readonly lines: AsyncIterator<string>;
  readonly stderr: () => string;
  /** Exit code; listened for from the start so an early exit is not missed. */
  readonly exitCode: Promise<number | null>;
}

function startChild(url: string, name: string, count: number, mode?: 'runs'): Child {
  const child = spawn(process.execPath, [CHILD, url, name, String(count), ...(mode ? [mode] : [])], { stdio: 'pipe' });
  const exitCode = once(child, 'close').then(([code]) => code as number | null);
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout.setEncoding('utf8');
  async function* lines(): AsyncGenerator<string> {
    let pending = '';
    for await (const chunk of child.stdout) {
      pending += chunk as string;
      let end: number;
      while ((end = pending.indexOf('\n')) >= 0) {
        yield pending.slice(0, end);
        pending = pending.slice(end + 1);
      }
    }
  }
  return { process: child, lines: lines(), stderr: () => stderr, exitCode };
}

async function nextLine(child: Child, what: string): Promise<string> {
  const { value, done } = await child.lines.next();
  if (done) {
    assert.fail(`child exited before ${what} (code ${await child.exitCode}):\n${child.stderr()}`);
  }
  return value;
}

/**
 * Replay the history: every revision must be its predecessor with exactly the
 * committing writer's bucket replaced by that commit's content.
 */
async function assertHistory(store: Store, writers: readonly string[], count: number): Promise<void> {
  const revisions = await store.revisions.list();
  assert.deepEqual(
    revisions.map((r) => r.id),
    Array.from({ length: writers.length * count }, (_, i) => i + 1),
    'revision ids must be 1..N without gaps or duplicates',
  );
  const expected = new Map<string, string>();
  const seen = new Set<string>();
  for (const revision of revisions) {
    const message = revision.message ?? '';
    const [name, i] = message.split(':');
    assert.ok(name && i && writers.includes(name), `unexpected message ${message} on revision ${revision.id}`);
    assert.ok(!seen.has(message), `commit ${message} appears twice`);
    seen.add(message);
    expected.set(`w-${name}`, `${name}: ${i}\n`);
    const actual = new Map((await store.revisions.documents(revision.id)).map((d) => [d.bucket, d.text]));
    assert.deepEqual(actual, expected, `content of revision ${revision.id} (${message})`);
  }
  assert.equal(seen.size, writers.length * count, 'every commit must have its own revision');
}

/** Register the concurrency part of the contract. */
export function concurrencyContract(fixture: StoreFixture): void {
  describe('concurrent writers', () => {
    test(`two processes committing ${PER_PROCESS} times each: all revisions distinct, nothing lost`, { timeout: 120_000 }, async (t) => {
      const url = await fixture.freshUrl();
      // Create the schema before the race: opening is tested separately.
      await (await openStore(url)).close();
      const writers = ['alpha', 'beta'];
      const children = writers.map((name) => startChild(url, name, PER_PROCESS));
      t.after(() => {
        for (const child of children) if (child.process.exitCode === null) child.process.kill('SIGKILL');
      });
      for (const child of children) assert.equal(await nextLine(child, 'ready'), 'ready');
      for (const child of children) child.process.stdin.end('go\n');
      const results = [];
      for (const child of children) {
        const line = await nextLine(child, 'reporting its revisions');
        assert.equal(await child.exitCode, 0, child.stderr());
        results.push((JSON.parse(line) as { ids: number[] }).ids);
      }
      for (const ids of results) {
        assert.equal(ids.length, PER_PROCESS);
        assert.ok(
          ids.every((id, i) => i === 0 || id > (ids[i - 1] ?? 0)),
          'each writer sees its ids increase',
        );
      }
      assert.equal(new Set(results.flat()).size, writers.length * PER_PROCESS, 'no revision id handed out twice');
      const [first = []] = results;
      const owner = (id: number) => first.includes(id);
      let switches = 0;
      for (let id = 2; id <= writers.length * PER_PROCESS; id++) if (owner(id) !== owner(id - 1)) switches++;
      assert.ok(switches >= 2, `the writers never interleaved (${switches} switch); the test exercised no concurrency`);
      const store = await openStore(url);
      t.after(() => store.close());
      await assertHistory(store, writers, PER_PROCESS);
      assert.deepEqual(await store.revisions.buffer(), []);
    });

    test('two processes creating runs at once: run numbers distinct and gapless, targets kept apart', { timeout: 120_000 }, async (t) => {
      const url = await fixture.freshUrl();
      await (await openStore(url)).close();
      const writers = ['alpha', 'beta'];
      const count = 20;
      const children = writers.map((name) => startChild(url, name, count, 'runs'));
      t.after(() => {
        for (const child of children) if (child.process.exitCode === null) child.process.kill('SIGKILL');
      });
      for (const child of children) assert.equal(await nextLine(child, 'ready'), 'ready');
      for (const child of children) child.process.stdin.end('go\n');
      const ids: number[] = [];
      for (const child of children) {
        const line = await nextLine(child, 'reporting its runs');
        assert.equal(await child.exitCode, 0, child.stderr());
        ids.push(...(JSON.parse(line) as { ids: number[] }).ids);
      }
      assert.deepEqual(
        ids.sort((a, b) => a - b),
        Array.from({ length: writers.length * count }, (_, i) => i + 1),
      );
      const store = await openStore(url);
      t.after(() => store.close());
      for (let id = 1; id <= writers.length * count; id++) {
        const run = await store.runs.get(id);
        const [name, i] = (run.key ?? '').split(':');
        const nodes = (await store.runs.nodes(id, { limit: 200 })).map((r) => r.node);
        assert.deepEqual(
          nodes,
          Array.from({ length: 100 }, (_, k) => `${name}-${i}-${k}`),
          `targets of run ${id} (${run.key})`,
        );
      }
    });

    test('two processes opening a fresh store at once both succeed', { timeout: 60_000 }, async (t) => {
      const url = await fixture.freshUrl();
      const children = ['one', 'two'].map((name) => startChild(url, name, 1));
      t.after(() => {
        for (const child of children) if (child.process.exitCode === null) child.process.kill('SIGKILL');
      });
      for (const child of children) assert.equal(await nextLine(child, 'ready'), 'ready');
      for (const child of children) child.process.stdin.end('go\n');
      for (const child of children) {
        await nextLine(child, 'reporting its revisions');
        assert.equal(await child.exitCode, 0, child.stderr());
      }
      const store = await openStore(url);
      t.after(() => store.close());
      await assertHistory(store, ['one', 'two'], 1);
    });

    test('two connections in one process committing concurrently', { timeout: 60_000 }, async (t) => {
      const url = await fixture.freshUrl();
      const stores = await Promise.all([openStore(url), openStore(url)]);
      t.after(() => Promise.all(stores.map((s) => s.close())));
      const writers = ['left', 'right'];
      const count = 15;
      await Promise.all(
        writers.map(async (name, w) => {
          const store = stores[w];
          assert.ok(store);
          for (let i = 0; i < count; i++) {
            await store.revisions.stage(`w-${name}`, [{ source: 'iteration.yaml', text: `${name}: ${i}\n` }]);
            await store.revisions.commit({ buckets: [`w-${name}`], message: `${name}:${i}` });
          }
        }),
      );
      await assertHistory(stores[0], writers, count);
    });
  });
}
