/**
 * `relabel cancel | pause | unpause`: Shipyard's controls of a running update
 * run; `relabel approve | resume | abort`: the gates of a run in waves. Thin
 * over the runs facade's `control`; each accepted control is kept in the
 * run's command audit with the user who gave it.
 */
import { type Command, Option } from 'commander';
import { cliUser, withContext, type SetExit } from './context.ts';
import { outputOption, printJson, say } from './output.ts';
import { gateAnswerText } from './wave-output.ts';

/** The `--run-id` option: a particular run of a workflow, its latest when absent. */
export const runIdOption = (): Option => new Option('--run-id <id>', 'a particular run of the workflow (default: its latest run)');

/** What each gate verb does, for its help. */
const GATE_VERBS = {
  approve: 'let a run in waves waiting at an approval gate go on to its next wave (refused when it does not wait for an approval)',
  resume: 'let a halted run in waves (too many failed nodes, or a health gate that timed out) go on to its next wave',
  abort:
    'end a run in waves waiting at a gate (an approval, or halted): no more nodes start, those not started are settled as not started, and the run ends as a partial run; nodes already relabelled stay relabelled',
} as const;

/** Adds `approve`, `resume` and `abort` to `program`: the gates of a run in waves. */
function addGateCommands(program: Command, setExit: SetExit): void {
  for (const [verb, does] of Object.entries(GATE_VERBS) as [keyof typeof GATE_VERBS, string][]) {
    program
      .command(verb)
      .description(does)
      .argument('<id>', 'workflow ID of the run')
      .addOption(runIdOption())
      .addOption(outputOption())
      .addHelpText(
        'after',
        '\nA run that does not wait at such a gate is refused, nothing changed; `relabel status <id>` says what it waits for.\n' +
          'JSON: {workflowId, runId, run?, uiLink, verb, answer: {paused, changed, running, pending, wave?: {current: {index, name, nodes}, count, waiting?, reason?, approved?}}}.\n' +
          "The command is kept in the run's command audit with your user name.",
      )
      .action(async (id: string, opts: { runId?: string }, cmd: Command) => {
        setExit(
          await withContext(cmd, async (ctx) => {
            const done = await (await ctx.runs()).control(id, opts.runId, verb, cliUser());
            if (ctx.format === 'json') return printJson(done);
            say(gateAnswerText(verb, done.workflowId, done.runId, done.answer));
          }),
        );
      });
  }
}

/** Adds `cancel`, `pause`, `unpause`, `approve`, `resume` and `abort` to `program`. */
export function addControlCommands(program: Command, setExit: SetExit): void {
  program
    .command('cancel')
    .description(
      'cancel (stop) a running run: nodes being relabelled finish, nodes already relabelled stay relabelled (no rollback), the others are marked cancelled',
    )
    .argument('<id>', 'workflow ID of the run')
    .addOption(runIdOption())
    .addOption(outputOption())
    .addHelpText('after', "\nJSON: {workflowId, runId, run?, uiLink, verb}. The command is kept in the run's command audit with your user name.")
    .action(async (id: string, opts: { runId?: string }, cmd: Command) => {
      setExit(
        await withContext(cmd, async (ctx) => {
          const ref = await (await ctx.runs()).control(id, opts.runId, 'stop', cliUser());
          if (ctx.format === 'json') return printJson(ref);
          say(`cancellation requested for ${ref.workflowId} (run ${ref.runId}); nodes already relabelled stay relabelled, the others are marked cancelled`);
          say(`follow it with: relabel status ${ref.workflowId} --wait`);
          if (ref.uiLink) say(ref.uiLink);
        }),
      );
    });

  for (const verb of ['pause', 'unpause'] as const) {
    program
      .command(verb)
      .description(
        verb === 'pause'
          ? 'pause a running run: no new node starts, the nodes being relabelled finish (undo with relabel unpause)'
          : 'let a paused run start nodes again',
      )
      .argument('<id>', 'workflow ID of the run')
      .addOption(runIdOption())
      .addOption(outputOption())
      .addHelpText(
        'after',
        `\nJSON: {workflowId, runId, run?, uiLink, verb, answer: {paused, changed, running, pending}}. The command is kept in the run's command audit with your user name.`,
      )
      .action(async (id: string, opts: { runId?: string }, cmd: Command) => {
        setExit(
          await withContext(cmd, async (ctx) => {
            const done = await (await ctx.runs()).control(id, opts.runId, verb, cliUser());
            if (ctx.format === 'json') return printJson(done);
            const a = done.answer;
            const state = a
              ? `${a.paused ? 'paused' : 'running'}${a.changed ? '' : ' (it already was)'}: ${a.running} node(s) running, ${a.pending} not started`
              : verb;
            say(`${done.workflowId} (run ${done.runId}) ${state}`);
          }),
        );
      });
  }
  addGateCommands(program, setExit);
}
