/**
 * The `relabel` command line: commands, global flags overriding the
 * environment, and the one place where errors become messages and exit codes.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { environmentHelp, settingOption } from '../settings/setting.ts';
import { CONNECTION, VARIABLES } from '../settings/table.ts';
import { addDocsCommands } from './docs-commands.ts';
import { exitCodeForType, exitCodeHelp, ExitCode } from './exit-codes.ts';
import { describeError, OutputFormat, reportError } from './output.ts';
import { addFleetCommands } from './fleet-commands.ts';
import { addPluginCommands } from './plugin-commands.ts';
import { addPlanCommand } from './plan-command.ts';
import { addControlCommands } from './control-commands.ts';
import { addRunCommands } from './run-commands.ts';
import { addDriftCommands } from './drift-commands.ts';
import { addReleaseCommand } from './release-command.ts';
import { addJoinCommands } from './join-commands.ts';
import { addScheduleCommands } from './schedule-commands.ts';
import { addApiCommand } from './api-command.ts';
import type { SetExit } from './context.ts';

/** The settings the CLI's global flags override; their variables are read when a command runs (src/cli/context.ts). */
const GLOBAL_SETTINGS = [CONNECTION.store, CONNECTION.address, CONNECTION.namespace, CONNECTION.taskQueue, CONNECTION.fleetTaskQueue];

const ENVIRONMENT_HELP = `Environment (flags take precedence):
${environmentHelp([CONNECTION.address, CONNECTION.namespace, CONNECTION.taskQueue, CONNECTION.fleetTaskQueue, CONNECTION.store, VARIABLES.dataDir, VARIABLES.uiUrl, VARIABLES.searchAttributes, VARIABLES.debug])}`;

const EXAMPLES_HELP = `Examples:
  relabel docs validate examples/site
  relabel docs stage site examples/site && relabel docs commit -m "initial site"
  relabel docs tag 1 site-action-success
  relabel plan --all                    # what a run would do, per label key, with sources
  relabel update-labels --nodes node-a,node-b --wait
  relabel status update-labels/atl-lab1 -o json
  relabel drift                                  # detect drift now
  relabel schedule create drift --every 10m`;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
  return pkg.version ?? '0.0.0';
}

/** Builds the program; each command reports its exit code through `setExit`. */
export function buildProgram(setExit: SetExit): Command {
  const program = new Command('relabel')
    .description('Declarative Kubernetes node labels from versioned site documents, applied by durable Temporal workflows.')
    .version(version())
    // Settings first: subcommands copy them when they are added.
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false });
  for (const setting of GLOBAL_SETTINGS) program.addOption(settingOption(setting));
  addDocsCommands(program, setExit);
  addRunCommands(program, setExit);
  addControlCommands(program, setExit);
  addDriftCommands(program, setExit);
  addReleaseCommand(program, setExit);
  addJoinCommands(program, setExit);
  addScheduleCommands(program, setExit);
  addPluginCommands(program, setExit);
  addPlanCommand(program, setExit);
  addFleetCommands(program, setExit);
  addApiCommand(program, setExit);
  program.addHelpText('after', `\n${exitCodeHelp()}\n\n${ENVIRONMENT_HELP}\n\n${EXAMPLES_HELP}`);
  return program;
}

/**
 * The command word of `argv` when it names no command of `program` (the
 * values of the global options are skipped), else undefined.
 */
function unknownCommand(program: Command, argv: readonly string[]): string | undefined {
  const takesValue = new Set(
    program.options.filter((o) => o.required || o.optional).flatMap((o) => [o.long, o.short].filter((f): f is string => f !== undefined)),
  );
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--') return undefined;
    if (takesValue.has(arg)) {
      i++;
      continue;
    }
    if (arg.startsWith('-')) continue;
    const known = arg === 'help' || program.commands.some((c) => c.name() === arg || c.aliases().includes(arg));
    return known ? undefined : arg;
  }
  return undefined;
}

/**
 * Runs the CLI on `argv` (the arguments after the program name) and returns
 * the exit code. Errors are reported here, once: as text on stderr, or as
 * `{"error": …}` on stdout when the command was given `-o json`.
 */
export async function runCli(argv: readonly string[]): Promise<number> {
  let exitCode: number = ExitCode.ok;
  let active: Command | undefined;
  const program = buildProgram((code) => (exitCode = code));
  const unknown = unknownCommand(program, argv);
  if (unknown !== undefined) {
    // Commander would print the main help for `relabel planet --help` and exit 0.
    process.stderr.write(`error: unknown command '${unknown}'\n(add --help for usage)\n`);
    return ExitCode.invalidInput;
  }
  program.hook('preAction', (_root, command) => {
    active = command;
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (err) {
    // Commander has already printed its message (usage errors, help, version).
    if (err instanceof CommanderError) return err.exitCode === 0 ? ExitCode.ok : ExitCode.invalidInput;
    const format = active?.opts().output === OutputFormat.json ? OutputFormat.json : OutputFormat.text;
    reportError(err, format);
    return exitCodeForType(describeError(err).type);
  }
}
