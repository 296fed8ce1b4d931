import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { PluginSpec } from '../core/site/label-plugin.ts';
import { readPlugin } from './plugin-runner.ts';

const dir = mkdtempSync(join(tmpdir(), 'relabel-plugin-runner-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function script(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

const exec = (path: string, more: Partial<PluginSpec> = {}): PluginSpec => ({
  name: 'p',
  source: 'exec',
  path,
  args: [],
  namespaces: ['a.example.com/*'],
  timeoutSeconds: 5,
  maxOutputBytes: 1024,
  ...more,
});

describe('running an exec plugin', () => {
  it('passes the fixed arguments as they are, without a shell, with only PATH in the environment', async () => {
    const path = script(
      'args.sh',
      'printf "%s|" "$@"; printf "cwd=%s|" "$(pwd)"; env | grep -v -e "^PATH=" -e "^PWD=" -e "^SHLVL=" -e "^_=" | wc -l | tr -d " "',
    );
    const read = await readPlugin(exec(path, { args: ['a b', '$(touch /tmp/x)', '*'] }));
    assert.deepEqual(read, { ok: true, text: 'a b|$(touch /tmp/x)|*|cwd=/|0\n' });
  });

  it('kills the whole process group when the time limit passes, and answers at once', async () => {
    const marker = join(dir, 'survived');
    const path = script('slow.sh', `(sleep 3; touch ${marker}) & sleep 30`);
    const started = Date.now();
    const read = await readPlugin(exec(path, { timeoutSeconds: 1 }));
    assert.ok(Date.now() - started < 3000, `answered after ${Date.now() - started} ms`);
    assert.deepEqual(read, { ok: false, error: `${path} did not finish within 1 s; killed` });
    await new Promise((r) => setTimeout(r, 3500));
    assert.throws(() => rmSync(marker), /ENOENT/, 'the background child was killed with the group');
  });

  it('kills it when it prints more than the output limit', async () => {
    const path = script('loud.sh', 'yes xxxxxxxx');
    const read = await readPlugin(exec(path, { maxOutputBytes: 4096 }));
    assert.deepEqual(read, { ok: false, error: `${path} printed more than the plugin's limit of 4096 bytes; killed` });
  });

  it('a non-zero exit is a failure quoting its standard error; a missing file cannot run', async () => {
    const path = script('fail.sh', 'echo "no GPUs found" >&2; exit 3');
    assert.deepEqual(await readPlugin(exec(path)), { ok: false, error: `${path} exited with status 3: no GPUs found` });
    assert.deepEqual(await readPlugin(exec(join(dir, 'absent.sh'))), { ok: false, error: `cannot run ${join(dir, 'absent.sh')}: ENOENT` });
  });
});

describe('reading a json plugin', () => {
  const json = (path: string, maxOutputBytes = 1024): PluginSpec => ({ ...exec(path, { maxOutputBytes }), source: 'json' });

  it('reads a regular file within its limit, refuses a larger one, a directory and a missing file', async () => {
    const path = join(dir, 'labels.json');
    writeFileSync(path, '{"n1": {}}');
    assert.deepEqual(await readPlugin(json(path)), { ok: true, text: '{"n1": {}}' });
    assert.deepEqual(await readPlugin(json(path, 5)), { ok: false, error: `${path} is 10 bytes; the plugin's limit is 5` });
    const sub = join(dir, 'dir.json');
    mkdirSync(sub);
    assert.deepEqual(await readPlugin(json(sub)), { ok: false, error: `${sub} is not a regular file` });
    assert.deepEqual(await readPlugin(json(join(dir, 'none.json'))), { ok: false, error: `cannot open ${join(dir, 'none.json')}: ENOENT` });
  });
});
