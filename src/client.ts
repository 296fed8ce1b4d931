/**
 * Entry point of the `relabel` command line (installed as a bin through
 * bin/relabel.js). Everything it does is in src/cli/ over the facade.
 */
import { enableCompileCache } from 'node:module';

// A CLI starts often: Node's on-disk code cache cuts start-up by about a
// third. Enabled before the rest is imported, hence the dynamic import.
enableCompileCache();
const { runCli } = await import('./cli/program.ts');

// Output piped into `head` and the like: stop quietly when the reader goes away.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

const argv = process.argv.slice(2);
if (argv[0] === 'api') {
  // `relabel api --listen HOST:PORT …`: the HTTP API server, which keeps running.
  const { main } = await import('./api/main.ts');
  await main(['node', 'relabel api', ...argv.slice(1)]).catch((err: unknown) => {
    console.error(`relabel api: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
} else {
  process.exitCode = await runCli(argv);
}
