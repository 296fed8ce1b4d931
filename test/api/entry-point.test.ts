/**
 * The API entry point as operators run it: `node src/api/main.ts --listen
 * 127.0.0.1:0` with tokens from a file or the environment, against the test
 * stack; it refuses to start without tokens and stops cleanly on SIGTERM.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseListen } from '../../src/api/main.ts';
import { emptyStoreUrl } from '../api-support.ts';

const MAIN = fileURLToPath(new URL('../../src/api/main.ts', import.meta.url));

/** Runs main.ts; resolves with its URL once ready, or with its exit code and stderr if it exits first. */
function run(args: string[], env: NodeJS.ProcessEnv) {
  const child = fork(MAIN, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) => child.on('exit', (code) => resolve({ code, stderr })));
  const ready = new Promise<string | null>((resolve) => {
    child.on('message', (m: { url?: string }) => resolve(m.url ?? null));
    void exited.then(() => resolve(null));
  });
  return { child, ready, exited };
}

describe('relabel api entry point', () => {
  it('parses --listen', () => {
    assert.deepEqual(parseListen('127.0.0.1:8000'), { host: '127.0.0.1', port: 8000 });
    assert.deepEqual(parseListen('[::1]:0'), { host: '::1', port: 0 });
    for (const bad of ['8000', '127.0.0.1', 'host:99999', ':80', 'a:b']) assert.throws(() => parseListen(bad), /--listen/);
  });

  it('serves with tokens from a file, and stops on SIGTERM', async () => {
    const tokens = join(mkdtempSync(join(tmpdir(), 'relabel-api-tokens-')), 'tokens.yaml');
    writeFileSync(tokens, '- {token: main-admin-token, role: admin}\n');
    const api = run(['--listen', '127.0.0.1:0', '--tokens-file', tokens, '--log-level', 'warn'], {
      RELABEL_STORE_URL: emptyStoreUrl(),
      RELABEL_API_TOKENS: '',
    });
    const url = await api.ready;
    if (!url) assert.fail(`the server did not start: ${(await api.exited).stderr}`);
    assert.equal((await fetch(`${url}/health`)).status, 200);
    assert.equal((await fetch(`${url}/api/v1.0/revisions`)).status, 401);
    const revisions = await fetch(`${url}/api/v1.0/revisions`, { headers: { 'x-auth-token': 'main-admin-token' } });
    assert.deepEqual(await revisions.json(), { count: 0, next: null, prev: null, results: [] });
    api.child.kill('SIGTERM');
    assert.equal((await api.exited).code, 0);
  });

  it('takes RELABEL_API_TOKENS, and refuses to start without any token', async () => {
    const api = run(['--listen', '127.0.0.1:0', '--log-level', 'warn'], { RELABEL_STORE_URL: emptyStoreUrl(), RELABEL_API_TOKENS: 'env-viewer-token:viewer' });
    const url = await api.ready;
    assert.ok(url);
    assert.equal((await fetch(`${url}/api/v1.0/revisions`, { headers: { authorization: 'Bearer env-viewer-token' } })).status, 200);
    api.child.kill('SIGINT');
    assert.equal((await api.exited).code, 0);

    const refused = run(['--listen', '127.0.0.1:0'], { RELABEL_STORE_URL: emptyStoreUrl(), RELABEL_API_TOKENS: '' });
    const { code, stderr } = await refused.exited;
    assert.equal(code, 1);
    assert.match(stderr, /no API tokens/);
  });
});
