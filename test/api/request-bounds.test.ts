/**
 * What one request can cost the API, run as operators run it (`src/api/main.ts`,
 * its default 4 MiB body limit): YAML that amplifies through aliases, or that
 * yields tens of thousands of errors, is refused with a bounded answer and
 * nothing staged, and the process stays within a bounded memory; a run takes
 * at most the documented number of targets, and is refused beyond it.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { DEFAULT_BODY_LIMIT } from '../../src/api/http/server.ts';
import { StatusBody } from '../../src/api/http/response-schemas.ts';
import { MAX_LISTED_ERRORS } from '../../src/core/plan/site-error.ts';
import { MAX_TARGETS } from '../../src/core/plan/targets.ts';
import { temporalConnections, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';

const MAIN = fileURLToPath(new URL('../../src/api/main.ts', import.meta.url));
const TOKEN = 'bounds-admin-token';
/** The largest answer any of these requests may get. */
const MAX_ANSWER_BYTES = 256 * 1024;
/**
 * The API process's peak RSS over all of them. Reading 4 MiB of YAML costs
 * up to about 0.7 GiB whatever it holds; an amplified error answer once took
 * the process to 3.1 GB, and a large enough body to any size.
 */
const MAX_API_RSS_BYTES = 1.5 * 1024 * 1024 * 1024;

const nodeHead = (name: string) =>
  `schema: drydock/BaremetalNode/v1\nmetadata:\n  schema: metadata/Document/v1\n  name: ${name}\ndata:\n  host_profile: p\n  metadata:\n    owner_data:\n`;

/** YAML of at most `limit` bytes built by `more` until the next piece would not fit. */
function fill(limit: number, start: string, more: (i: number) => string): string {
  const pieces = [start];
  let bytes = Buffer.byteLength(start);
  for (let i = 0; ; i++) {
    const piece = more(i);
    bytes += Buffer.byteLength(piece);
    if (bytes > limit) return pieces.join('');
    pieces.push(piece);
  }
}

/** Peak resident memory of a process, from /proc. */
function peakRss(pid: number): number {
  const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  assert.ok(hwm, 'VmHWM in /proc status');
  return Number(hwm[1]) * 1024;
}

