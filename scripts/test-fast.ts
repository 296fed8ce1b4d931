/**
 * `npm run test:fast`: the unit tests and the fast workflow tests beside the
 * code (`src/**\/*.test.ts`), in two test processes at once, each running
 * half of the files in one process (`--test-isolation=none --test-shard`).
 * One process runs its files one after the other on one core; two use the
 * second core, and one's waits (child processes, a workflow's server) overlap
 * the other's work. The first process's report is shown as it runs, the
 * second's after it, then the counts of both; the command fails when either
 * process does. Arguments go to both (`npm run test:fast --
 * --test-name-pattern=waves`).
 */
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The files: the unit and fast workflow tests beside the code, the replay of
 * recorded workflow histories against the current workflow code, and the
 * layering's lint rules. The last two guard a workflow change and an import
 * across folders, and need no server.
 */
const FILES = ['src/**/*.test.ts', 'test/runs/replay.test.ts', 'test/architecture.test.ts'];

/** Test processes run at once. */
const SHARDS = 2;

/**
 * Node's on-disk code cache for the test processes and the processes they
 * start (the entry points' tests start about ten): the directory the CLI's
 * own cache uses (`enableCompileCache()`), kept between runs. A module read
 * from it is not compiled again; a changed file is.
 */
const COMPILE_CACHE = process.env.NODE_COMPILE_CACHE ?? join(tmpdir(), 'node-compile-cache');

/** How one shard ended: its exit status and its report. */
interface Shard {
  status: number;
  report: string;
}

/** Runs shard `index` (1-based); its report goes to `show` as it comes. */
function runShard(index: number, show: (chunk: string) => void): Promise<Shard> {
  const args = ['--test', '--test-isolation=none', '--test-reporter=spec', `--test-shard=${index}/${SHARDS}`, ...process.argv.slice(2), ...FILES];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NODE_COMPILE_CACHE: COMPILE_CACHE } });
    let report = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      report += chunk;
      show(chunk);
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ status: code ?? 1, report }));
  });
}

/** The figure a report's summary gives for `name` (`ℹ tests 412`), 0 when absent. */
function figure(report: string, name: string): number {
  return Number(new RegExp(`^ℹ ${name} (\\d+)$`, 'm').exec(report)?.[1] ?? 0);
}

const started = performance.now();
let shown = 1;
const held = new Map<number, string[]>();
const shards = Array.from({ length: SHARDS }, (_, i) => i + 1).map((index) => {
  held.set(index, []);
  return runShard(index, (chunk) => (index === shown ? process.stdout.write(chunk) : held.get(index)?.push(chunk)));
});
const ended: Shard[] = [];
for (const [i, shard] of shards.entries()) {
  ended.push(await shard);
  // The next shard's report so far, then the rest as it comes.
  shown = i + 2;
  process.stdout.write((held.get(shown) ?? []).join(''));
}

const sum = (name: string) => ended.reduce((n, s) => n + figure(s.report, name), 0);
const seconds = ((performance.now() - started) / 1000).toFixed(1);
console.log(
  `\ntest:fast: ${sum('tests')} tests in ${SHARDS} processes, ${sum('pass')} passed, ${sum('fail')} failed, ${sum('cancelled')} cancelled; ${seconds} s`,
);
process.exitCode = ended.find((s) => s.status !== 0)?.status ?? 0;
