/**
 * `relabel update-labels | runs | status | retry`: start, list and follow update
 * runs (their controls are in `control-commands.ts`). Thin over the runs facade: parse flags, call, print, exit with the
 * code the run's outcome maps to.
 */
import { type Command, Option } from 'commander';
import { runAudit, StartedVia } from '../core/plan/run-audit.ts';
import type { NodePage, Runs, RunStatusReport, StartedRun } from '../facade/index.ts';
import type { RunSummary } from '../facade/runs/run-results.ts';
import { RelabelStatusValue } from '../contracts/search-attributes.ts';
import { cliUser, withContext, type CliContext, type SetExit } from './context.ts';
import { ExitCode, exitCodeForRun } from './exit-codes.ts';
import { note, outputOption, printJson, say, table } from './output.ts';
import { nonNegativeInteger, positiveInteger } from './parsers.ts';
import { targetsOf, withTargetOptions, type TargetOptions } from './target-options.ts';
import { runIdOption } from './control-commands.ts';
import { outcomeText, progressReporter, reportText, startedText } from './run-output.ts';
import { checkedRollout, ROLLOUT_HELP, withRolloutOptions, type RolloutFlags } from './rollout-options.ts';

const allowMassRemovalOption = () =>
  new Option(
    '--allow-mass-removal',
    "go ahead even when the run removes more of the labels relabel owns on its targets than the policy's max_removal_fraction (default 0.5); without it such a run is refused, nothing written",
  );
const concurrencyOption = () => new Option('--concurrency <k>', "nodes relabelled at once (default: the site policy's)").argParser(positiveInteger);
/** Adds the options choosing which part of the per-node table to show. */
function withNodeOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('--offset <n>', 'first node of the per-node table to show (target order)').argParser(nonNegativeInteger).default(0))
    .addOption(new Option('--limit <n>', 'most nodes in the per-node table (at most 5000)').argParser(positiveInteger).default(1000))
    .addOption(new Option('--failures', 'show only the failed nodes in the per-node table'))
    .addOption(
      new Option(
        '--summary',
        'instead of the per-node table, the whole run summed up: nodes by status, failures by type, label keys gained, changed, lost, adopted',
      ).conflicts(['failures', 'offset']),
    );
}

/** How much of the per-node table to show, or the whole run's summary instead. */
type NodeView = { offset?: number; limit?: number; failures?: boolean; summary?: boolean };

/** The summary of a finished or cancelled run when asked for; none while it runs or when it was rejected. */
async function runSummary(runs: Runs, report: RunStatusReport, view: NodeView): Promise<RunSummary | undefined> {
  const run = settledRun(report);
  return view.summary && run !== undefined ? runs.summary(run) : undefined;
}

/** The report as JSON or text, with the node page or the summary. */
function printReport(ctx: CliContext, report: RunStatusReport, page: NodePage | undefined, summary: RunSummary | undefined, text: () => string): void {
  if (ctx.format === 'json') printJson({ ...report, ...(page ? { nodes: page } : {}), ...(summary ? { summary } : {}) });
  else say(text());
}

/** The run whose nodes a report shows: a finished run's, or a cancelled one's (its rows settled when it stopped). */
function settledRun(report: RunStatusReport): number | undefined {
  return report.result?.run ?? (report.execution === 'CANCELLED' ? report.run : undefined);
}

/** The page of node outcomes a finished or cancelled run's report shows; none while it runs or when it was rejected. */
async function nodePage(runs: Runs, report: RunStatusReport, view: NodeView): Promise<NodePage | undefined> {
  const run = settledRun(report);
  if (run === undefined || view.summary) return undefined;
  return runs.nodes(run, { offset: view.offset ?? 0, limit: view.limit ?? 1000, ...(view.failures ? { status: 'failure' as const } : {}) });
}

/** Statuses `relabel runs --status` filters on (the RelabelStatus search attribute). */
const RUN_LIST_STATUSES = Object.values(RelabelStatusValue);

/** Most runs one `relabel runs` lists. */
const MAX_RUN_LIST = 1000;

const waitOption = () => new Option('--wait', 'wait for the run to finish: progress on stderr, then the per-node table; exit code by final status');

/**
 * Waits for a run with progress on stderr, prints its final report and
 * returns the exit code of its outcome. Ctrl-C stops waiting, not the run.
 */
