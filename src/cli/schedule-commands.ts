/**
 * `relabel schedule list | create | pause | unpause | trigger | delete`:
 * relabel's Temporal Schedules (one per site and kind), thin over the
 * schedules facade.
 */
import type { Command } from 'commander';
import { SCHEDULE_KINDS, type ScheduleView } from '../facade/schedules.ts';
import type { Schedules } from '../facade/index.ts';
import { withContext, type CliContext, type SetExit } from './context.ts';
import { ExitCode } from './exit-codes.ts';
import { outputOption, printJson, say, table } from './output.ts';

const KINDS = Object.keys(SCHEDULE_KINDS).join(', ');
const KIND_HELP = Object.entries(SCHEDULE_KINDS)
  .map(([name, k]) => `  ${name.padEnd(8)} ${k.description}; ID ${k.idPrefix}/<site>, every ${k.defaultEvery} by default`)
  .join('\n');

/** One schedule as a few lines for people. */
function viewText(v: ScheduleView): string {
  const last = v.lastRun ? `${v.lastRun.startedAt} ${v.lastRun.status ?? ''}${v.lastRun.result ? `: ${v.lastRun.result}` : ''}` : '-';
  return [
    `${v.scheduleId}: ${v.paused ? 'paused' : 'active'}, every ${v.every ?? '?'}`,
    `  next run:  ${v.nextRun ?? '-'}`,
    `  last run:  ${last}`,
    ...(v.note ? [`  note:      ${v.note}`] : []),
  ].join('\n');
}

/** The schedule a command names: a full ID (`relabel-drift/site`), or a kind and the store's site. */
async function idOf(schedules: Schedules, target: string, site: string | undefined): Promise<string> {
  return target.includes('/') ? target : schedules.idOf(target, site);
}

/** Adds a command acting on one named schedule. */
function onOne(
  parent: Command,
  setExit: SetExit,
  name: string,
  description: string,
  act: (schedules: Schedules, id: string, ctx: CliContext) => Promise<void>,
): void {
  parent
    .command(name)
    .description(description)
    .argument('<kind|id>', `a kind (${KINDS}) for the store's site, or a schedule ID such as relabel-drift/<site>`)
    .option('--site <name>', "the site (default: the store's; another is refused)")
    .addOption(outputOption())
    .action(async (target: string, opts: { site?: string }, cmd: Command) => {
      setExit(
        await withContext(cmd, async (ctx) => {
          const schedules = await ctx.schedules();
          await act(schedules, await idOf(schedules, target, opts.site), ctx);
          return ExitCode.ok;
        }),
      );
    });
}

/** Adds the schedule commands to `program`. */
export function addScheduleCommands(program: Command, setExit: SetExit): void {
  const schedule = program
    .command('schedule')
    .description("relabel's Temporal Schedules: periodic drift detection per site")
    .addHelpText('after', `\nKinds:\n${KIND_HELP}\n\nAn action falling due while the previous one still runs is skipped (overlap policy SKIP).`);

  schedule
    .command('list')
    .description("list relabel's schedules (IDs starting relabel-): state, interval, next run, last result")
    .addOption(outputOption())
    .addHelpText('after', '\nJSON: [{scheduleId, kind, site, paused, note?, every?, nextRun?, lastRun?: {startedAt, workflowId, runId, status?, result?}}].')
    .action(async (_opts: unknown, cmd: Command) => {
      setExit(
        await withContext(cmd, async (ctx) => {
          const views = await (await ctx.schedules()).list();
          if (ctx.format === 'json') printJson(views);
          else if (views.length === 0) say('no relabel schedules (create one with: relabel schedule create drift)');
          else {
            say(
              table(
                ['SCHEDULE', 'STATE', 'EVERY', 'NEXT RUN', 'LAST RUN', 'LAST RESULT'],
                views.map((v) => [
                  v.scheduleId,
                  v.paused ? 'paused' : 'active',
                  v.every ?? '-',
                  v.nextRun ?? '-',
                  v.lastRun ? `${v.lastRun.startedAt} ${v.lastRun.status ?? ''}` : '-',
                  v.lastRun?.result ?? '-',
                ]),
              ),
            );
          }
        }),
      );
    });

  schedule
    .command('create')
    .description("create the schedule of a kind for the store's site")
    .argument('<kind>', `one of ${KINDS}`)
    .option('--site <name>', "the site (default: the store's; another is refused)")
    .option('--every <interval>', 'how often, as 90s, 10m, 1h30m or 1d (1m to 7d; default per kind)')
    .option('--paused', 'create it paused')
    .addOption(outputOption())
    .addHelpText('after', `\nKinds:\n${KIND_HELP}\nJSON: the schedule as list shows it.`)
    .action(async (kind: string, opts: { site?: string; every?: string; paused?: boolean }, cmd: Command) => {
      setExit(
        await withContext(cmd, async (ctx) => {
          const view = await (await ctx.schedules()).create(kind, opts);
          if (ctx.format === 'json') printJson(view);
          else say(`created ${viewText(view)}`);
        }),
      );
    });

  onOne(schedule, setExit, 'pause', 'pause a schedule (no action is taken until it is unpaused)', async (s, id, ctx) => {
    const view = await s.pause(id);
    if (ctx.format === 'json') printJson(view);
    else say(viewText(view));
  });
  onOne(schedule, setExit, 'unpause', 'unpause a schedule', async (s, id, ctx) => {
    const view = await s.unpause(id);
    if (ctx.format === 'json') printJson(view);
    else say(viewText(view));
  });
  onOne(schedule, setExit, 'trigger', "take a schedule's action now, even while one it started is running", async (s, id, ctx) => {
    const started = await s.trigger(id);
    if (ctx.format === 'json') printJson({ scheduleId: id, triggered: true, ...(started ? { workflow: started } : {}) });
    else
      say(
        started
          ? `triggered ${id}: started ${started.workflowId} (run ${started.runId})`
          : `triggered ${id} (the workflow it started is not reported yet: see relabel schedule list)`,
      );
  });
  onOne(schedule, setExit, 'delete', 'delete a schedule (workflows it started are left alone)', async (s, id, ctx) => {
    await s.delete(id);
    if (ctx.format === 'json') printJson({ scheduleId: id, deleted: true });
    else say(`deleted ${id}`);
  });
}
