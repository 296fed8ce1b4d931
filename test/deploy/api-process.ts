/**
 * The API server as a process of its own (`src/api/main.ts`), as a
 * Deployment's pod runs it, for the deploy tests that run several processes
 * with identities and stores of their own.
 */
import { fork, type ChildProcess } from 'node:child_process';

const API_MAIN = new URL('../../src/api/main.ts', import.meta.url).pathname;

/**
 * Starts `src/api/main.ts --listen 127.0.0.1:0` with `env` over the test's
 * environment (logs at warn); resolves with the process and its URL once it
 * listens, rejects if it exits first.
 */
export function startApiProcess(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(API_MAIN, ['--listen', '127.0.0.1:0', '--log-level', 'warn'], { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.on('message', (m: { ready?: boolean; url?: string }) => {
      if (m.ready && m.url) resolve({ child, url: m.url });
    });
    child.once('exit', (code) => reject(new Error(`the API server exited early with ${code}`)));
  });
}
