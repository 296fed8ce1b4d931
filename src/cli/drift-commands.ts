/**
 * `relabel drift`: run a drift detection now and show it, or show the latest
 * (or a given) report: counts, what healing did, and a page of the nodes
 * not in sync with what differs. Bounded output: one page at a time.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { DriftState, driftText } from '../core/plan/drift.ts';
import { clip } from '../core/plan/text.ts';
import { runAudit, StartedVia } from '../core/plan/run-audit.ts';
import type { DriftPage } from '../facade/index.ts';
import type { DriftReportRecord } from '../store/drift/drift-store.ts';
import { MAX_DRIFT_PAGE } from '../store/drift/drift-store.ts';
import type { HealOutcome } from '../contracts/drift-messages.ts';
import { cliUser, withContext, type SetExit } from './context.ts';
import { ExitCode } from './exit-codes.ts';
import { note, outputOption, printJson, say, table } from './output.ts';
import { MAX_SET_CELL } from './run-output.ts';
import { nonNegativeInteger, positiveInteger } from './parsers.ts';

const STORED = [DriftState.drifted, DriftState.moved, DriftState.pending, DriftState.unmanaged, DriftState.missing, DriftState.orphaned] as const;

/** `--state a,b` or `all`: states whose rows are stored. */
function stateList(value: string): DriftState[] {
  if (value === 'all') return [...STORED];
  const states = value.split(',').map((s) => s.trim());
  for (const s of states) {
    if (!(STORED as readonly string[]).includes(s))
      throw new InvalidArgumentError(`must be all or comma-separated states of ${STORED.join(', ')} (in_sync nodes are counted, not listed)`);
  }
  return [...new Set(states)] as DriftState[];
}

/** The report's heading lines. */
function heading(r: DriftReportRecord): string {
  const c = r.counts;
  const counts = c
    ? `${c.drifted} drifted, ${c.pending} pending, ${c.unmanaged} unmanaged, ${c.missing} missing${c.moved > 0 || c.orphaned > 0 ? `, ${c.moved} moved, ${c.orphaned} orphaned` : ''}, ${c.in_sync} in sync of ${c.total}`
    : 'not finished';
  return `drift report ${r.id}, site ${r.site}, revision ${r.revision} (policy: ${r.action}), ${r.finishedAt?.toISOString() ?? r.createdAt.toISOString()}: ${counts}`;
}

/** What releasing the orphaned nodes did, in one line. */
function releaseText(heal: HealOutcome | null): string[] {
  const release = heal?.release;
  if (!release) return [];
  const r = release.run;
  return [
    `release: ${r ? `run ${r.run} (${r.workflowId}), ${r.nodes} node(s): ${r.status}${r.written !== undefined ? `, ${r.written} written` : ''}${r.message ? `: ${r.message}` : ''}` : release.skipped}`,
  ];
}

/** Where a moved or orphaned node's record says it was written. */
function placeText(detail: DriftPage['items'][number]['detail'], state: string): string | undefined {
  const where = detail.lastSet !== undefined ? `node set ${clip(detail.lastSet, MAX_SET_CELL)}` : 'a named node';
  if (state === DriftState.orphaned)
    return `last written${detail.run !== undefined ? ` by run ${detail.run}` : ''} as ${where}; no BaremetalNode or node set holds it now`;
  if (state === DriftState.moved) return `written as ${where}; ${detail.changes ?? 0} key(s) to change at the latest revision`;
  return undefined;
}

function healText(heal: (HealOutcome & { starting?: { run: number; revision: number } }) | null): string | undefined {
  if (!heal || (heal.runs.length === 0 && !heal.skipped && !heal.starting && heal.release)) return undefined;
  if (heal.starting) return `heal: run ${heal.starting.run} (revision ${heal.starting.revision}) is going`;
  const runs = heal.runs.map(
    (r) =>
      `  run ${r.run} (${r.workflowId}): revision ${r.revision}, ${r.nodes} node(s): ${r.status}${r.written !== undefined ? `, ${r.written} written` : ''}${r.message ? `: ${r.message}` : ''}`,
  );
  return ['heal:', ...(runs.length > 0 ? runs : ['  no run started']), ...(heal.skipped ? [`  ${heal.skipped}`] : [])].join('\n');
}