export async function waitAndReport(
  ctx: CliContext,
  runs: Runs,
  ref: { workflowId: string; runId?: string },
  shownStart: boolean,
  view: NodeView = {},
): Promise<number> {
  const progress = progressReporter(process.stderr);
  const interrupted = () => {
    progress.done();
    note(`stopped waiting; the run goes on. Follow it with: relabel status ${ref.workflowId} --wait`);
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  let report: RunStatusReport;
  try {
    report = await runs.wait(
      ref,
      (p) => progress.update(p),
      undefined,
      (warning) => note(warning ? `warning: ${warning}` : 'a worker polls the task queue again; the run goes on'),
    );
    // Polls may miss the end of a quick run: finish on the final counts.
    if (report.progress) progress.update(report.progress);
  } finally {
    process.off('SIGINT', interrupted);
    progress.done();
  }
  const page = await nodePage(runs, report, view);
  const summary = await runSummary(runs, report, view);
  printReport(ctx, report, page, summary, () =>
    // The start block already named the run; add only what is new.
    shownStart
      ? `${report.runId !== ref.runId ? `continued as new; final run ID ${report.runId}\n` : ''}\n${outcomeText(report, page, summary)}`
      : reportText(report, page, summary),
  );
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

/** `update-labels`: start a run over named or selected targets, and follow it when asked. */
function addUpdateLabelsCommand(program: Command, setExit: SetExit): void {
  withRolloutOptions(
    withTargetOptions(program.command('update-labels'))
      .description('relabel nodes to a committed revision of the site documents (the Airship update_labels action)')
      .addOption(new Option('--revision <n>', 'revision to apply (default: the latest committed)').argParser(positiveInteger))
      .addOption(concurrencyOption())
      .option('--dry-run', 'plan every node and report the plans; write nothing')
      .addOption(allowMassRemovalOption()),
  )
    .addOption(waitOption())
    .addOption(outputOption())
    .addHelpText(
      'after',
      '\nTargets: --nodes, --nodes-from, --all, or a filter of --rack, --tag and --label (a node must match each one\n' +
        'given, as a Drydock node_filter of type intersection); exactly one of these four. A filter that matches no\n' +
        'node of the design is refused (NoNodesMatched).\n' +
        'Prints the workflow ID, run ID and Temporal UI link. One run per site at a time.\n' +
        "Mass-removal brake: a run removing more than the policy's max_removal_fraction of the labels relabel owns on\n" +
        'its targets fails as MassRemovalRefused (exit 3) naming the counts and keys, nothing written; a dry run says\n' +
        'whether it would be refused. --allow-mass-removal lets it through.\n' +
        `${ROLLOUT_HELP}\n` +
        'JSON: {workflowId, runId, uiLink, revision, site, targets, dryRun}; with --wait the final report (as `relabel status -o json`).',
    )
    .action(
      async (
        opts: TargetOptions & RolloutFlags & { revision?: number; concurrency?: number; dryRun?: boolean; allowMassRemoval?: boolean; wait?: boolean },
        cmd: Command,
      ) => {
        const chosen = targetsOf(opts, cmd);
        const rollout = checkedRollout(opts, cmd);
        setExit(
          await withContext(cmd, async (ctx) => {
            const runs = await ctx.runs();
            const run = await runs.start({
              ...chosen,
              ...(opts.revision !== undefined ? { revision: opts.revision } : {}),
              ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
              dryRun: opts.dryRun ?? false,
              ...(opts.allowMassRemoval ? { allowMassRemoval: true } : {}),
              ...(rollout ? { rollout } : {}),
              audit: runAudit(cliUser(), StartedVia.cli),
            });
            return started(ctx, runs, run, opts);
          }),
        );
      },
    );
}

/** `runs` and `status`: list runs, and show one with its per-node table or summary. */
function addRunReadCommands(program: Command, setExit: SetExit): void {
  program
    .command('runs')
    .description('list update runs on the task queue, newest first')
    .option('--site <name>', 'only runs of this site')
    .addOption(new Option('--status <status>', "only runs with this status (a dry run's is dry_run)").choices(RUN_LIST_STATUSES))
    .option('--dry-run', 'only dry runs (the same as --status dry_run)')
    .addOption(new Option('--limit <n>', `most runs to list (at most ${MAX_RUN_LIST})`).argParser(positiveInteger).default(20))
    .addOption(outputOption())
    .addHelpText(
      'after',
      "\nBY is who started the run (the API token's name, or the OS user of the CLI), VIA how (cli, api, schedule, retry, heal, join, release).\n" +
        'JSON: [{workflowId, runId, run?, action?, startedBy?, startedVia?, execution, outcome?, startTime, closeTime?}], newest first.',
    )
    .action(async (opts: { site?: string; status?: string; dryRun?: boolean; limit: number }, cmd: Command) => {
      if (opts.dryRun && opts.status !== undefined && opts.status !== RelabelStatusValue.dryRun) {
        cmd.error(`error: --dry-run lists dry runs, whose status is dry_run, not ${opts.status}`, { exitCode: ExitCode.invalidInput });
      }
      if (opts.limit > MAX_RUN_LIST) cmd.error(`error: --limit is at most ${MAX_RUN_LIST}`, { exitCode: ExitCode.invalidInput });
      const status = opts.dryRun ? RelabelStatusValue.dryRun : opts.status;
      setExit(
        await withContext(cmd, async (ctx) => {
          const listed = await (
            await ctx.runs()
          ).list(opts.limit, { ...(opts.site !== undefined ? { site: opts.site } : {}), ...(status !== undefined ? { status } : {}) });
          if (ctx.format === 'json') printJson(listed);
          else if (listed.length === 0) say('no runs');
          else {
            say(
              table(
                ['RUN', 'WORKFLOW ID', 'BY', 'VIA', 'EXECUTION', 'STATUS', 'STARTED', 'CLOSED'],
                listed.map((r) => [
                  r.run === undefined ? '-' : String(r.run),
                  r.workflowId,
                  r.startedBy ?? '-',
                  r.startedVia ?? '-',
                  r.execution,
                  r.outcome ?? '-',
                  r.startTime,
                  r.closeTime ?? '-',
                ]),
              ),
            );
          }
          return ExitCode.ok;
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
      "\nExit code: the run's outcome (0 while it runs or after success, 4 partial_success, 5 failure).\n" +
        'JSON: {workflowId, runId, run, uiLink, action?, startedBy?, startedVia?, execution, startTime, closeTime?, progress?, result?, failure?, warnings?, nodes?: {run, total, offset, items}};\n' +
        'with --summary, summary: {run, statuses, failureTypes, written, labels: {KEY: {gain, change, lose, adopt}}, moreLabelKeys} instead of nodes.',
    )
    .action(async (id: string, opts: { runId?: string; wait?: boolean } & NodeView, cmd: Command) => {
      setExit(
        await withContext(cmd, async (ctx) => {
          const runs = await ctx.runs();
          if (opts.wait) return waitAndReport(ctx, runs, { workflowId: id, ...(opts.runId ? { runId: opts.runId } : {}) }, false, opts);
          const report = await runs.status(id, opts.runId);
          const page = await nodePage(runs, report, opts);
          const summary = await runSummary(runs, report, opts);
          printReport(ctx, report, page, summary, () => reportText(report, page, summary));
          return exitCodeForRun(report);
        }),
      );
    });
}

/** `retry`: a new run over exactly the failed nodes of a finished one. */
function addRetryCommand(program: Command, setExit: SetExit): void {
  program
    .command('retry')
    .description('start a run over exactly the failed nodes of a finished run, against the same revision')
    .argument('<id>', 'workflow ID of the finished run')
    .addOption(runIdOption())
    .addOption(concurrencyOption())
    .addOption(allowMassRemovalOption())
    .addOption(waitOption())
    .addOption(outputOption())
    .addHelpText('after', '\nJSON: as update-labels, with retryOf: {workflowId, runId?}.')
    .action(async (id: string, opts: { runId?: string; concurrency?: number; allowMassRemoval?: boolean; wait?: boolean }, cmd: Command) => {
      setExit(
        await withContext(cmd, async (ctx) => {
          const runs = await ctx.runs();
          const run = await runs.retry(id, opts.runId, {
            ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
            ...(opts.allowMassRemoval ? { allowMassRemoval: true } : {}),
            by: cliUser(),
          });
          return started(ctx, runs, run, opts, { workflowId: id, ...(opts.runId ? { runId: opts.runId } : {}) });
        }),
      );
    });
}

/** Adds `update-labels`, `runs`, `status` and `retry` to `program`. */
export function addRunCommands(program: Command, setExit: SetExit): void {
  addUpdateLabelsCommand(program, setExit);
  addRunReadCommands(program, setExit);
  addRetryCommand(program, setExit);
}
