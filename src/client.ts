/**
 * Entry point of the `relabel` command line (installed as a bin through
 * bin/relabel.js). Everything it does is in src/cli/ over the facade.
 */
import { enableCompileCache } from 'node:module';

// A CLI starts often: Node's on-disk code cache spares compiling its modules
// again at every start. Enabled before the rest is imported, hence the dynamic import.
enableCompileCache();
const { runCli } = await import('./cli/program.ts');

// Output piped into `head` and the like: stop quietly when the reader goes away.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

// `relabel api` starts a server that keeps the process running after the command returns.
process.exitCode = await runCli(process.argv.slice(2));