function pageText(page: DriftPage, states: readonly string[]): string {
  if (page.items.length === 0)
    return `no ${states.join('/')} node${page.nodeSet !== undefined ? ` of node set ${page.nodeSet}` : ''}${page.offset > 0 ? ` from offset ${page.offset}` : ''}`;
  const rows = page.items.map((r) => [
    r.node,
    r.nodeSet === undefined ? '-' : clip(r.nodeSet, MAX_SET_CELL),
    r.state,
    r.revision === null ? '-' : String(r.revision),
    r.detail.keys
      ? driftText(r.detail.keys, 8)
      : (r.detail.note ??
        placeText(r.detail, r.state) ??
        (r.detail.changes !== undefined ? `${r.detail.changes} key(s) to change at the latest revision` : '')),
  ]);
  const end = page.offset + page.items.length;
  const more = end < page.total ? `; more with --offset ${end}` : '';
  const of = page.nodeSet !== undefined ? ` of node set ${page.nodeSet}` : '';
  return `${table(['NODE', 'NODE SET', 'STATE', 'REVISION', 'DETAIL'], rows)}\nnodes ${page.offset + 1}-${end} of ${page.total} ${states.join('/')}${of}${more}`;
}

/** The options of `relabel drift`. */
type DriftOptions = { site?: string; latest?: boolean; report?: number; state: DriftState[]; nodeSet?: string; offset: number; limit: number };

/** Adds `relabel drift` to `program`. */
export function addDriftCommands(program: Command, setExit: SetExit): void {
  program
    .command('drift')
    .description('detect drift now (nodes changed behind relabel), or show the latest report')
    .option('--site <name>', "the site (default: the store's; another is refused)")
    .option('--latest', 'show the latest report instead of detecting now')
    .addOption(new Option('--report <n>', 'show this report instead of detecting now').argParser(positiveInteger).conflicts('latest'))
    .addOption(
      new Option('--state <states>', `nodes to list: all, or some of ${STORED.join(', ')}`).argParser(stateList).default([DriftState.drifted], 'drifted'),
    )
    .option('--node-set <name>', 'list only the members of this node set (relabel/NodeSet/v1) of the report; the detection covers the whole site')
    .addOption(new Option('--offset <n>', 'first node of the list to show').argParser(nonNegativeInteger).default(0))
    .addOption(new Option('--limit <n>', `most nodes to list (at most ${MAX_DRIFT_PAGE})`).argParser(positiveInteger).default(100))
    .addOption(outputOption())
    .addHelpText(
      'after',
      '\nStates: drifted (an owned label, annotation or taint is no longer as the revision the node carries wants),\n' +
        'moved (as its revision wants, written as a member of one node set; the latest design puts it in another or\n' +
        'names it), pending (as its revision wants; a newer committed revision would change it), unmanaged (no update\n' +
        "run wrote it), missing (in the design, not in the cluster), orphaned (carries this site's applied-run record,\n" +
        'but no BaremetalNode names it and no node set matches it; DETAIL says where it was last written), in_sync.\n' +
        'Drifted beats moved, moved beats pending.\n' +
        "With the label policy's drift: {orphans: release}, a detection then starts one release run over the orphaned\n" +
        'nodes (see relabel release --help); with keep (the default) they are only reported.\n' +
        "With the label policy's drift: {action: heal}, a detection starts one update run per carried revision over\n" +
        'exactly the drifted nodes (skipped, and said, while a run of the site is going).\n' +
        "NODE SET names the node set a member belongs to (- for a node the design names); --node-set lists one set's members.\n" +
        'JSON: {report: {id, site, revision, action, counts, heal, createdAt, finishedAt, workflowId},\n' +
        '      nodes: {report, nodeSet?, total, offset, items: [{seq, node, nodeSet?, state, revision, detail}]}}.',
    )
    .action(async (opts: DriftOptions, cmd: Command) => {
      if (opts.limit > MAX_DRIFT_PAGE) cmd.error(`error: --limit is at most ${MAX_DRIFT_PAGE}`, { exitCode: ExitCode.invalidInput });
      setExit(
        await withContext(cmd, async (ctx) => {
          const drift = await ctx.drift();
          const set = opts.nodeSet !== undefined ? { nodeSet: opts.nodeSet } : {};
          let report: DriftReportRecord;
          if (opts.report !== undefined) report = await drift.report(opts.report);
          else if (opts.latest) report = await drift.latest(opts.site);
          else {
            // Heal runs this detection starts record who asked for it.
            const audit = runAudit(cliUser(), StartedVia.cli);
            report = await drift.report(
              (await drift.detect({ ...(opts.site !== undefined ? { site: opts.site } : {}), audit, ...set }, (w) => note(`warning: ${w}`))).report,
            );
          }
          const page = await drift.nodes(report, { states: opts.state, ...set, offset: opts.offset, limit: opts.limit });
          if (ctx.format === 'json') return printJson({ report, nodes: page });
          const heal = healText(report.heal as HealOutcome | null);
          say([heading(report), ...(heal ? [heal] : []), ...releaseText(report.heal as HealOutcome | null), pageText(page, opts.state)].join('\n'));
        }),
      );
    });
}
