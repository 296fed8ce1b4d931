/**
 * `relabel plan`: what an update run would do to the fleet as a whole, per
 * label key, with where each label comes from, and what the mass-removal
 * brake would say. Thin over the plan facade.
 */
import { type Command, Option } from 'commander';
import { byText } from '../core/plan/label-plan.ts';
import { formatLabelSource } from '../core/site/label-provenance.ts';
import { createPlans, DEFAULT_PLAN_NODE_PAGE, MAX_PLAN_NODE_PAGE, type FleetPlan, type LabelKeyPlan } from '../facade/plan.ts';
import { withContext, type SetExit } from './context.ts';
import { ExitCode } from './exit-codes.ts';
import { note, outputOption, printJson, say, table } from './output.ts';
import { nonNegativeInteger, positiveInteger } from './parsers.ts';
import { impactText } from './impact-output.ts';
import { brakeText, MAX_SUMMARY_KEYS, nodeTable, progressReporter } from './run-output.ts';
import { targetsOf, withTargetOptions, type TargetOptions } from './target-options.ts';

/** Sources one cell of the per-key table names. */
const SOURCES_SHOWN = 3;

function sourcesCell(e: LabelKeyPlan): string {
  const shown = e.sources.slice(0, SOURCES_SHOWN).map((s) => `${formatLabelSource(s.source)} ×${s.nodes}`);
  const more = e.sources.length - shown.length + e.moreSources;
  return `${shown.join(', ') || '-'}${more > 0 ? `, +${more} more` : ''}`;
}

/** The plan for people: what it covers, the per-key table with sources, the brake, and the per-node detail when asked. */
export function planText(p: FleetPlan): string {
  const planned = p.statuses['success'] ?? 0;
  const parts = [
    `plan of revision ${p.revision} for site ${p.site}: ${p.targets} target node(s), ${planned} planned, ${p.changing} a run would write; nothing written ` +
      `(dry run ${p.workflowId}, run ${p.run}; relabel status ${p.workflowId} --summary)`,
  ];
  const failed = Object.entries(p.failureTypes).sort(([a, x], [b, y]) => y - x || byText(a, b));
  if (failed.length > 0) parts.push(`not planned: ${failed.map(([t, n]) => `${t} ${n}`).join(', ')}`);
  const sets = Object.entries(p.nodeSets);
  if (sets.length > 0) {
    parts.push(`node sets: ${sets.map(([set, n]) => (n === 0 ? `${set} matches no node` : `${set} ${n} member(s)`)).join(', ')}`);
  }
  for (const warning of p.warnings ?? []) parts.push(`warning: ${warning}`);
  const keys = Object.keys(p.labels).sort(byText);
  const rows = keys.slice(0, MAX_SUMMARY_KEYS).map((key) => {
    const e = p.labels[key] as LabelKeyPlan;
    return [key, String(e.desired), String(e.gain), String(e.change), String(e.lose), String(e.adopt), sourcesCell(e)];
  });
  const more = keys.length - rows.length + p.moreLabelKeys;
  if (rows.length === 0) parts.push('no labels desired or changed');
  else {
    parts.push(`per label key (NODES: planned nodes that want it; SOURCES: where it comes from, with node counts):`);
    parts.push(
      `${table(['LABEL', 'NODES', 'GAIN', 'CHANGE', 'LOSE', 'ADOPT', 'SOURCES'], rows)}${more > 0 ? `\n(and ${more} more keys: -o json lists up to 1000)` : ''}`,
    );
  }
  if (p.removal) parts.push(brakeText(p.removal, true));
  if (p.impact) parts.push(impactText(p.impact));
  if (p.nodes) {
    const { items, total, offset } = p.nodes;
    if (items.length > 0) {
      parts.push(nodeTable(items, { nodeSets: true }));
      const labelRows = items.flatMap((n) => Object.entries(n.labels ?? {}).map(([key, { value, source }]) => [n.node, key, value, formatLabelSource(source)]));
      if (labelRows.length > 0) parts.push(`desired labels and their sources:\n${table(['NODE', 'LABEL', 'VALUE', 'SOURCE'], labelRows)}`);
    }
    const last = offset + items.length;
    if (offset > 0 || last < total)
      parts.push(`nodes ${items.length === 0 ? 0 : offset + 1}–${last} of ${total}${last < total ? ` (more with --offset ${last})` : ''}`);
  }
  return parts.join('\n');
}

