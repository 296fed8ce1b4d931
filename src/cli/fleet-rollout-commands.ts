/**
 * `relabel fleet rollout | status | approve | resume | abort | pause |
 * unpause`: a change rolled out over the fleet's sites, wave by wave, each
 * site's update run on the site's own worker; its progress; its gates.
 */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { parseFleetCanary, parseFleetWaveSizes, type FleetRollout } from '../core/fleet/fleet-waves.ts';
import { MAX_FLEET_SITES } from '../core/fleet/sites.ts';
import { ApprovalGate } from '../core/plan/waves.ts';
import type { FleetProgress, FleetRolloutResult, SiteOutcome } from '../contracts/fleet-messages.ts';
import { ControlVerb } from '../contracts/messages.ts';
import { SurveyKind } from '../contracts/fleet-survey.ts';
import type { FleetRolloutStatus } from '../facade/fleet-rollouts.ts';
import { cliUser, withContext, type SetExit } from './context.ts';
import { ExitCode } from './exit-codes.ts';
import { addFleetStateOptions, runSurvey } from './fleet-survey-commands.ts';
import { count, selector } from './parsers.ts';
import { outputOption, printJson, say } from './output.ts';
import {
  type RolloutFlags,
  parseCanaryFlag,
  parseHealthTimeoutFlag,
  parseMaxFailedNodesFlag,
  parseWaveSizeFlag,
  parseWavesFlag,
  rolloutOf,
} from './rollout-options.ts';

const parsed =
  <T>(parse: (text: string) => { ok: true; value: T } | { ok: false; message: string }) =>
  (text: string): T => {
    const p = parse(text);
    if (!p.ok) throw new InvalidArgumentError(p.message);
    return p.value;
  };

const outcomeLine = (o: SiteOutcome) => `  ${o.site}: ${o.state}${o.run !== undefined ? ` (run ${o.run})` : ''}${o.reason ? `: ${o.reason}` : ''}`;

function progressText(p: FleetProgress): string {
  const c = p.counts;
  const lines = [
    `wave ${p.wave.index + 1} of ${p.wave.count} (${p.wave.name}, ${p.wave.sites} site(s))${p.paused ? ', PAUSED' : ''}${p.waiting ? `, waiting: ${p.reason ?? p.waiting}` : ''}`,
    `sites: ${c.succeeded} succeeded, ${c.failed} failed, ${c.unreachable} unreachable, ${c.running} running, ${c.pending} pending of ${c.sites}`,
  ];
  if (p.running.length > 0) lines.push(`running: ${p.running.join(', ')}`);
  if (p.halted && p.halted.length > 0) lines.push('halted site runs:', ...p.halted.map((h) => `  ${h.site}: ${h.reason}`));
  if (p.failures.length > 0) lines.push('failed:', ...p.failures.map(outcomeLine));
  return lines.join('\n');
}

function resultText(r: FleetRolloutResult): string {
  const c = r.counts;
  const head = `${r.status}${r.aborted ? ' (aborted)' : ''}: ${c.succeeded} of ${c.sites} site(s) succeeded, ${c.failed} failed, ${c.unreachable} unreachable, ${c.skipped} skipped, in ${r.waves} wave(s)`;
  return [head, ...r.failures.map(outcomeLine)].join('\n');
}

function statusText(s: FleetRolloutStatus): string {
  const head = `${s.workflowId} (${s.runId}): ${s.execution}`;
  if ('progress' in s && s.progress) return `${head}\n${progressText(s.progress)}`;
  if ('unanswered' in s && s.unanswered) return `${head}\n${s.unanswered}`;
  if ('result' in s && s.result) return `${head}\n${resultText(s.result)}`;
  return head;
}

