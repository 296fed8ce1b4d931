/**
 * Starting, waiting for and stopping the local stack's server processes.
 * Each runs in its own process group with its output in a log file, so the
 * stack outlives the command that started it and stops with no orphans.
 */
import { spawn } from 'node:child_process';
import { openSync, closeSync, readFileSync, existsSync } from 'node:fs';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/** A server process the stack started. */
export interface ManagedProcess {
  /** Short name used in messages and for the log file. */
  name: string;
  /** Process id; also the process group id (started detached). */
  pid: number;
  /** Log file receiving the process's stdout and stderr. */
  log: string;
}

/**
 * Starts `command` detached, in its own process group, output appended to `log`.
 * Throws at once when the binary cannot be executed.
 */
export async function startProcess(name: string, command: string, args: string[], log: string, env: NodeJS.ProcessEnv = process.env): Promise<ManagedProcess> {
  const fd = openSync(log, 'a');
  try {
    const child = spawn(command, args, { detached: true, stdio: ['ignore', fd, fd], env });
    const pid = await new Promise<number>((resolve, reject) => {
      child.once('error', (err) => reject(new Error(`cannot start ${name} (${command}): ${err.message}`)));
      child.once('spawn', () => resolve(child.pid as number));
    });
    child.unref();
    return { name, pid, log };
  } finally {
    closeSync(fd);
  }
}

/** Whether a process (or its group leader) is still alive. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Stops a process group: SIGTERM, then SIGKILL after `graceMs`. Resolves once
 * the leader is gone. Idempotent: a process already gone is not an error.
 */
export async function stopProcess(p: Pick<ManagedProcess, 'pid' | 'name'>, graceMs = 10_000): Promise<void> {
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(-p.pid, sig);
    } catch {
      try {
        process.kill(p.pid, sig);
      } catch {
        // already gone
      }
    }
  };
  if (!isAlive(p.pid)) return;
  signal('SIGTERM');
  const deadline = Date.now() + graceMs;
  while (isAlive(p.pid) && Date.now() < deadline) await sleep(100);
  if (isAlive(p.pid)) {
    signal('SIGKILL');
    while (isAlive(p.pid)) await sleep(50);
  }
  // Reap anything left in the group (helpers a server may have forked).
  signal('SIGKILL');
}

/** The last lines of a log file, for error messages. */
export function logTail(log: string, lines = 15): string {
  if (!existsSync(log)) return '(no log)';
  const text = readFileSync(log, 'utf8').trimEnd().split('\n');
  return text.slice(-lines).join('\n');
}

/**
 * Polls `check` until it returns true, failing with the process's log tail
 * when the process dies or `timeoutMs` passes.
 */
export async function waitUntil(p: ManagedProcess, what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!isAlive(p.pid)) {
      throw new Error(`${p.name} exited before ${what}; last lines of ${p.log}:\n${logTail(p.log)}`);
    }
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) {
      throw new Error(`${p.name} not ready (${what}) after ${timeoutMs / 1000}s; last lines of ${p.log}:\n${logTail(p.log)}`);
    }
    await sleep(200);
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
export function portOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A free TCP port on 127.0.0.1 (the worker uses the same helper for its SDK metrics). */
export { freeLoopbackPort } from '../src/worker/free-port.ts';
