/**
 * How update runs are shown to people: the start block, progress (a live bar
 * on a terminal, plain periodic lines otherwise), the per-node table and the
 * final status.
 */
import { clip } from '../core/plan/text.ts';
import { describeRemoval, type RemovalAssessment } from '../core/plan/removal-brake.ts';
import { impactText } from './impact-output.ts';
import { byText } from '../core/plan/label-plan.ts';
import type { NodeOutcome, NodePage, StartedRun, RunStatusReport } from '../facade/runs/runs.ts';
import { createSummary, type LabelKeyCounts, type RunSummary } from '../facade/runs/run-results.ts';
import type { Progress } from '../contracts/messages.ts';
import { fields, table } from './output.ts';
import { waveLines, waveProgressNote, waveResultLines } from './wave-output.ts';

/** The block printed when a run starts: IDs, revision, targets and the Temporal UI link. */
export function startedText(run: StartedRun, dryRun: boolean, retryOf?: string): string {
  const shown = run.targets.length <= 10 ? run.targets.join(', ') : `${run.targets.slice(0, 10).join(', ')} and ${run.targets.length - 10} more`;
  return fields([
    ['started', `update_labels on site ${run.site}${dryRun ? ' (dry run: nothing is written)' : ''}`],
    ['retry of', retryOf],
    ['run', run.run],
    ['workflow ID', run.workflowId],
    ['run ID', run.runId],
    ['revision', run.revision],
    ['nodes', `${run.targets.length}: ${shown}`],
    ['Temporal UI', run.uiLink],
  ]);
}

/** One line of progress: phase, done/total and counts by status. */
export function progressLine(p: Progress): string {
  // Before the targets are known there is nothing to count yet.
  const paused = p.paused ? `${p.phase} (paused: no new node starts; relabel unpause resumes)` : p.phase;
  const phase = p.wave ? `${paused} [${waveProgressNote(p.wave)}]` : paused;
  if (p.total === 0) return `${phase}…`;
  const done = p.counts.success + p.counts.failure;
  return `${phase}: ${done}/${p.total} done (${p.counts.success} ok, ${p.counts.failure} failed, ${p.counts.running} running, ${p.counts.pending} pending, ${p.counts.written} written)`;
}

