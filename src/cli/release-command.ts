/**
 * `relabel release --nodes a,b`: take back from nodes that left management
 * everything relabel's records say it wrote there (the labels in
 * owned-labels, the annotations in owned-annotations, the taints in
 * owned-taints) and the records themselves, as one numbered, audited run.
 * Thin over the facade's `startRelease`; waits for the run by default, so
 * a refused release (a node unknown, not this site's, or still in the
 * design) shows here, with nothing written.
 */
import { type Command, Option } from 'commander';
import { startRelease } from '../facade/release.ts';
import { cliUser, withContext, type SetExit } from './context.ts';
import { ExitCode } from './exit-codes.ts';
import { note, outputOption, printJson, say } from './output.ts';
import { nodeList } from './parsers.ts';
import { waitAndReport } from './run-commands.ts';
import { startedText } from './run-output.ts';

/** The options of `relabel release`. */
type ReleaseFlags = { nodes: string[]; allowMassRemoval?: boolean; wait: boolean };

/** Adds `relabel release` to `program`. */
export function addReleaseCommand(program: Command, setExit: SetExit): void {
  program
    .command('release')
    .description('take back what relabel wrote on nodes that left management (orphaned: no BaremetalNode names them, no node set matches them)')
    .requiredOption('--nodes <names>', 'comma-separated node names, such as n1,n2', nodeList)
    .addOption(
      new Option(
        '--allow-mass-removal',
        "go ahead even when the release removes more of the labels relabel owns on the site's nodes than the policy's max_removal_fraction; without it such a release is refused, nothing written",
      ),
    )
    .option('--no-wait', 'print the started run and return; follow it with relabel status')
    .addOption(outputOption())
    .addHelpText(
      'after',
      '\nOne update run at the latest committed revision whose plan wants nothing of each node: every label listed in\n' +
        'relabel.airshipit.org/owned-labels, annotation in …/owned-annotations and taint in …/owned-taints is removed,\n' +
        'with those three records and relabel.airshipit.org/applied, in one guarded patch per node; nothing else is\n' +
        'touched (keys the policy protects stay). The run is refused, nothing written, when a node is not in the cluster,\n' +
        'carries no applied-run record of this site, or is still named by a BaremetalNode or matched by a node set of\n' +
        'the latest revision (exit 2, naming each); the mass-removal brake weighs the release against every owned label\n' +
        "on the site's nodes (exit 3). `relabel drift --state orphaned` lists the candidates; the label policy's\n" +
        'drift: {orphans: release} releases them at each detection. The run shows in relabel runs (VIA release).\n' +
        'JSON: with --no-wait {workflowId, runId, uiLink, revision, site, targets}; else the final report (as `relabel status -o json`).',
    )
    .action(async (opts: ReleaseFlags, cmd: Command) => {
      setExit(
        await withContext(cmd, async (ctx) => {
          const runs = await ctx.runs();
          const run = await startRelease(runs, { nodes: opts.nodes, by: cliUser(), ...(opts.allowMassRemoval ? { allowMassRemoval: true } : {}) });
          if (ctx.format === 'json' && !opts.wait) {
            printJson(run);
            return ExitCode.ok;
          }
          if (ctx.format === 'json') note(`started ${run.workflowId} (run ${run.runId})${run.uiLink ? ` ${run.uiLink}` : ''}`);
          else say(startedText(run, false).replace('update_labels', 'release'));
          return opts.wait ? waitAndReport(ctx, runs, run, true) : ExitCode.ok;
        }),
      );
    });
}
