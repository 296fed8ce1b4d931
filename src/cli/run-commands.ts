/**
 * `relabel update-labels | status | retry | cancel`: start and follow update
 * runs. Thin over the runs facade: parse flags, call, print, exit with the
 * code the run's outcome maps to.
 */
import { type Command, Option } from 'commander';
import type { NodePage, Runs, RunStatusReport, StartedRun } from '../facade/index.ts';
import { withContext, type CliContext, type SetExit } from './context.ts';
import { ExitCode, exitCodeForRun } from './exit-codes.ts';
import { note, outputOption, printJson, say } from './output.ts';
import { nodeList, nonNegativeInteger, positiveInteger } from './parsers.ts';
import { outcomeText, progressReporter, reportText, startedText } from './run-output.ts';

const runIdOption = () => new Option('--run-id <id>', 'a particular run of the workflow (default: its latest run)');
const concurrencyOption = () =>
  new Option('--concurrency <k>', "nodes relabelled at once (default: the site policy's)").argParser(positiveInteger);
/** Adds the options choosing which part of the per-node table to show. */
function withNodeOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--offset <n>', 'first node of the per-node table to show (target order)').argParser(nonNegativeInteger).default(0))
    .addOption(new Option('--limit <n>', 'most nodes in the per-node table (at most 5000)').argParser(positiveInteger).default(1000))
    .addOption(new Option('--failures', 'show only the failed nodes in the per-node table'));
}

/** How much of the per-node table to show. */
type NodeView = { offset?: number; limit?: number; failures?: boolean };

/** The page of node outcomes a finished run's report shows; none while it runs or when it was rejected. */
async function nodePage(runs: Runs, report: RunStatusReport, view: NodeView): Promise<NodePage | undefined> {
  if (!report.result) return undefined;
  return runs.nodes(report.result.run, { offset: view.offset ?? 0, limit: view.limit ?? 1000, ...(view.failures ? { status: 'failure' as const } : {}) });
}

const waitOption = () =>
  new Option('--wait', 'wait for the run to finish: progress on stderr, then the per-node table; exit code by final status');

/**
 * Waits for a run with progress on stderr, prints its final report and
 * returns the exit code of its outcome. Ctrl-C stops waiting, not the run.
 */