describe('bounded answers of the API process', () => {
  const prefix = `bd${uniqueSuffix()}`;
  const taskQueue = `bounds-${prefix}`;
  let child: ChildProcess;
  let base: string;

  const call = async (method: string, path: string, body?: string, type = 'application/x-yaml') => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { 'x-auth-token': TOKEN, ...(body !== undefined ? { 'content-type': type } : {}) },
      ...(body !== undefined ? { body } : {}),
    });
    const text = await res.text();
    return { status: res.status, bytes: Buffer.byteLength(text), json: text === '' ? undefined : (JSON.parse(text) as unknown) };
  };

  before(async () => {
    const { url } = await storeWithSite(prefixedSite(prefix).files);
    child = fork(MAIN, ['--listen', '127.0.0.1:0', '--log-level', 'warn'], {
      env: { ...process.env, RELABEL_STORE_URL: url, RELABEL_API_TOKENS: `${TOKEN}:admin`, RELABEL_TASK_QUEUE: taskQueue },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    base = await new Promise<string>((resolve, reject) => {
      child.once('message', (m: { url?: string }) => (m.url ? resolve(m.url) : reject(new Error('no URL'))));
      child.once('exit', (code) => reject(new Error(`the API exited with ${code}`)));
    });
  });
  after(() => {
    child.kill('SIGTERM');
  });

  it('refuses alias-amplifying YAML at the body limit with a small answer, staging nothing', async () => {
    const cases = {
      // Every label value an alias of one 1 MiB anchor: hundreds of thousands of aliases.
      'aliases of one large anchor': fill(DEFAULT_BODY_LIMIT, `${nodeHead('n1')}      k0: &a "${'x'.repeat(1 << 20)}!"\n`, (i) => `      k${i + 1}: *a\n`),
      // As many aliases as allowed, of an anchor filling the rest of the body.
      'an anchor filling the body': (() => {
        const aliases = Array.from({ length: 100 }, (_, i) => `      k${i + 1}: *a\n`).join('');
        const room = DEFAULT_BODY_LIMIT - Buffer.byteLength(nodeHead('n1') + aliases) - 64;
        return `${nodeHead('n1')}      k0: &a "${'x'.repeat(room)}!"\n${aliases}`;
      })(),
      // Tens of thousands of small documents, each with two errors.
      'tens of thousands of errors': fill(DEFAULT_BODY_LIMIT, '', (i) => `---\n${nodeHead(`m${i}`)}      "bad key": "bad!"\n`),
    };
    for (const [name, body] of Object.entries(cases)) {
      assert.ok(
        Buffer.byteLength(body) > DEFAULT_BODY_LIMIT - 4096 && Buffer.byteLength(body) <= DEFAULT_BODY_LIMIT,
        `${name}: ${Buffer.byteLength(body)} bytes`,
      );
      const answer = await call('POST', '/api/v1.0/configdocs/amplified', body);
      assert.equal(answer.status, 400, name);
      assert.ok(answer.bytes < MAX_ANSWER_BYTES, `${name}: ${answer.bytes} bytes answered`);
      const status = StatusBody.parse(answer.json);
      assert.equal(status.reason, 'DocumentValidationFailed', name);
      assert.ok(status.details.messageList.length <= MAX_LISTED_ERRORS + 1, `${name}: ${status.details.messageList.length} messages`);
      if (status.details.errorCount > MAX_LISTED_ERRORS) {
        assert.equal(
          status.details.messageList.at(-1)?.message,
          `… and ${status.details.errorCount - MAX_LISTED_ERRORS} more error(s), not listed (at most ${MAX_LISTED_ERRORS} are)`,
        );
      }
      for (const m of status.details.messageList) assert.ok(m.message.length < 2048, `${name}: a message of ${m.message.length} characters`);
    }
    assert.equal((await call('GET', '/api/v1.0/configdocs/amplified')).status, 404, 'nothing staged');
    const peak = peakRss(child.pid as number);
    console.log(`# API peak RSS after three 4 MiB requests: ${Math.round(peak / 2 ** 20)} MiB`);
    assert.ok(peak < MAX_API_RSS_BYTES, `API peak RSS ${Math.round(peak / 2 ** 20)} MiB`);
  });

  it(`takes ${MAX_TARGETS} targets, answers about the run in a bounded size, and refuses one more`, async () => {
    const names = (n: number) => Array.from({ length: n }, (_, i) => `${prefix}-ghost-${i}`);
    const over = await call(
      'POST',
      '/api/v1.0/actions',
      JSON.stringify({ name: 'update_labels', parameters: { target_nodes: names(MAX_TARGETS + 1) } }),
      'application/json',
    );
    assert.equal(over.status, 400);
    const refused = StatusBody.parse(over.json);
    assert.equal(refused.reason, 'InvalidTargets');
    assert.match(refused.message, new RegExp(`too many target nodes: ${MAX_TARGETS + 1} given, a run takes at most ${MAX_TARGETS}`));

    // No worker polls this task queue: the run is accepted and waits.
    const at = await call(
      'POST',
      '/api/v1.0/actions',
      JSON.stringify({ name: 'update_labels', parameters: { target_nodes: names(MAX_TARGETS) } }),
      'application/json',
    );
    assert.equal(at.status, 201, JSON.stringify(at.json).slice(0, 500));
    assert.ok(at.bytes < MAX_ANSWER_BYTES, `answer of ${at.bytes} bytes to the start`);
    const id = (at.json as { id: string }).id;
    const shown = await call('GET', `/api/v1.0/actions/${encodeURIComponent(id)}`);
    assert.equal(shown.status, 200);
    assert.ok(shown.bytes < MAX_ANSWER_BYTES, `action view of ${shown.bytes} bytes`);
    const temporal = await temporalConnections();
    try {
      const runs = temporal.client.workflow.list({ query: `TaskQueue = "${taskQueue}" AND ExecutionStatus = "Running"` });
      for await (const run of runs) await temporal.client.workflow.getHandle(run.workflowId, run.runId).terminate('test over');
    } finally {
      await temporal.close();
    }
  });
});