/** A bar `[#####-----]` of `width` cells for the share of nodes done. */
export function progressBar(p: Progress, width: number): string {
  const done = p.counts.success + p.counts.failure;
  const filled = p.total === 0 ? 0 : Math.round((done / p.total) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}

/** A writable stream as far as progress needs it. */
export interface ProgressStream {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/**
 * Progress reporting on `stream`: on a terminal one line redrawn in place;
 * otherwise a plain line when something changed, at most every `everyMs`
 * (the last state is always printed by `done`).
 */
export function progressReporter(stream: ProgressStream, everyMs = 2000, now: () => number = Date.now) {
  let last = '';
  let lastPrinted = '';
  let lastAt = -Infinity;
  let drawn = false;
  return {
    update(p: Progress): void {
      const line = progressLine(p);
      if (stream.isTTY) {
        const columns = stream.columns ?? 80;
        const width = Math.max(10, Math.min(40, columns - line.length - 2));
        // Clear the line and redraw; cut to the terminal's width so it never wraps.
        stream.write(`\r\x1b[2K${`${progressBar(p, width)} ${line}`.slice(0, columns - 1)}`);
        drawn = true;
        return;
      }
      last = line;
      if (line !== lastPrinted && now() - lastAt >= everyMs) {
        stream.write(`progress: ${line}\n`);
        lastPrinted = line;
        lastAt = now();
      }
    },
    done(): void {
      if (drawn) stream.write('\n');
      else if (last !== '' && last !== lastPrinted) stream.write(`progress: ${last}\n`);
    },
  };
}

/** Longest DETAIL cell; longer ones end in `…`. */
export const MAX_DETAIL = 200;

/** Label keys the per-key summary lists at most. */
export const MAX_SUMMARY_KEYS = 50;

/**
 * What a node's plan changes, for people: `set k=v, k: old → new; removed k;
 * adopted k; annotated k; tainted k=v:NoSchedule`, cut at {@link MAX_DETAIL}.
 */
export function changesText(n: NodeOutcome): string {
  const set = Object.entries(n.set ?? {}).map(([k, v]) => (n.was && Object.hasOwn(n.was, k) ? `${k}: ${n.was[k]} → ${v}` : `${k}=${v}`));
  const parts = [
    set.length > 0 ? `set ${set.join(', ')}` : '',
    n.removed && n.removed.length > 0 ? `removed ${n.removed.join(', ')}` : '',
    n.adopted && n.adopted.length > 0 ? `adopted ${n.adopted.join(', ')}` : '',
    n.annotations && n.annotations.set.length > 0 ? `annotated ${n.annotations.set.join(', ')}` : '',
    n.annotations && n.annotations.removed.length > 0 ? `unannotated ${n.annotations.removed.join(', ')}` : '',
    n.taints && n.taints.added.length > 0 ? `tainted ${n.taints.added.join(', ')}` : '',
    n.taints && n.taints.removed.length > 0 ? `untainted ${n.taints.removed.join(', ')}` : '',
    n.taintLifted ? 'uninitialized taint lifted' : '',
  ].filter((p) => p !== '');
  const text = parts.join('; ');
  return clip(text, MAX_DETAIL);
}

function outcomeRow(n: NodeOutcome): string[] {
  const count = (v: number | undefined) => (v === undefined ? '-' : String(v));
  const changes = changesText(n);
  const detail = n.error ? `${n.error.type}: ${n.error.message}` : n.status === 'success' && changes === '' ? 'no change' : changes;
  return [n.node, n.status, count(n.set && Object.keys(n.set).length), count(n.removed?.length), count(n.adopted?.length), detail];
}

/** Longest node set name a table cell shows. */
export const MAX_SET_CELL = 40;

/**
 * The per-node table: node, status, set/removed/adopted counts, and what
 * changes, or the failure type and reason. With `nodeSets`, a NODE SET
 * column after the node: the set a member belongs to (- for a node the
 * design names).
 */
export function nodeTable(nodes: readonly NodeOutcome[], options: { nodeSets?: boolean } = {}): string {
  if (!options.nodeSets) return table(['NODE', 'STATUS', 'SET', 'REMOVED', 'ADOPTED', 'DETAIL'], nodes.map(outcomeRow));
  const rows = nodes.map((n) => {
    const [node = n.node, ...rest] = outcomeRow(n);
    return [node, n.nodeSet === undefined ? '-' : clip(n.nodeSet, MAX_SET_CELL), ...rest];
  });
  return table(['NODE', 'NODE SET', 'STATUS', 'SET', 'REMOVED', 'ADOPTED', 'DETAIL'], rows);
}

/** The per-label-key table of a summary: at most {@link MAX_SUMMARY_KEYS} keys, then a line saying how many more. */
function labelTable(labels: Readonly<Record<string, LabelKeyCounts>>, moreKeys: number): string | undefined {
  const keys = Object.keys(labels).sort(byText);
  if (keys.length === 0) return undefined;
  const rows = keys.slice(0, MAX_SUMMARY_KEYS).map((key) => {
    const e = labels[key] as LabelKeyCounts;
    return [key, String(e.gain), String(e.change), String(e.lose), String(e.adopt)];
  });
  const more = keys.length - rows.length + moreKeys;
  return `${table(['LABEL', 'GAIN', 'CHANGE', 'LOSE', 'ADOPT'], rows)}${more > 0 ? `\n(and ${more} more keys)` : ''}`;
}

/**
 * Per label key, how many of `nodes` gain it, change its value, lose it or
 * have it adopted; undefined when none changes anything. At most
 * {@link MAX_SUMMARY_KEYS} keys, then a line saying how many more.
 */
export function labelSummary(nodes: readonly NodeOutcome[]): string | undefined {
  const sum = createSummary(0);
  for (const n of nodes) sum.add(n);
  const { labels, moreLabelKeys } = sum.result();
  return labelTable(labels, moreLabelKeys);
}

/** A whole run's summary for people: nodes by status, failures by type, and the per-label-key table. */
export function summaryText(s: RunSummary): string {
  const statuses = Object.entries(s.statuses)
    .sort(([a], [b]) => byText(a, b))
    .map(([st, n]) => `${n} ${st}`);
  const parts = [`nodes: ${statuses.join(', ') || 'none'} (${s.written} written)`];
  const types = Object.entries(s.failureTypes).sort(([a, x], [b, y]) => y - x || byText(a, b));
  if (types.length > 0) parts.push(`failures by type: ${types.map(([t, n]) => `${t} ${n}`).join(', ')}`);
  const c = s.pluginConflicts;
  if (c) parts.push(`plugin labels not applied (the documents, or a plugin sorting first, give another value): ${c.labels} on ${c.nodes} node(s)`);
  const sets = Object.entries(s.nodeSets ?? {});
  if (sets.length > 0) parts.push(`node set members: ${sets.map(([set, n]) => `${set} ${n}`).join(', ')}`);
  const labels = labelTable(s.labels, s.moreLabelKeys);
  parts.push(labels ? `nodes per label key (all nodes of the run):\n${labels}` : 'no label changes');
  return parts.join('\n');
}

/**
 * What the mass-removal brake says of a plan: in a dry run (or `relabel
 * plan`) whether a real run would be refused; after a run, what it removed.
 */
export function brakeText(removal: RemovalAssessment, dryRun: boolean): string {
  if (!dryRun) return `removals: ${describeRemoval(removal)} (allowed)`;
  const verdict = removal.exceeded ? 'a run would be REFUSED (allow it with --allow-mass-removal)' : 'a run would go ahead';
  return `mass-removal brake: ${verdict}: it ${describeRemoval(removal)}`;
}

/** A line saying which part of the nodes a page shows, when it is not all of them. */
function pageNote(page: NodePage): string | undefined {
  if (page.offset === 0 && page.items.length >= page.total) return undefined;
  const last = page.offset + page.items.length;
  return `nodes ${page.items.length === 0 ? 0 : page.offset + 1}–${last} of ${page.total}${last < page.total ? ` (more with --offset ${last})` : ''}`;
}

/**
 * Warnings of the node sets a run was started for that no node of it was a
 * member of: read from the summary's member counts, or, without one, from a
 * run with no node at all (then every set it was started for matched none).
 */
export function emptySetWarnings(r: RunStatusReport, summary?: RunSummary): string[] {
  if (!r.result || !r.nodeSets) return [];
  const counted = summary?.nodeSets ?? {};
  const empty = summary ? r.nodeSets.filter((set) => (counted[set] ?? 0) === 0) : r.result.counts.total === 0 ? r.nodeSets : [];
  return empty.map((set) => `node set "${set}" matches no node: nothing of it was ${r.result?.dryRun ? 'planned' : 'written'}`);
}

/** How a run ended, for people: the rejection, or the per-node table (a page of it) and final status. */
export function outcomeText(r: RunStatusReport, page?: NodePage, summary?: RunSummary): string {
  const parts: string[] = [];
  if (r.execution !== 'RUNNING' && r.execution !== 'COMPLETED' && r.execution !== 'FAILED') parts.push(`run ${r.execution.toLowerCase()}`);
  if (r.failure) parts.push(`run failed: ${r.failure.type}: ${r.failure.message}`);
  if (!r.result && (page || summary)) {
    // A cancelled run: its rows were settled when it stopped.
    if (page && page.items.length > 0) parts.push(nodeTable(page.items));
    const note = page && pageNote(page);
    if (note) parts.push(note);
    if (summary) parts.push(summaryText(summary));
    parts.push('nodes written before the stop stay relabelled (no rollback); cancelled nodes were never started: nothing was written to them');
  }
  if (r.result) {
    const { result } = r;
    if (page && page.items.length > 0) parts.push(nodeTable(page.items));
    const note = page && pageNote(page);
    if (note) parts.push(note);
    if (summary) parts.push(summaryText(summary));
    else {
      const keys = page && labelSummary(page.items);
      if (keys) parts.push(`nodes per label key${note ? ' (of the nodes shown)' : ''}:\n${keys}`);
    }
    const c = result.counts;
    parts.push(
      `status: ${result.status}${result.dryRun ? ' (dry run: nothing written)' : ''}: ` +
        `${c.success} of ${c.total} node(s) succeeded, ${c.failure} failed, ${c.written} written`,
    );
    parts.push(...waveResultLines(result));
    if (result.removal && (result.dryRun || result.removal.removed > 0)) parts.push(brakeText(result.removal, result.dryRun));
    if (result.impact) parts.push(impactText(result.impact));
    for (const warning of emptySetWarnings(r, summary)) parts.push(`warning: ${warning}`);
    if (c.failure > 0 && !result.dryRun) parts.push(`retry the failed nodes with: relabel retry ${r.workflowId} --run-id ${r.runId}`);
  }
  return parts.join('\n');
}

/**
 * A run's report for people: IDs and times, any warnings (no worker
 * polling), progress while it runs, the rejection when it failed, or the
 * per-node table and final status.
 */
export function reportText(r: RunStatusReport, page?: NodePage, summary?: RunSummary): string {
  const parts: string[] = [
    fields([
      ['run', r.run ?? r.result?.run],
      ['workflow ID', r.workflowId],
      ['run ID', r.runId],
      ['execution', r.execution],
      ['started', r.startTime],
      ['started by', r.startedBy !== undefined ? `${r.startedBy} (${r.startedVia ?? '?'})` : undefined],
      ['closed', r.closeTime],
      ['revision', r.result?.revision ?? r.progress?.revision],
      ['site', r.result?.site ?? r.progress?.site],
      ['plugin set', r.pluginSet === undefined ? undefined : r.pluginSet === 0 ? 'none (document labels only)' : r.pluginSet],
      ['retry of', r.result?.retryOf ? `${r.result.retryOf.workflowId} (run ${r.result.retryOf.runId})` : undefined],
      ['Temporal UI', r.uiLink],
    ]),
  ];
  for (const warning of r.warnings ?? []) parts.push(`warning: ${warning}`);
  if (r.execution === 'RUNNING' && r.progress) {
    parts.push(`progress: ${progressLine(r.progress)}`);
    if (r.progress.wave) parts.push(...waveLines(r.progress.wave, r.workflowId));
    for (const f of r.progress.failures) parts.push(`  ${f.node}: ${f.error.type}: ${f.error.message}`);
  }
  const outcome = outcomeText(r, page, summary);
  if (outcome !== '') parts.push(outcome);
  return parts.join('\n');
}
