/**
 * Child process of the concurrent-commit contract test.
 *
 * Usage: `node commit-child.ts <store-url> <name> <count> [runs]`. Opens the
 * store, prints `ready`, waits for a line on stdin (so both children start
 * together), then `count` times stages its own bucket `w-<name>` with one file
 * whose text names the iteration and commits exactly that bucket (message
 * `<name>:<i>`); with `runs`, creates a run instead (key `<name>:<i>`, targets
 * `<name>-<i>-0` … `<name>-<i>-99`). Prints the revision (or run) ids as one
 * JSON line and exits 0; exits 1 on any error.
 */
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { openStore } from '../../../src/store/open-store.ts';

const [url, name, countText, mode] = process.argv.slice(2);
if (!url || !name || !countText || (mode !== undefined && mode !== 'runs')) {
  process.stderr.write('usage: commit-child.ts <store-url> <name> <count> [runs]\n');
  process.exit(2);
}
const store = await openStore(url);
try {
  process.stdout.write('ready\n');
  process.stdin.setEncoding('utf8');
  await once(process.stdin, 'data');
  process.stdin.pause();
  const bucket = `w-${name}`;
  const ids: number[] = [];
  for (let i = 0; i < Number(countText); i++) {
    if (mode === 'runs') {
      const targets = Array.from({ length: 100 }, (_, k) => `${name}-${i}-${k}`);
      ids.push((await store.runs.create({ key: `${name}:${i}`, targets })).id);
    } else {
      await store.revisions.stage(bucket, [{ source: 'iteration.yaml', text: `${name}: ${i}\n` }]);
      ids.push((await store.revisions.commit({ buckets: [bucket], message: `${name}:${i}` })).id);
    }
    // A breath between commits: SQLite's busy handler backs off in sleeps, so
    // without one a writer could finish all its commits before the other wakes
    // up, and the processes would never actually interleave.
    await sleep(3);
  }
  process.stdout.write(`${JSON.stringify({ ids })}\n`);
} finally {
  await store.close();
}
