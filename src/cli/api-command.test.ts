/**
 * `relabel api` is a command of the CLI like the others: listed in
 * `relabel --help`, with the API server's own help and options, global flags
 * wherever they stand, and a refused start reported as `relabel api: <why>`.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runNode } from '../../test/kit/node-process.ts';

const CLIENT = fileURLToPath(new URL('../client.ts', import.meta.url));

/** `relabel ARGS` with `env` added to an environment without tokens; it must stop by itself. */
function relabel(args: string[], env: Record<string, string> = {}) {
  const { RELABEL_API_TOKENS: _tokens, ...inherited } = process.env;
  return runNode([CLIENT, ...args], { env: { ...inherited, ...env } });
}

describe('relabel api (commander)', { concurrency: true }, () => {
  it('is listed by relabel --help, and relabel api --help is the API server’s help', async () => {
    const [main, api] = await Promise.all([relabel(['--help']), relabel(['api', '--help'])]);
    assert.equal(main.status, 0);
    assert.match(main.stdout, /^ {2}api +serve the Airship-compatible HTTP API/m);
    assert.equal(api.status, 0, api.stderr);
    assert.match(api.stdout, /^Usage: relabel api \[options\]\n\nServe the Airship-compatible HTTP API of relabel\n/);
    for (const flag of ['--listen <host:port>', '--tokens-file <file>', '--keystone-url <url>', '--store <url>', '--kubeconfig <path>'])
      assert.ok(api.stdout.includes(flag), flag);
  });

  it('refuses to start without tokens: relabel api: <why>, exit 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'relabel-api-cmd-'));
    try {
      const r = await relabel(['api', '--listen', '127.0.0.1:0'], { RELABEL_STORE_URL: `sqlite:${join(dir, 'a.db')}` });
      assert.equal(r.status, 1);
      assert.equal(r.stderr, 'relabel api: no API tokens: give --tokens-file FILE or set RELABEL_API_TOKENS=token:role[:name],…, or --keystone-url\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('serves with the global --store given before or after api, until SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'relabel-api-cmd-'));
    try {
      const placings: [string, (store: string) => string[]][] = [
        ['after.db', (store) => ['api', '--listen', '127.0.0.1:0', '--store', store]],
        ['before.db', (store) => ['--store', store, 'api', '--listen', '127.0.0.1:0']],
      ];
      const serve = async ([name, args]: (typeof placings)[number]): Promise<void> => {
        const store = `sqlite:${join(dir, name)}`;
        const argv = args(store);
        const child = spawn(process.execPath, [CLIENT, ...argv], {
          env: { ...process.env, RELABEL_API_TOKENS: 'api-command-test:admin' },
          stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
        });
        let stderr = '';
        child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        // The server says it is ready (and handles SIGTERM) over the IPC channel.
        child.on('message', () => child.kill('SIGTERM'));
        const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
        assert.equal(code, 0, stderr);
        assert.ok(existsSync(join(dir, name)), `${argv.join(' ')} opened ${store}`);
      };
      await Promise.all(placings.map(serve));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
