/**
 * `relabel fleet plan` and `relabel fleet status` without a rollout name:
 * a question asked of every chosen site's worker on its own queue (its dry
 * run; its last run, drift and joins), summed up fleet-wide, with a page of
 * sites. Thin over the fleet surveys facade.
 */
import { type Command, Option } from 'commander';
import { MAX_SURVEY_PAGE, SurveyKind, type FleetPlanTotals, type FleetSurveyResult, type SiteAnswer, type SurveyPage } from '../contracts/fleet-survey.ts';
import type { EndedSurvey, SurveyRequest } from '../facade/fleet-survey.ts';
import { withContext, type CliContext, type SetExit } from './context.ts';
import { ExitCode } from './exit-codes.ts';
import { note, outputOption, printJson, say, table } from './output.ts';
import { count, nameList, nonNegativeInteger, positiveInteger, selector } from './parsers.ts';

/** Sites a page shows when not told. */
const DEFAULT_SITES_SHOWN = 20;

const failureRows = (failures: readonly SiteAnswer[]) => failures.map((f) => [f.site, f.state, f.reason ?? '']);

function pageFooter(page: SurveyPage): string | undefined {
  const last = page.offset + page.items.length;
  if (page.offset === 0 && last >= page.total) return undefined;
  return `sites ${page.items.length === 0 ? 0 : page.offset + 1}–${last} of ${page.total}${last < page.total ? ` (more with --offset ${last})` : ''}`;
}

function answeredLine(what: string, ended: EndedSurvey): string {
  const r = ended.result;
  return `fleet ${what} of ${r.sites} site(s) (${ended.workflowId}): ${r.answered} answered, ${r.failed} failed, ${r.unreachable} unreachable`;
}

function brakeLine(t: FleetPlanTotals): string {
  const base = `brake: ${t.brake.removed} of ${t.brake.owned} owned label(s) would be removed fleet-wide`;
  return t.brake.sitesExceeded === 0
    ? `${base}; no site's brake refuses`
    : `${base}; ${t.brake.sitesExceeded} site(s)' brake would refuse (BRAKE below; fleet rollout --allow-mass-removal goes past it)`;
}

/** The fleet plan for people: totals, the keys with their sources, a page of sites, the failures. */
export function fleetPlanText(ended: EndedSurvey): string {
  const t = ended.result.plan as FleetPlanTotals;
  const parts = [
    `${answeredLine('plan', ended)}; nothing written`,
    `reached: ${t.reached} site(s) would change; ${t.changing} of ${t.planned} planned node(s) would be written ` +
      `(label × node: ${t.gain} gained, ${t.change} changed, ${t.lose} lost, ${t.adopt} adopted)`,
    brakeLine(t),
  ];
  if (t.keys.length > 0) {
    parts.push(
      `per label key (summed over each site's top keys; SOURCES: the documents or plugins they come from):\n${table(
        ['LABEL', 'SITES', 'GAIN', 'CHANGE', 'LOSE', 'ADOPT', 'SOURCES'],
        t.keys.map((k) => [k.key, String(k.sites), String(k.gain), String(k.change), String(k.lose), String(k.adopt), k.sources.join(', ') || '-']),
      )}${t.moreKeys > 0 ? `\n(and ${t.moreKeys} more keys)` : ''}`,
    );
  }
  const rows = ended.page.items.map((a) => {
    const p = a.plan;
    if (!p) return [a.site, a.state, '-', '-', '-', '-', '-', '-', '-', '-'];
    const brake = p.brake ? `${p.brake.removed}/${p.brake.owned}${p.brake.exceeded ? ' REFUSES' : ''}` : '-';
    return [
      a.site,
      a.state,
      String(p.revision),
      String(p.targets),
      String(p.planned),
      String(p.changing),
      String(p.gain),
      String(p.change),
      String(p.lose),
      brake,
    ];
  });
  parts.push(table(['SITE', 'STATE', 'REVISION', 'TARGETS', 'PLANNED', 'WRITE', 'GAIN', 'CHANGE', 'LOSE', 'BRAKE'], rows));
  const footer = pageFooter(ended.page);
  if (footer) parts.push(footer);
  if (ended.result.failures.length > 0) parts.push(`not answered:\n${table(['SITE', 'STATE', 'REASON'], failureRows(ended.result.failures))}`);
  parts.push("each site's plan whole: `relabel status <its dry run> --summary` against that site (-o json names it)");
  return parts.join('\n');
}

const ago = (iso: string | undefined, now: number) => {
  if (iso === undefined) return '-';
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  return s < 120 ? `${s}s ago` : s < 7200 ? `${Math.round(s / 60)}m ago` : s < 172_800 ? `${Math.round(s / 3600)}h ago` : `${Math.round(s / 86_400)}d ago`;
};

