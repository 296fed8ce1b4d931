/**
 * `relabel api`: the HTTP API server, dispatched by commander like every
 * other command. Its options are parsed by src/api/main.ts (also the
 * image's entry point, `node src/api/main.ts`), so they and their help are
 * declared once.
 */
import type { Command } from 'commander';
import { ExitCode } from './exit-codes.ts';
import type { SetExit } from './context.ts';

/**
 * The global flags given on the command line, as arguments again: commander
 * reads them wherever they stand, `relabel api --store URL` included, and
 * the API server takes them as its own.
 */
function globalArgs(program: Command): string[] {
  return program.options.flatMap((option) => {
    const key = option.attributeName();
    const value: unknown = program.getOptionValue(key);
    return option.long !== undefined && program.getOptionValueSource(key) === 'cli' && typeof value === 'string' ? [option.long, value] : [];
  });
}

/**
 * Adds `relabel api`. The server keeps running once started, until SIGTERM
 * or SIGINT; a start that fails is reported as `relabel api: <why>`, exit 1.
 */
export function addApiCommand(program: Command, setExit: SetExit): void {
  program
    .command('api')
    .description('serve the Airship-compatible HTTP API: relabel api --listen HOST:PORT (see relabel api --help)')
    // Every option, --help included, is the API server's (src/api/main.ts).
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (_options: unknown, command: Command) => {
      // Loaded here: the other commands need no HTTP server.
      const { main } = await import('../api/main.ts');
      try {
        await main(['node', 'relabel api', ...globalArgs(program), ...command.args], process.env, 'relabel api');
      } catch (err) {
        process.stderr.write(`relabel api: ${err instanceof Error ? err.message : String(err)}\n`);
        setExit(ExitCode.unexpected);
      }
    });
}