/** Adds the rollout commands to `fleet`. */
export function addFleetRolloutCommands(fleet: Command, setExit: SetExit): void {
  fleet
    .command('rollout <name>')
    .description("roll the sites' latest committed revision (or --revision) out over the fleet, wave by wave, each site's run on its own worker")
    .option('--select <key=value,…>', 'only the registered sites whose labels hold every pair (default: every site)', selector)
    .option('--canary <n|sites>', 'a first wave of this many sites (in name order), or of these sites', parsed(parseFleetCanary))
    .option(
      '--waves <sizes|n%>',
      'the waves after the canary: site counts in turn (3,4: the last repeats) or a percentage of the sites',
      parsed(parseFleetWaveSizes),
    )
    .option('--by-label <key>', "group the sites after the canary by this site label's value, each group its own waves")
    .addOption(
      new Option('--approval <gate>', 'wait for `relabel fleet approve` after the first wave or after each')
        .choices(Object.values(ApprovalGate))
        .default('none'),
    )
    .option('--max-failed-sites <n>', 'sites that may fail before the fleet halts', count(MAX_FLEET_SITES), 0)
    .option('--site-wait <seconds>', 'how long a site whose worker takes no work is waited for before it is unreachable', count(86_400), 600)
    .option('--site-concurrency <n>', 'sites of a wave run at once', count(1000))
    .option(
      '--preflight-wait <seconds>',
      "before anything starts, how long each site's worker gets to say it takes the run (documents valid, revision there); 0 skips the preflight",
      count(3600),
      30,
    )
    .option('--revision <n>', "the revision every site applies (default: each site's latest committed one)", count(1e9))
    .option('--allow-mass-removal', "go past each site's mass-removal brake")
    .addOption(new Option('--site-waves <rack|label:KEY|none>', "each site's run in waves: per rack, or per value of a node label").argParser(parseWavesFlag))
    .addOption(new Option('--site-wave-size <N|P%>', "at most N nodes (or P%) per wave of each site's run").argParser(parseWaveSizeFlag))
    .addOption(new Option('--site-canary <n>', "a first wave of n nodes in each site's run").argParser(parseCanaryFlag))
    .addOption(
      new Option(
        '--site-health-timeout <seconds>',
        "seconds each site run's wave gets for its DaemonSet pods to be Ready before that run halts (0: none)",
      ).argParser(parseHealthTimeoutFlag),
    )
    .addOption(new Option('--site-max-failed-nodes <n>', "failed nodes a wave of a site's run may have without halting it").argParser(parseMaxFailedNodesFlag))
    .addOption(outputOption())
    .addHelpText(
      'after',
      "\nSite runs: the --site-* flags are each site's own waves and gates (over its label policy's rollout:). A site's run\n" +
        'halted at one of its gates halts the fleet, naming the site and why; `relabel fleet resume` and `abort` reach that run.\n' +
        "\nThe rollout runs on the centre's task queue (the global --task-queue); each site's run runs on the site's queue from `relabel fleet sites`.\n" +
        'Exit code: 0 when started; 2 for bad options, no site selected, a canary naming an unselected site, or a site refusing the preflight or not answering it (each named; nothing started); 3 when a rollout of that name is running.\n' +
        'JSON: {workflowId, runId, sites, waves: [{name, sites}]}.',
    )
    .action(async (name: string, opts: Record<string, unknown>, cmd: Command) => {
      const rollout: FleetRollout = {
        ...(opts.canary !== undefined ? { canary: opts.canary as FleetRollout['canary'] } : {}),
        ...(opts.waves !== undefined ? { waves: opts.waves as FleetRollout['waves'] } : {}),
        ...(opts.byLabel !== undefined ? { by: { label: opts.byLabel as string } } : {}),
        approval: opts.approval as ApprovalGate,
        maxFailedSites: opts.maxFailedSites as number,
        siteWaitSeconds: opts.siteWait as number,
      };
      const siteRollout = rolloutOf({
        waves: opts.siteWaves as RolloutFlags['waves'],
        waveSize: opts.siteWaveSize as RolloutFlags['waveSize'],
        canary: opts.siteCanary as number | undefined,
        healthTimeout: opts.siteHealthTimeout as number | undefined,
        maxFailedNodes: opts.siteMaxFailedNodes as number | undefined,
      });
      setExit(
        await withContext(cmd, async (ctx) => {
          const started = await (
            await ctx.fleetRollouts()
          ).start({
            name,
            rollout,
            run: {
              ...(opts.revision !== undefined ? { revision: opts.revision as number } : {}),
              ...(opts.allowMassRemoval ? { allowMassRemoval: true } : {}),
              ...(siteRollout ? { rollout: siteRollout } : {}),
            },
            by: cliUser(),
            ...(opts.select !== undefined ? { select: opts.select as { matchLabels: Record<string, string> } } : {}),
            ...(opts.siteConcurrency !== undefined ? { siteConcurrency: opts.siteConcurrency as number } : {}),
            preflightWaitSeconds: opts.preflightWait as number,
          });
          if (ctx.format === 'json') return printJson(started);
          say(`fleet rollout ${started.workflowId} started over ${started.sites} site(s): ${started.waves.map((w) => `${w.name} (${w.sites})`).join(', ')}`);
        }),
      );
    });

  addFleetStatusCommands(fleet, setExit);
}