/** The fleet's state for people: a row per site (last run, drift, joins, alerts), the alerts by site count, the failures. */
export function fleetStateText(ended: EndedSurvey, now = Date.now()): string {
  const r: FleetSurveyResult = ended.result;
  const parts = [answeredLine('status', ended)];
  const alerts = Object.entries(r.alerts ?? {});
  parts.push(alerts.length === 0 ? 'alerts: none' : `alerts: ${alerts.map(([a, n]) => `${a} at ${n} site(s)`).join(', ')}`);
  const rows = ended.page.items.map((a) => {
    const s = a.status;
    if (!s) return [a.site, a.state, '-', '-', '-', '-', '-', a.reason ?? ''];
    const run = s.lastRun ? `${s.lastRun.run} ${s.lastRun.outcome ?? 'running'} ${ago(s.lastRun.endedAt ?? s.lastRun.createdAt, now)}` : '-';
    const drift = s.drift ? `${s.drift.counts.drifted} drifted of ${s.drift.counts.total} ${ago(s.drift.at, now)}` : '-';
    const joins = s.joins.enabled ? `on${s.joins.pending !== undefined ? `, ${s.joins.pending} pending` : ''}` : 'off';
    return [a.site, a.state, s.revision === undefined ? '-' : String(s.revision), run, drift, joins, s.alerts.join(', ') || '-', s.joins.warning ?? ''];
  });
  parts.push(table(['SITE', 'STATE', 'REVISION', 'LAST RUN', 'DRIFT', 'JOINS', 'ALERTS', 'NOTE'], rows));
  const footer = pageFooter(ended.page);
  if (footer) parts.push(footer);
  if (r.failures.length > 0) parts.push(`not answered:\n${table(['SITE', 'STATE', 'REASON'], failureRows(r.failures))}`);
  return parts.join('\n');
}

/** 0 when every site answered; 4 when some did not; 5 when none did. */
function exitOf(result: FleetSurveyResult): ExitCode {
  if (result.answered === result.sites) return ExitCode.ok;
  return result.answered > 0 ? ExitCode.partialSuccess : ExitCode.failure;
}

/** Options a survey command shares. */
function withSurveyOptions(command: Command): Command {
  return command
    .option('--sites <a,b,…>', 'only these registered sites', nameList)
    .option('--select <key=value,…>', 'only the registered sites whose labels hold every pair', selector)
    .option('--site-concurrency <n>', 'sites asked at once', count(1000))
    .option('--site-wait <seconds>', 'how long a site whose worker takes no work is waited for before it is unreachable', count(86_400), 60)
    .option('--offset <n>', 'first site of the page', nonNegativeInteger, 0)
    .addOption(new Option('--limit <n>', `sites in the page (at most ${MAX_SURVEY_PAGE})`).argParser(positiveInteger).default(DEFAULT_SITES_SHOWN))
    .addOption(outputOption());
}

/** Asks the survey `kind` with a command's options, printing progress on stderr; the exit code. */
export async function runSurvey(ctx: CliContext, kind: SurveyKind, opts: Record<string, unknown>, extra: Partial<SurveyRequest> = {}): Promise<number> {
  const surveys = await ctx.fleetSurveys();
  const tty = process.stderr.isTTY && ctx.format === 'text';
  const ended = await surveys.ask(
    {
      kind,
      ...(opts['sites'] !== undefined ? { sites: opts['sites'] as string[] } : {}),
      ...(opts['select'] !== undefined ? { select: opts['select'] as { matchLabels: Record<string, string> } } : {}),
      ...(opts['siteConcurrency'] !== undefined ? { siteConcurrency: opts['siteConcurrency'] as number } : {}),
      siteWaitSeconds: opts['siteWait'] as number,
      ...extra,
      ...(tty ? { onProgress: (p) => note(`asked ${p.answered + p.failed + p.unreachable} of ${p.sites} site(s); asking ${p.asking.join(', ')}`) } : {}),
    },
    {
      offset: opts['offset'] as number,
      limit: Math.min(MAX_SURVEY_PAGE, opts['limit'] as number),
      ...(kind === SurveyKind.plan ? { order: (opts['order'] as 'site' | 'changes' | undefined) ?? 'changes' } : {}),
    },
  );
  if (ctx.format === 'json') printJson(ended);
  else say(kind === SurveyKind.plan ? fleetPlanText(ended) : fleetStateText(ended));
  return exitOf(ended.result);
}

/** Adds `relabel fleet plan` to `fleet`. */
export function addFleetPlanCommand(fleet: Command, setExit: SetExit): void {
  withSurveyOptions(
    fleet
      .command('plan')
      .description(
        "what a rollout would do over the fleet: each site's plan computed in that site by its own worker (a dry run, nothing written), summed: sites reached, nodes written, label keys gained, changed and lost, each site's brake, and where the labels come from",
      ),
  )
    .option('--revision <n>', "the revision every site plans (default: each site's latest committed one)", count(1e9))
    .addOption(new Option('--order <order>', 'sites in the page: most nodes written first, or by name').choices(['changes', 'site']).default('changes'))
    .addHelpText(
      'after',
      `\nA site whose worker takes no work within --site-wait is reported unreachable, never left out.\n` +
        `Exit code: 0 when every site answered; 4 when some did not; 5 when none did; 2 for an unknown site or an empty selection.\n` +
        `JSON: {workflowId, runId, result: {kind, sites, answered, failed, unreachable, plan: {reached, targets, planned, changing, gain, change, lose, adopt, brake, keys, moreKeys}, failures}, page: {total, offset, items: [{site, state, reason?, plan?}]}}.`,
    )
    .action(async (opts: Record<string, unknown>, cmd: Command) => {
      setExit(
        await withContext(cmd, (ctx) => runSurvey(ctx, SurveyKind.plan, opts, opts['revision'] !== undefined ? { revision: opts['revision'] as number } : {})),
      );
    });
}

/** The options `relabel fleet status` takes for the fleet-wide view (it also takes a rollout's name). */
export const addFleetStateOptions = withSurveyOptions;
