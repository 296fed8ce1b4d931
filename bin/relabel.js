#!/usr/bin/env node
// Launches the relabel CLI (src/client.ts). It needs Node ≥ 24, which runs
// TypeScript by stripping types: in this process when it already is such a
// Node, else under the Node 24 the project installs (the `node` package).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';

const entry = new URL('../src/client.ts', import.meta.url);

if (Number(process.versions.node.split('.')[0]) >= 24) {
  await import(entry.href);
} else {
  const node = createRequire(import.meta.url).resolve('node/bin/node');
  const child = spawn(node, [fileURLToPath(entry), ...process.argv.slice(2)], { stdio: 'inherit' });
  // A terminal's Ctrl-C reaches both processes; a kill aimed at this one is passed on.
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    process.exitCode = code ?? 128 + (constants.signals[signal] ?? 0);
  });
}
