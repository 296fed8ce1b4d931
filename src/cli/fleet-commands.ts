/**
 * `relabel fleet sites add | list | remove`: the fleet registry at the
 * fleet's centre. Each site is a name, the task queue its worker polls
 * (that worker runs beside the site's cluster, holding only its
 * credentials) and labels rollouts group sites by. `list` shows whether
 * each site's worker is polling, as Temporal sees it.
 */
import { type Command, Option } from 'commander';
import { defaultTaskQueue } from '../core/fleet/sites.ts';
import { MAX_FLEET_PAGE } from '../store/fleet/fleet-store.ts';
import { DEFAULT_FLEET_PAGE, type FleetPage, type FleetSiteView } from '../facade/fleet.ts';
import { cliUser, withContext, type SetExit } from './context.ts';
import { ExitCode } from './exit-codes.ts';
import { outputOption, printJson, say, table } from './output.ts';
import { InvalidArgumentError } from 'commander';
import { addFleetRolloutCommands } from './fleet-rollout-commands.ts';
import { addFleetDocsCommands } from './fleet-docs-commands.ts';
import { addFleetPlanCommand } from './fleet-survey-commands.ts';

/** Parses one `--label key=value`, gathering them. */
function label(text: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = text.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError(`${JSON.stringify(text.slice(0, 80))}: expected key=value`);
  return { ...previous, [text.slice(0, at)]: text.slice(at + 1) };
}

function positive(text: string): number {
  const n = Number(text);
  if (!/^\d{1,5}$/.test(text) || n < 1 || n > MAX_FLEET_PAGE) throw new InvalidArgumentError(`expected a number from 1 to ${MAX_FLEET_PAGE}`);
  return n;
}

const labelsText = (labels: Record<string, string>) =>
  Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');

function workerText(site: FleetSiteView): string {
  const w = site.worker;
  if (!w) return '';
  if (w.unknown !== undefined) return `unknown (${w.unknown})`;
  if (w.polling) return `polling (${w.workers} worker${w.workers === 1 ? '' : 's'})`;
  return w.lastPollAt ? `NOT POLLING (last poll ${w.lastPollAt})` : 'NO WORKER';
}

/** A page of sites for people. */
export function sitesTable(page: FleetPage): string {
  if (page.total === 0) return 'no site is registered: add one with `relabel fleet sites add <name>`';
  const rows = page.sites.map((s) => [s.name, s.taskQueue, labelsText(s.labels), workerText(s)]);
  const more = page.next !== undefined ? `\n${page.sites.length} of ${page.total} site(s); the next page: --after ${page.next}` : '';
  return table(['SITE', 'TASK QUEUE', 'LABELS', 'WORKER'], rows) + more;
}

/** Adds `fleet` and its `sites` subcommands. */
export function addFleetCommands(program: Command, setExit: SetExit): void {
  const fleet = program.command('fleet').description("a fleet of sites from one Temporal: each site's worker on its own task queue");
  addFleetRolloutCommands(fleet, setExit);
  addFleetDocsCommands(fleet, setExit);
  addFleetPlanCommand(fleet, setExit);
  const sites = fleet.command('sites').description('the fleet registry: sites, their task queues and labels, their workers');

  sites
    .command('add <name>')
    .description("register a site: its name (its documents' region), the task queue its worker polls, its labels")
    .option('--queue <name>', 'the task queue the site worker polls (default: relabel-<name>; the global --task-queue is the centre worker’s)')
    .option('--label <key=value>', 'a label rollouts group and select sites by (repeatable)', label)
    .addOption(outputOption())
    .addHelpText(
      'after',
      "\nThe site's worker runs beside its cluster with its `--task-queue` set to this queue; no two sites share one.\n" +
        'Exit code: 0 when added; 2 for a bad name, queue or label; 5 when the name or the queue is already registered.\n' +
        'JSON: {name, taskQueue, labels, addedAt, addedBy}.',
    )
    .action(async (name: string, opts: { queue?: string; label?: Record<string, string> }, cmd: Command) => {
      setExit(
        await withContext(cmd, async (ctx) => {
          const added = await (await ctx.fleet()).add({ name, taskQueue: opts.queue ?? defaultTaskQueue(name), labels: opts.label ?? {} }, cliUser());
          if (ctx.format === 'json') printJson(added);
          else
            say(
              `site ${added.name} registered: its worker polls task queue ${added.taskQueue}${Object.keys(added.labels).length > 0 ? `; labels ${labelsText(added.labels)}` : ''}`,
            );
          return ExitCode.ok;
        }),
      );
    });

  sites
    .command('list')
    .description("the registered sites, a page at a time, with whether each site's worker is polling its queue")
    .addOption(new Option('--limit <n>', `sites in the page (at most ${MAX_FLEET_PAGE})`).argParser(positive).default(DEFAULT_FLEET_PAGE))
    .option('--after <name>', 'list the sites after this one (the next page)')
    .option('--no-health', 'do not ask Temporal about the workers (works without Temporal)')
    .addOption(outputOption())
    .addHelpText(
      'after',
      '\nA worker is polling when Temporal saw it poll the queue for both workflow and activity tasks in the last two minutes.\n' +
        'Exit code: 0 when every listed site has a worker polling (or --no-health), 4 when some have none.\n' +
        'JSON: {sites: [{name, taskQueue, labels, addedAt, addedBy?, worker?: {polling, workers, lastPollAt?, identities, unknown?}}], total, next?}.',
    )
    .action(async (opts: { limit: number; after?: string; health: boolean }, cmd: Command) => {
      setExit(
        await withContext(cmd, async (ctx) => {
          const page = await (
            await ctx.fleet(opts.health)
          ).list({ limit: opts.limit, health: opts.health, ...(opts.after !== undefined ? { after: opts.after } : {}) });
          if (ctx.format === 'json') printJson(page);
          else say(sitesTable(page));
          return page.sites.every((s) => s.worker === undefined || s.worker.polling) ? ExitCode.ok : ExitCode.partialSuccess;
        }),
      );
    });

  sites
    .command('remove <name>')
    .description('unregister a site (its worker, store and cluster are untouched)')
    .addOption(outputOption())
    .addHelpText('after', '\nExit code: 0 when removed, 3 when no site of that name is registered.\nJSON: {removed}.')
    .action(async (name: string, _opts: unknown, cmd: Command) => {
      setExit(
        await withContext(cmd, async (ctx) => {
          await (await ctx.fleet()).remove(name);
          if (ctx.format === 'json') printJson({ removed: name });
          else say(`site ${name} unregistered`);
          return ExitCode.ok;
        }),
      );
    });
}