/** Adds `relabel plan` to `program`. */
export function addPlanCommand(program: Command, setExit: SetExit): void {
  withTargetOptions(program.command('plan'))
    .description(
      'show what an update run would do to the fleet: per label key the nodes that gain, change, lose or adopt it, where each label comes from, what the mass-removal brake would say, and the workload impact (DaemonSet pods gained and lost, pods evicted or stranded, their PodDisruptionBudgets); writes nothing',
    )
    .addOption(new Option('--revision <n>', 'revision to plan (default: the latest committed)').argParser(positiveInteger))
    .addOption(new Option('--nodes-detail', "add each node's plan and its desired labels with their sources (a page of nodes: --offset, --limit)"))
    .addOption(new Option('--offset <n>', 'first node of the per-node detail (target order)').argParser(nonNegativeInteger).default(0))
    .addOption(
      new Option('--limit <n>', `most nodes in the per-node detail (at most ${MAX_PLAN_NODE_PAGE})`).argParser(positiveInteger).default(DEFAULT_PLAN_NODE_PAGE),
    )
    .addOption(outputOption())
    .addHelpText(
      'after',
      '\nTargets as for update-labels: --nodes, --nodes-from, --all, --node-set, or a filter of --rack, --tag and --label; exactly one.\n' +
        'Runs a dry run (one bulk read of the nodes, every plan computed in the worker, nothing written), then sums its\n' +
        "per-node plans from the store. Sources: node (its own owner_data), host profile P (depth N: 1 is the node's\n" +
        "own profile, 2 its parent…), rack R (the rack document's labels), node set S (a member's set), generated (rack, site, host_profile, tag),\n" +
        'plugin P (a label plugin of the plugin set the dry run pinned, for a key the documents do not give the node).\n' +
        'Exit 0 whatever the brake would say.\n' +
        'JSON: {workflowId, runId, run, revision, site, targets, statuses, changing, failureTypes, labels: {KEY: {desired, gain, change,\n' +
        'lose, adopt, sources: [{source: {kind, …}, nodes}], moreSources}}, moreLabelKeys, removal: {owned, removed, nodes,\n' +
        'keys: [{key, nodes}], moreKeys, maxFraction, exceeded}, impact: {daemonSets: [{namespace, name, gains, loses}],\n' +
        'workloads: [{namespace, workload, evicted, stranded, disruptionBudgets}], disruptionBudgets, totals, more…} or\n' +
        '{unavailable} or null (each of gains, loses, evicted, stranded: {count, sample: at most 20}), nodes?: {total,\n' +
        'offset, items: [{node, nodeSet?, status, set, was, removed, adopted, …, labels: {KEY: {value, source}}}]}}.\n' +
        'Per-node table: NODE SET is the node set a member belongs to (- for a node the design names); SET counts the labels set.',
    )
    .action(async (opts: TargetOptions & { revision?: number; nodesDetail?: boolean; offset: number; limit: number }, cmd: Command) => {
      const chosen = targetsOf(opts, cmd);
      if (opts.limit > MAX_PLAN_NODE_PAGE) cmd.error(`error: --limit is at most ${MAX_PLAN_NODE_PAGE}`, { exitCode: ExitCode.invalidInput });
      setExit(
        await withContext(cmd, async (ctx) => {
          const plans = createPlans(await ctx.runs());
          const progress = progressReporter(process.stderr);
          let plan: FleetPlan;
          try {
            plan = await plans.plan({
              ...chosen,
              ...(opts.revision !== undefined ? { revision: opts.revision } : {}),
              ...(opts.nodesDetail ? { nodes: { offset: opts.offset, limit: opts.limit } } : {}),
              onProgress: (p) => progress.update(p),
              onWarning: (warning) => note(warning ? `warning: ${warning}` : 'a worker polls the task queue again; the plan goes on'),
            });
          } finally {
            progress.done();
          }
          if (ctx.format === 'json') printJson(plan);
          else say(planText(plan));
          return ExitCode.ok;
        }),
      );
    });
}