/** Adds `status` and the control verbs to `fleet`. */
function addFleetStatusCommands(fleet: Command, setExit: SetExit): void {
  addFleetStateOptions(
    fleet
      .command('status [name]')
      .description(
        "with a rollout's name: where that fleet rollout stands (its wave, its sites by state, the failed ones) or how it ended; without: every site's state, asked of its worker (its latest revision, last run, drift counts, join watcher and the alerts they raise)",
      ),
  )
    .addHelpText(
      'after',
      '\nExit code, with a name: 0 running or succeeded, 4 ended with some sites failed, 5 with none succeeded; without: 0 every site answered, 4 some did not, 5 none did.\n' +
        'JSON, with a name: {workflowId, runId, execution, progress?|result?|unanswered?}; without: {workflowId, runId, result: {sites, answered, failed, unreachable, alerts, failures}, page: {total, offset, items: [{site, state, reason?, status?}]}}.',
    )
    .action(async (name: string | undefined, opts: Record<string, unknown>, cmd: Command) => {
      setExit(
        await withContext(cmd, async (ctx) => {
          if (name === undefined) return runSurvey(ctx, SurveyKind.state, opts);
          const status = await (await ctx.fleetRollouts()).status(name);
          if (ctx.format === 'json') printJson(status);
          else say(statusText(status));
          const result = 'result' in status ? status.result : undefined;
          return result?.status === 'failure' ? ExitCode.failure : result?.status === 'partial_success' ? ExitCode.partialSuccess : ExitCode.ok;
        }),
      );
    });

  const verbs: [ControlVerb, string][] = [
    [ControlVerb.approve, 'let a fleet rollout waiting for an approval go on to its next wave'],
    [ControlVerb.resume, "let a halted fleet rollout (more sites failed than allowed, or a site's run halted) go on, and the halted site runs with it"],
    [ControlVerb.abort, 'end a fleet rollout waiting at a gate: no more sites start, halted site runs end there; sites already rolled out stay so'],
    [ControlVerb.pause, 'start no more sites (sites running go on)'],
    [ControlVerb.unpause, 'start sites again'],
  ];
  for (const [verb, does] of verbs) {
    fleet
      .command(`${verb} <name>`)
      .description(does)
      .addOption(outputOption())
      .addHelpText('after', '\nA rollout that does not wait at such a gate is refused, nothing changed.\nJSON: {paused, aborted, changed, waiting?}.')
      .action(async (name: string, _opts: unknown, cmd: Command) => {
        setExit(
          await withContext(cmd, async (ctx) => {
            const answer = await (await ctx.fleetRollouts()).control(name, verb, cliUser());
            if (ctx.format === 'json') return printJson(answer);
            say(`fleet rollout ${name}: ${verb} taken${answer.paused ? '; paused' : ''}${answer.aborted ? '; aborted' : ''}`);
          }),
        );
      });
  }
}
