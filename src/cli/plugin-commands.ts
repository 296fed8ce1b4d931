/**
 * `relabel plugins status | poll | schedule`: the label plugins of a site.
 * Thin over the plugins facade: each plugin's last poll and last good one,
 * a poll now (waited for), and the Temporal Schedule polling them.
 */
import { type Command, Option } from 'commander';
import type { PluginStatusRow } from '../store/plugins/plugin-store.ts';
import type { PollPluginsResult } from '../contracts/plugin-messages.ts';
import { DEFAULT_PLUGIN_POLL_EVERY } from '../facade/plugins.ts';
import { withContext, type SetExit } from './context.ts';
import { ExitCode } from './exit-codes.ts';
import { outputOption, printJson, say, table } from './output.ts';

/** The status rows as a table for people. */
export function statusTable(rows: readonly PluginStatusRow[]): string {
  if (rows.length === 0) return 'no plugin has been polled yet';
  return table(
    ['SITE', 'PLUGIN', 'LAST POLL', 'OK', 'LAST GOOD', 'SET', 'NODES', 'LABELS', 'ERROR'],
    rows.map((r) => [
      r.site,
      r.plugin,
      r.polledAt.toISOString(),
      r.ok ? 'yes' : 'NO',
      r.lastGoodAt?.toISOString() ?? 'never',
      r.lastGoodSet === null ? '-' : String(r.lastGoodSet),
      r.nodes === null ? '-' : String(r.nodes),
      r.labels === null ? '-' : String(r.labels),
      r.error ?? '',
    ]),
  );
}

/** A poll's result for people: the headline, then one line per plugin. */
export function pollText(result: PollPluginsResult & { workflowId: string }): string {
  const set = result.set
    ? `plugin set ${result.set.id} (${result.set.created ? 'new' : 'unchanged'}): ${result.set.labels} label(s)`
    : 'no plugin set yet: runs apply document labels only';
  const lines = [`poll ${result.workflowId}: ${result.status}; site ${result.site}, revision ${result.revision}; ${set}`];
  for (const p of result.plugins) {
    lines.push(
      p.ok
        ? `  ${p.plugin}: ok, ${p.labels ?? 0} label(s) on ${p.nodes ?? 0} node(s)`
        : `  ${p.plugin}: FAILED${p.keptLastGood ? ' (last good labels kept)' : ''}: ${p.error ?? ''}`,
    );
  }
  const u = result.updateRun;
  if (u) lines.push('workflowId' in u ? `update run ${u.run} started (${u.workflowId}) for ${u.targets} node(s)` : `no update run: ${u.skipped}`);
  return lines.join('\n');
}

/** Adds the `plugins` command and its subcommands. */
export function addPluginCommands(program: Command, setExit: SetExit): void {
  const plugins = program.command('plugins').description('label plugins: their status, a poll now, the schedule polling them');
  const siteOption = () => new Option('--site <name>', 'the site (default: the site of the latest committed revision)');

  plugins
    .command('status')
    .description("each plugin's last poll: whether it was good, when it last was, its error")
    .option('--site <name>', 'only this site (default: every site)')
    .addOption(outputOption())
    .addHelpText(
      'after',
      "\nExit code: 0 when every plugin's last poll was good, 4 when any failed.\nJSON: [{site, plugin, polledAt, ok, error, lastGoodAt, lastGoodSet, nodes, labels}].",
    )
    .action(async (opts: { site?: string }, cmd: Command) => {
      setExit(
        await withContext(cmd, async (ctx) => {
          const rows = await (await ctx.plugins()).status(opts.site);
          if (ctx.format === 'json') printJson(rows);
          else say(statusTable(rows));
          return rows.every((r) => r.ok) ? ExitCode.ok : ExitCode.partialSuccess;
        }),
      );
    });

  plugins
    .command('poll')
    .description("poll the site's plugins now and wait: good output becomes the plugin set runs use")
    .addOption(siteOption())
    .addOption(outputOption())
    .addHelpText(
      'after',
      '\nExit code: 0 when every plugin was good, 4 when some failed, 5 when all failed (their last good labels stay).\n' +
        'JSON: {workflowId, site, revision, status, set: {id, created, nodes, labels, previous}|null, plugins: [{plugin, ok, nodes?, labels?, error?, keptLastGood?}], updateRun?}.',
    )
    .action(async (opts: { site?: string }, cmd: Command) => {
      setExit(
        await withContext(cmd, async (ctx) => {
          const result = await (await ctx.plugins(true)).poll(opts.site);
          if (ctx.format === 'json') printJson(result);
          else say(pollText(result));
          return result.status === 'failed' ? ExitCode.failure : result.status === 'partial' ? ExitCode.partialSuccess : ExitCode.ok;
        }),
      );
    });

  plugins
    .command('schedule')
    .description(`create (or update) the Temporal Schedule relabel-plugins/<site> polling the site's plugins (overlap: skip)`)
    .addOption(siteOption())
    .option('--every <interval>', 'time between polls: 90s, 10m, 1h30m (1m to 168h)', DEFAULT_PLUGIN_POLL_EVERY)
    .addOption(outputOption())
    .addHelpText('after', '\nJSON: {site, scheduleId, every, created}.')
    .action(async (opts: { site?: string; every: string }, cmd: Command) => {
      setExit(
        await withContext(cmd, async (ctx) => {
          const made = await (await ctx.plugins(true)).schedule({ every: opts.every, ...(opts.site !== undefined ? { site: opts.site } : {}) });
          if (ctx.format === 'json') printJson(made);
          else say(`${made.created ? 'created' : 'updated'} schedule ${made.scheduleId}: polls the plugins of site ${made.site} every ${made.every}`);
          return ExitCode.ok;
        }),
      );
    });
}
