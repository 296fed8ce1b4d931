/**
 * `relabel join enable|disable|status`: turn a site's join watcher on and
 * off, and show whether it watches, what it has done and what waits.
 */
import { type Command, Option } from 'commander';
import type { JoinStatus } from '../facade/index.ts';
import { DEFAULT_JOIN_CONCURRENCY } from '../contracts/join-messages.ts';
import { cliUser, withContext, type SetExit } from './context.ts';
import { fields, note, outputOption, printJson, say } from './output.ts';
import { positiveInteger } from './parsers.ts';

/** The status in words. */
function statusText(s: JoinStatus & { changed?: boolean }, verb?: string): string {
  const head = `joins of site ${s.site}: ${s.enabled ? 'enabled' : 'disabled'}${verb && s.changed === false ? ` (already ${verb})` : ''}`;
  if (!s.enabled) return `${head}${s.ended ? ` (the last watcher ended ${s.ended})` : ''}`;
  const w = s.watcher;
  const rows: [string, string | number | undefined][] = [
    ['watcher', `${s.workflowId} (${s.runId ?? '?'}), since ${s.since ?? '?'}`],
    ['revision', w?.revision],
    ['pending', w ? `${w.pending} node(s)${w.pending > 0 ? `, the oldest waiting ${w.oldestPendingSeconds} s` : ''}` : undefined],
    ['join runs', w ? `${w.runs} started, ${w.dispatched} node(s) handed to them, ${w.labelled} seen labelled, ${w.failed ?? 0} failed` : undefined],
    ['last run', w?.lastRun ? `run ${w.lastRun.run} (${w.lastRun.workflowId}), ${w.lastRun.nodes} node(s): ${w.lastRun.status ?? 'running'}` : undefined],
    ['unmanaged', w ? `${w.unmanaged} joining node(s) neither in the design nor in a node set, left alone` : undefined],
    ['held', w?.held],
    ['watch error', w?.watchError],
    ['attempt', s.attempt !== undefined && s.attempt > 1 ? `${s.attempt}${s.lastFailure ? `: ${s.lastFailure}` : ''}` : undefined],
    ['reported', w?.at ?? 'not yet: the watcher has not started watching'],
  ];
  return `${head}\n${fields(rows)}`;
}

/** Adds `relabel join` to `program`. */
export function addJoinCommands(program: Command, setExit: SetExit): void {
  const join = program
    .command('join')
    .description("label nodes as they join the cluster: turn the site's join watcher on or off, or show it")
    .addHelpText(
      'after',
      "\nA node joins when it is new to relabel (no record of relabel's on it: a new Node, or one registered again)\n" +
        'or carries the uninitialized taint. With joins enabled, every joining node the latest committed revision\n' +
        'manages gets its labels, annotations and taints (the uninitialized taint lifted in the same write) in an\n' +
        'ordinary update run, via join, a batch at a time; nodes neither in the design nor in a node set are left\n' +
        'alone and counted; a node two node sets match fails NodeInTwoSets in its run, not written, counted failed.\n' +
        'The watcher is the Temporal workflow relabel-join/<site>; it outlives workers and Temporal restarts.',
    );
  join
    .command('enable')
    .description("start the site's join watcher (it keeps running until disabled)")
    .option('--site <name>', "the site (default: the store's; another is refused)")
    .addOption(new Option('--batch <n>', 'most nodes one join run takes').argParser(positiveInteger))
    .addOption(new Option('--delay-ms <n>', 'how long to wait after a node joins for others to join with it').argParser(positiveInteger))
    .addOption(
      new Option('--concurrency <n>', `nodes a join run relabels at once (default ${DEFAULT_JOIN_CONCURRENCY}; joining nodes run no workloads yet)`).argParser(
        positiveInteger,
      ),
    )
    .addOption(outputOption())
    .action(async (opts: { site?: string; batch?: number; delayMs?: number; concurrency?: number }, cmd: Command) => {
      setExit(
        await withContext(cmd, async (ctx) => {
          const joins = await ctx.joins();
          const watch = {
            ...(opts.batch !== undefined ? { maxBatch: opts.batch } : {}),
            ...(opts.delayMs !== undefined ? { batchDelayMs: opts.delayMs } : {}),
            ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
          };
          const status = await joins.enable({ ...(opts.site !== undefined ? { site: opts.site } : {}), by: cliUser(), watch });
          if (ctx.format === 'json') return printJson(status);
          say(statusText(status, 'enabled'));
          if (status.warning) note(`warning: ${status.warning}`);
        }),
      );
    });
  join
    .command('disable')
    .description("stop the site's join watcher (runs it started go on to their end)")
    .option('--site <name>', "the site (default: the store's; another is refused)")
    .addOption(outputOption())
    .action(async (opts: { site?: string }, cmd: Command) => {
      setExit(
        await withContext(cmd, async (ctx) => {
          const status = await (await ctx.joins()).disable(opts.site !== undefined ? { site: opts.site } : {});
          if (ctx.format === 'json') return printJson(status);
          say(statusText(status, 'disabled'));
        }),
      );
    });
  join
    .command('status')
    .description("whether the site's joins are enabled, what its watcher has done and what waits")
    .option('--site <name>', "the site (default: the store's; another is refused)")
    .addOption(outputOption())
    .addHelpText(
      'after',
      '\nJSON: {site, enabled, workflowId, runId, since, watcher: {resourceVersion, revision, pending, oldestPendingSeconds,\ndispatched, labelled, failed, unmanaged, runs, lastRun, held, watchError, at}, attempt, lastFailure, ended, warning}.',
    )
    .action(async (opts: { site?: string }, cmd: Command) => {
      setExit(
        await withContext(cmd, async (ctx) => {
          const status = await (await ctx.joins()).status(opts.site);
          if (ctx.format === 'json') return printJson(status);
          say(statusText(status));
          if (status.warning) note(`warning: ${status.warning}`);
        }),
      );
    });
}