async function waitAndReport(ctx: CliContext, runs: Runs, ref: { workflowId: string; runId?: string }, shownStart: boolean, view: NodeView = {}): Promise<number> {
  const progress = progressReporter(process.stderr);
  const interrupted = () => {
    progress.done();
    note(`stopped waiting; the run goes on. Follow it with: relabel status ${ref.workflowId} --wait`);
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  let report: RunStatusReport;
  try {
    report = await runs.wait(ref, (p) => progress.update(p));
    // Polls may miss the end of a quick run: finish on the final counts.
    if (report.progress) progress.update(report.progress);
  } finally {
    process.off('SIGINT', interrupted);
    progress.done();
  }
  const page = await nodePage(runs, report, view);
  if (ctx.format === 'json') printJson({ ...report, ...(page ? { nodes: page } : {}) });
  else if (!shownStart) say(reportText(report, page));
  else {
    // The start block already named the run; add only what is new.
    if (report.runId !== ref.runId) say(`continued as new; final run ID ${report.runId}`);
    say(`\n${outcomeText(report, page)}`);
  }
  return exitCodeForRun(report);
}

/** Prints a started run (JSON: the run without waiting), then waits when asked. */
async function started(
  ctx: CliContext,
  runs: Runs,
  run: StartedRun,
  opts: { wait?: boolean; dryRun?: boolean },
  retryOf?: { workflowId: string; runId?: string },
): Promise<number> {
  const dryRun = opts.dryRun ?? false;
  if (ctx.format === 'json') {
    // With --wait stdout carries only the final report; say where the run is on stderr.
    if (!opts.wait) {
      printJson({ ...run, dryRun, ...(retryOf ? { retryOf } : {}) });
      return ExitCode.ok;
    }
    note(`started ${run.workflowId} (run ${run.runId})${run.uiLink ? ` ${run.uiLink}` : ''}`);
  } else {
    say(startedText(run, dryRun, retryOf && `${retryOf.workflowId}${retryOf.runId ? ` (run ${retryOf.runId})` : ''}`));
  }
  return opts.wait ? waitAndReport(ctx, runs, run, true) : ExitCode.ok;
}

/** Adds the run commands to `program`. */
export function addRunCommands(program: Command, setExit: SetExit): void {
  program
    .command('update-labels')
    .description('relabel nodes to a committed revision of the site documents (the Airship update_labels action)')
    .requiredOption('--nodes <names>', 'comma-separated node names, such as n1,n2', nodeList)
    .addOption(new Option('--revision <n>', 'revision to apply (default: the latest committed)').argParser(positiveInteger))
    .addOption(concurrencyOption())
    .option('--dry-run', 'plan every node and report the plans; write nothing')
    .addOption(waitOption())
    .addOption(outputOption())
    .addHelpText(
      'after',
      '\nPrints the workflow ID, run ID and Temporal UI link. One run per site at a time.\n' +
        'JSON: {workflowId, runId, uiLink, revision, site, targets, dryRun}; with --wait the final report (as `relabel status -o json`).',
    )
    .action(async (opts: { nodes: string[]; revision?: number; concurrency?: number; dryRun?: boolean; wait?: boolean }, cmd: Command) => {
      setExit(
        await withContext(cmd, async (ctx) => {
          const runs = await ctx.runs();
          const run = await runs.start({
            targets: opts.nodes,
            ...(opts.revision !== undefined ? { revision: opts.revision } : {}),
            ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
            dryRun: opts.dryRun ?? false,
          });
          return started(ctx, runs, run, opts);
        }),
      );
    });

  withNodeOptions(program.command('status'))
    .description("show a run's status: progress while it runs, the per-node table once it is done")
    .argument('<id>', 'workflow ID, as printed by update-labels')
    .addOption(runIdOption())
    .addOption(new Option('--wait', 'follow the run until it finishes, with progress on stderr'))
    .addOption(outputOption())
    .addHelpText(
      'after',
      '\nExit code: the run\'s outcome (0 while it runs or after success, 4 partial_success, 5 failure).\n' +
        'JSON: {workflowId, runId, run, uiLink, execution, startTime, closeTime?, progress?, result?, failure?, nodes?: {run, total, offset, items}}.',
    )
    .action(async (id: string, opts: { runId?: string; wait?: boolean } & NodeView, cmd: Command) => {
      setExit(
        await withContext(cmd, async (ctx) => {
          const runs = await ctx.runs();
          if (opts.wait) return waitAndReport(ctx, runs, { workflowId: id, ...(opts.runId ? { runId: opts.runId } : {}) }, false, opts);
          const report = await runs.status(id, opts.runId);
          const page = await nodePage(runs, report, opts);
          if (ctx.format === 'json') printJson({ ...report, ...(page ? { nodes: page } : {}) });
          else say(reportText(report, page));
          return exitCodeForRun(report);
        }),
      );
    });

  program
    .command('retry')
    .description('start a run over exactly the failed nodes of a finished run, against the same revision')
    .argument('<id>', 'workflow ID of the finished run')
    .addOption(runIdOption())
    .addOption(concurrencyOption())
    .addOption(waitOption())
    .addOption(outputOption())
    .addHelpText('after', '\nJSON: as update-labels, with retryOf: {workflowId, runId?}.')
    .action(async (id: string, opts: { runId?: string; concurrency?: number; wait?: boolean }, cmd: Command) => {
      setExit(
        await withContext(cmd, async (ctx) => {
          const runs = await ctx.runs();
          const run = await runs.retry(id, opts.runId, opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {});
          return started(ctx, runs, run, opts, { workflowId: id, ...(opts.runId ? { runId: opts.runId } : {}) });
        }),
      );
    });

  program
    .command('cancel')
    .description('cancel a running run; nodes already relabelled stay relabelled (no rollback)')
    .argument('<id>', 'workflow ID of the run')
    .addOption(runIdOption())
    .addOption(outputOption())
    .addHelpText('after', '\nJSON: {workflowId, runId, uiLink}.')
    .action(async (id: string, opts: { runId?: string }, cmd: Command) => {
      setExit(
        await withContext(cmd, async (ctx) => {
          const ref = await (await ctx.runs()).cancel(id, opts.runId);
          if (ctx.format === 'json') return printJson(ref);
          say(`cancellation requested for ${ref.workflowId} (run ${ref.runId}); nodes already relabelled stay relabelled`);
          say(`follow it with: relabel status ${ref.workflowId} --wait`);
          if (ref.uiLink) say(ref.uiLink);
        }),
      );
    });
}
