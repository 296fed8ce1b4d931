/**
 * Reads one label plugin's output: a JSON file (a regular file no larger
 * than the plugin's limit), or what an executable prints. An executable is
 * run without a shell (`spawn` with the document's fixed arguments), with
 * only `PATH` in its environment, `/` as its working directory and no
 * standard input, in a process group of its own; exceeding the time or
 * output limit kills the whole group.
 */
import { spawn } from 'node:child_process';
import { open } from 'node:fs/promises';
import { PluginSource, type PluginSpec } from '../core/site/label-plugin.ts';
import { clip } from '../core/plan/text.ts';
import { variableFromEnv } from '../settings/setting.ts';
import { VARIABLES } from '../settings/table.ts';

/** The output text, or why there is none. */
export type PluginRead = { ok: true; text: string } | { ok: false; error: string };

/** Most characters of an executable's standard error kept for its error message. */
const STDERR_KEPT = 2000;

/** The environment an executable plugin gets: the worker's PATH and nothing else. */
export function pluginEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return { PATH: variableFromEnv(VARIABLES.path, env) };
}

async function readJsonFile(plugin: PluginSpec): Promise<PluginRead> {
  let handle;
  try {
    handle = await open(plugin.path, 'r');
  } catch (err) {
    return { ok: false, error: `cannot open ${plugin.path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` };
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return { ok: false, error: `${plugin.path} is not a regular file` };
    if (stat.size > plugin.maxOutputBytes) return { ok: false, error: `${plugin.path} is ${stat.size} bytes; the plugin's limit is ${plugin.maxOutputBytes}` };
    // Read at most one byte past the limit: a file growing meanwhile is refused, not read whole.
    const buffer = Buffer.alloc(plugin.maxOutputBytes + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > plugin.maxOutputBytes)
        return { ok: false, error: `${plugin.path} grew past the plugin's limit of ${plugin.maxOutputBytes} bytes while read` };
    }
    return { ok: true, text: buffer.subarray(0, length).toString('utf8') };
  } finally {
    await handle.close();
  }
}

function runExecutable(plugin: PluginSpec): Promise<PluginRead> {
  return new Promise((resolve) => {
    const stdout: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let settled = false;
    const finish = (read: PluginRead) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(read);
    };
    const child = spawn(plugin.path, plugin.args, {
      shell: false,
      env: pluginEnvironment(),
      cwd: '/',
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const timer = setTimeout(() => {
      killGroup();
      finish({ ok: false, error: `${plugin.path} did not finish within ${plugin.timeoutSeconds} s; killed` });
    }, plugin.timeoutSeconds * 1000);
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > plugin.maxOutputBytes) {
        killGroup();
        finish({ ok: false, error: `${plugin.path} printed more than the plugin's limit of ${plugin.maxOutputBytes} bytes; killed` });
        return;
      }
      stdout.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < STDERR_KEPT) stderr += chunk.toString('utf8');
    });
    child.on('error', (err: NodeJS.ErrnoException) => finish({ ok: false, error: `cannot run ${plugin.path}: ${err.code ?? err.message}` }));
    child.on('close', (code, signal) => {
      if (code === 0) {
        finish({ ok: true, text: Buffer.concat(stdout).toString('utf8') });
        return;
      }
      const why = signal ? `was killed by ${signal}` : `exited with status ${code}`;
      const said = stderr.trim() === '' ? '' : `: ${clip(stderr.trim().replace(/\s+/g, ' '), 500)}`;
      finish({ ok: false, error: `${plugin.path} ${why}${said}` });
    });
  });
}

/** Reads a plugin's output as its source says; never throws for the plugin's own failures. */
export function readPlugin(plugin: PluginSpec): Promise<PluginRead> {
  return plugin.source === PluginSource.json ? readJsonFile(plugin) : runExecutable(plugin);
}
