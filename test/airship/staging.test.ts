/**
 * Staging as Shipyard does it, through the real CLI (a child process) and the
 * HTTP API over a socket, against real stores, the real Temporal server and
 * the real kube-apiserver: staging checks each document of a bucket on its
 * own, so a site split over buckets that refer to each other is staged one
 * bucket at a time; a commit validates the whole site and refuses it, or
 * with force commits it and reports the errors as warnings, after which an
 * update run refuses that revision and writes no node.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommitStatus, StatusBody } from '../../src/api/http/response-schemas.ts';
import { formatError } from '../../src/core/plan/site-error.ts';
import { validateSite } from '../../src/core/site/validate-site.ts';
import { openStore } from '../../src/store/open-store.ts';
import { isStoreError, StoreErrorCode } from '../../src/store/store-error.ts';
import type { SourceFile } from '../../src/store/revisions/revision-store.ts';
import { adminCore, createNode, exits, relabelCli as relabel, startRelabel, uniqueSuffix } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';
import { assertFailure, emptyStoreUrl, startApiAndWorker, startTestApi, type TestApi } from '../api-support.ts';

const freshStoreUrl = () => `sqlite:${join(mkdtempSync(join(tmpdir(), 'relabel-staging-')), 'revisions.db')}`;

/** `files` written into a fresh directory. */
function directoryOf(files: readonly SourceFile[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'relabel-staging-files-'));
  for (const f of files) writeFileSync(join(dir, f.source), f.text);
  return dir;
}

/**
 * The sample site split in two buckets: `nodes` (nodes, racks, region,
 * policy), whose nodes name host profiles of bucket `profiles`.
 */
function splitSite(prefix: string, edit?: (doc: Record<string, any>) => void) {
  const site = prefixedSite(prefix, edit);
  const nodes = site.files.filter((f) => f.source !== 'profiles.yaml');
  const profiles = site.files.filter((f) => f.source === 'profiles.yaml');
  return { nodeNames: site.nodes, all: site.files, nodes, profiles };
}

/** The errors the whole site of `buckets` has, as the core reports them, with files named `bucket/source`. */
function siteErrors(buckets: Record<string, readonly SourceFile[]>): string[] {
  const result = validateSite(Object.entries(buckets).flatMap(([bucket, files]) => files.map((f) => ({ source: `${bucket}/${f.source}`, text: f.text }))));
  assert.ok(!result.ok, 'the site is invalid');
  return result.errors.map(formatError);
}

/** Line and column (1-based) of the first occurrence of `needle` in `text`. */
function positionOf(text: string, needle: string): { line: number; column: number } {
  const at = text.indexOf(needle);
  assert.ok(at >= 0, `${needle} is in the text`);
  const before = text.slice(0, at).split('\n');
  return { line: before.length, column: (before[before.length - 1]?.length ?? 0) + 1 };
}

const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** The host-profile reference errors of the nodes bucket without its profiles: one per node. */
function danglingProfileErrors(files: readonly SourceFile[], nodeNames: readonly string[]): string[] {
  const expected = siteErrors({ nodes: files });
  assert.equal(expected.length, nodeNames.length);
  for (const [i, line] of expected.entries()) {
    assert.match(
      line,
      new RegExp(
        `^nodes/nodes\\.yaml:\\d+:\\d+ drydock/BaremetalNode/v1 "${esc(nodeNames[i] ?? '')}" data\\.host_profile: host profile "(cp|compute|compute-dpdk|storage)" is not defined \\(no drydock/HostProfile/v1 document named "\\1"\\)$`,
      ),
    );
  }
  return expected;
}

/** A node bucket with one per-document error of each kind (schema, YAML syntax) and a dangling reference, which staging does not check. */
function badNodeFiles(prefix: string) {
  const site = splitSite(prefix, (doc) => {
    if (doc.schema !== 'drydock/BaremetalNode/v1') return;
    if (doc.metadata.name === `${prefix}-cab23-r720-11`) doc.data.metadata.rack = 42;
    if (doc.metadata.name === `${prefix}-cab23-r720-12`) doc.data.host_profile = 'no-such-profile';
  });
  const nodes = site.nodes.find((f) => f.source === 'nodes.yaml');
  assert.ok(nodes);
  const rack = positionOf(nodes.text, '"rack": 42');
  const expected = [
    `nodes/broken.yaml:4:1 drydock/Rack/v1 "torn": Flow map in block collection must be sufficiently indented and end with a }`,
    `nodes/nodes.yaml:${rack.line}:${rack.column + '"rack": '.length} drydock/BaremetalNode/v1 "${prefix}-cab23-r720-11" data.metadata.rack: rack must be a string`,
  ];
  return { files: [...site.nodes, { source: 'broken.yaml', text: '---\nschema: drydock/Rack/v1\nmetadata: {name: torn\n' }], expected };
}

describe('relabel docs: staging one bucket at a time', { concurrency: true }, () => {
  it('stages a bucket referring to one not yet staged; commit refuses, keeping the buffer, until both are staged', async () => {
    const env = { RELABEL_STORE_URL: freshStoreUrl() };
    const site = splitSite(`stg${uniqueSuffix()}`);
    const expected = danglingProfileErrors(site.nodes, site.nodeNames);

    const staged = exits(await relabel(['docs', 'stage', 'nodes', directoryOf(site.nodes)], env), 0);
    assert.match(staged.stdout, /^staged bucket nodes: 4 file\(s\): nodes\.yaml, policy\.yaml, racks\.yaml, site\.yaml$/m);

    const refused = exits(await relabel(['docs', 'commit', '-m', 'half a site'], env), 2);
    assert.deepEqual(refused.stderr.trimEnd().split('\n'), [
      `relabel: DocumentValidationFailed: the staged site is invalid: ${expected.length} document error(s):`,
      ...expected,
    ]);
    const dryRun = JSON.parse(exits(await relabel(['docs', 'commit', '--dry-run', '-o', 'json'], env), 2).stdout);
    assert.deepEqual([dryRun.dryRun, dryRun.ok, dryRun.buckets, dryRun.errors.map(formatError)], [true, false, ['nodes'], expected]);
    assert.deepEqual(JSON.parse(exits(await relabel(['docs', 'list', '-o', 'json'], env), 0).stdout), [], 'nothing committed');
    assert.deepEqual(
      JSON.parse(exits(await relabel(['docs', 'buffer', '-o', 'json'], env), 0).stdout).map((b: { bucket: string }) => b.bucket),
      ['nodes'],
      'the buffer is kept',
    );
    assert.match(exits(await relabel(['docs', 'commit', '--force', '--dry-run'], env), 2).stderr, /option '--force' cannot be used with option '--dry-run'/);

    exits(await relabel(['docs', 'stage', 'profiles', directoryOf(site.profiles)], env), 0);
    assert.equal(
      exits(await relabel(['docs', 'commit', '--dry-run'], env), 0).stdout,
      'dry run: the site is valid with the staged bucket(s) nodes, profiles; nothing committed\n',
    );
    assert.deepEqual(JSON.parse(exits(await relabel(['docs', 'list', '-o', 'json'], env), 0).stdout), [], 'a dry run commits nothing');
    const committed = exits(await relabel(['docs', 'commit', '-m', 'whole site'], env), 0);
    assert.equal(committed.stdout, 'committed revision 1 (buckets: nodes, profiles)\n');
    assert.equal(committed.stderr, '');
    assert.deepEqual(JSON.parse(exits(await relabel(['docs', 'buffer', '-o', 'json'], env), 0).stdout), []);
  });

  it('refuses a bucket with a schema error and a YAML syntax error, listing each, staging nothing', async () => {
    const env = { RELABEL_STORE_URL: freshStoreUrl() };
    const prefix = `stg${uniqueSuffix()}`;
    const bad = badNodeFiles(prefix);
    const dir = directoryOf(bad.files);

    const refused = exits(await relabel(['docs', 'stage', 'nodes', dir], env), 2);
    assert.deepEqual(refused.stderr.trimEnd().split('\n'), [
      'relabel: DocumentValidationFailed: bucket nodes has invalid documents: 2 document error(s):',
      ...bad.expected,
    ]);
    assert.equal(refused.stdout, '');
    const json = JSON.parse(exits(await relabel(['docs', 'stage', 'nodes', dir, '-o', 'json'], env), 2).stdout);
    assert.equal(json.error.type, 'DocumentValidationFailed');
    assert.deepEqual(json.error.details.map(formatError), bad.expected);
    assert.deepEqual(JSON.parse(exits(await relabel(['docs', 'buffer', '-o', 'json'], env), 0).stdout), [], 'nothing staged');
  });
});

describe('relabel docs commit --force, then update-labels on that revision', () => {
  const prefix = `stgf${uniqueSuffix()}`;
  const valid = prefixedSite(prefix);
  const [n0, n1] = valid.nodes as [string, string];
  let stack: Awaited<ReturnType<typeof startRelabel>>;
  let env: Record<string, string>;
  let url: string;

  before(async () => {
    const made = await storeWithSite(valid.files);
    await made.store.close();
    url = made.url;
    stack = await startRelabel(url);
    env = { RELABEL_STORE_URL: url, RELABEL_TASK_QUEUE: stack.taskQueue };
    for (const name of [n0, n1]) await createNode(adminCore(), name);
  });
  after(async () => stack?.stop());

  it('commits an invalid site with --force, warning with the error count; update-labels refuses that revision and writes no node', async () => {
    const broken = prefixedSite(prefix, (doc) => {
      if (doc.metadata.name === n0) doc.data.host_profile = 'no-such-profile';
    });
    const expected = siteErrors({ site: broken.files });
    assert.equal(expected.length, 1);
    assert.match(
      expected[0] ?? '',
      new RegExp(`^site/nodes\\.yaml:\\d+:\\d+ drydock/BaremetalNode/v1 "${n0}" data\\.host_profile: host profile "no-such-profile" is not defined`),
    );
    const dir = join(mkdtempSync(join(tmpdir(), 'relabel-staging-site-')), 'site');
    mkdirSync(dir);
    for (const f of broken.files) writeFileSync(join(dir, f.source), f.text);

    exits(await relabel(['docs', 'stage', 'site', dir], env), 0);
    const refused = exits(await relabel(['docs', 'commit', '-m', 'not forced'], env), 2);
    assert.deepEqual(refused.stderr.trimEnd().split('\n'), [
      'relabel: DocumentValidationFailed: the staged site is invalid: 1 document error(s):',
      ...expected,
    ]);
    assert.deepEqual(
      JSON.parse(exits(await relabel(['docs', 'list', '-o', 'json'], env), 0).stdout).map((r: { id: number }) => r.id),
      [1],
    );

    const forced = exits(await relabel(['docs', 'commit', '--force', '-m', 'forced'], env), 0);
    assert.equal(forced.stdout, 'committed revision 2 (buckets: site)\n');
    assert.deepEqual(forced.stderr.trimEnd().split('\n'), [
      'relabel: warning: revision 2 was committed with --force despite 1 site validation error(s); update-labels refuses it until a later commit fixes them',
      ...expected,
    ]);

    const core = adminCore();
    const versions = async () => Promise.all([n0, n1].map(async (name) => (await core.readNode({ name })).metadata?.resourceVersion));
    const before = await versions();
    const run = exits(await relabel(['update-labels', '--nodes', `${n0},${n1}`, '--wait'], env), 2);
    assert.deepEqual(run.stderr.trimEnd().split('\n'), ['relabel: DocumentValidationFailed: revision 2: 1 document error(s):', ...expected]);
    assert.deepEqual(await versions(), before, 'no node was written');
    const store = await openStore(url);
    try {
      await assert.rejects(store.runs.get(1), (err: unknown) => isStoreError(err, StoreErrorCode.NotFound), 'no run was recorded');
    } finally {
      await store.close();
    }
    // The refusal is the revision's: the valid revision before it still plans.
    const dry = exits(await relabel(['update-labels', '--nodes', n0, '--revision', '1', '--dry-run', '--wait'], env), 0);
    assert.match(dry.stdout, /^status: success \(dry run: nothing written\)/m);
  });
});

describe('HTTP API configdocs: staging one bucket at a time', () => {
  let api: TestApi;

  before(async () => {
    // Nothing here starts a run: no worker is needed behind the API.
    api = await startTestApi({ storeUrl: emptyStoreUrl(), taskQueue: `relabel-staging-${uniqueSuffix()}` });
  });
  after(async () => api?.close());

  const revisions = async () => (await api.call('GET', '/api/v1.0/revisions')).json.count as number;

  it('refuses a bucket with a schema error and a YAML syntax error, listing each, staging nothing', async () => {
    const bad = badNodeFiles(`stga${uniqueSuffix()}`);
    // The API stages one body as `<bucket>.yaml`: the documents of every file, one after the other.
    const body = bad.files.map((f) => f.text).join('');
    const expected = [
      bad.expected[1] ?? '',
      `nodes/nodes.yaml:${positionOf(body, 'metadata: {name: torn').line + 1}:1 drydock/Rack/v1 "torn": Flow map in block collection must be sufficiently indented and end with a }`,
    ];
    const refused = assertFailure(await api.call('POST', '/api/v1.0/configdocs/nodes', { body }), 400, 'DocumentValidationFailed');
    assert.equal(refused.message, 'bucket nodes has invalid documents: 2 document error(s)');
    assert.deepEqual(
      refused.details.messageList,
      expected.map((message) => ({ message, error: true })),
    );
    assertFailure(await api.call('GET', '/api/v1.0/configdocs/nodes?version=buffer'), 404, 'BucketNotFound');
  });

  it('stages a bucket referring to one not yet staged; commit refuses (dryrun lists the errors), keeping the buffer, until both are staged', async () => {
    const site = splitSite(`stga${uniqueSuffix()}`);
    const nodesBody = site.nodes.map((f) => f.text).join('');
    const expected = danglingProfileErrors([{ source: 'nodes.yaml', text: nodesBody }], site.nodeNames);
    const before = await revisions();

    const staged = await api.call('POST', '/api/v1.0/configdocs/nodes?buffermode=replace', { body: nodesBody });
    assert.equal(staged.status, 201, staged.text);
    const refused = assertFailure(await api.call('POST', '/api/v1.0/commitconfigdocs'), 400, 'DocumentValidationFailed');
    assert.equal(refused.message, `the staged site is invalid: ${expected.length} document error(s)`);
    assert.deepEqual(
      refused.details.messageList.map((m) => m.message),
      expected,
    );

    const dryRun = await api.call('POST', '/api/v1.0/commitconfigdocs?dryrun=true');
    assert.equal(dryRun.status, 200, dryRun.text);
    const dry = StatusBody.parse(dryRun.json);
    assert.deepEqual([dry.status, dry.code, dry.reason, dry.details.errorCount], ['Failure', 200, 'DocumentValidationFailed', expected.length]);
    assert.equal(dry.message, `Validations failed DRYRUN: ${expected.length} document error(s); nothing committed`);
    assert.deepEqual(
      dry.details.messageList,
      expected.map((message) => ({ message, error: true, level: 'Error' })),
    );
    assert.equal(await revisions(), before, 'nothing committed');
    assert.equal((await api.call('GET', '/api/v1.0/configdocs/nodes')).status, 200, 'the buffer is kept');

    assert.equal((await api.call('POST', '/api/v1.0/configdocs/profiles', { body: site.profiles.map((f) => f.text).join('') })).status, 201);
    const valid = StatusBody.parse((await api.call('POST', '/api/v1.0/commitconfigdocs?dryrun=True')).json);
    assert.deepEqual([valid.status, valid.code, valid.details], ['Success', 200, { errorCount: 0, messageList: [] }]);
    assert.equal(await revisions(), before, 'a dry run commits nothing');
    // Shipyard's Python client sends its flags as Python spells them.
    const commit = await api.call('POST', '/api/v1.0/commitconfigdocs?force=False&dryrun=False');
    assert.equal(commit.status, 200, commit.text);
    const committed = CommitStatus.parse(commit.json);
    assert.deepEqual(
      [committed.status, committed.revision.id, committed.revision.buckets, committed.details.messageList],
      ['Success', before + 1, ['nodes', 'profiles'], []],
    );
    assert.equal(committed.message, `Configuration documents committed as revision ${before + 1}`);
    assertFailure(await api.call('POST', '/api/v1.0/commitconfigdocs?force=maybe'), 400, 'InvalidRequest');
  });
});

describe('HTTP API commitconfigdocs?force=true, then update_labels on that revision', () => {
  const prefix = `stgg${uniqueSuffix()}`;
  const valid = prefixedSite(prefix);
  const [n0, n1] = valid.nodes as [string, string];
  let worker: Awaited<ReturnType<typeof startRelabel>>;
  let api: TestApi;

  before(async () => {
    ({ worker, api } = await startApiAndWorker(emptyStoreUrl(), [n0, n1], {}));
  });
  after(async () => {
    await api?.close();
    await worker?.stop();
  });

  it('commits an invalid site with force=true, the errors as Warning messages; update_labels refuses that revision and writes no node', async () => {
    assert.equal((await api.call('POST', '/api/v1.0/configdocs/site', { body: valid.files.map((f) => f.text).join('') })).status, 201);
    assert.equal(CommitStatus.parse((await api.call('POST', '/api/v1.0/commitconfigdocs')).json).revision.id, 1);
    assert.equal((await api.call('POST', '/api/v1.0/revisions/1/tags/site-action-success', { body: {} })).status, 201);

    const brokenBody = prefixedSite(prefix, (doc) => {
      if (doc.metadata.name === n0) doc.data.host_profile = 'no-such-profile';
    })
      .files.map((f) => f.text)
      .join('');
    const expected = siteErrors({ site: [{ source: 'site.yaml', text: brokenBody }] });
    assert.equal(expected.length, 1);
    assert.equal((await api.call('POST', '/api/v1.0/configdocs/site', { body: brokenBody })).status, 201);
    assert.deepEqual(assertFailure(await api.call('POST', '/api/v1.0/commitconfigdocs'), 400, 'DocumentValidationFailed').details.messageList, [
      { message: expected[0], error: true },
    ]);

    const forced = await api.call('POST', '/api/v1.0/commitconfigdocs?force=true');
    assert.equal(forced.status, 200, forced.text);
    const body = CommitStatus.parse(forced.json);
    assert.deepEqual([body.status, body.code, body.reason, body.revision.id], ['Success', 200, 'OK', 2]);
    assert.equal(body.message, 'Configuration documents committed as revision 2 despite 1 document error(s) (FORCED SUCCESS)');
    assert.deepEqual(body.details, { errorCount: 0, messageList: [{ message: expected[0], error: false, level: 'Warning' }] });

    const core = adminCore();
    const versions = async () => Promise.all([n0, n1].map(async (name) => (await core.readNode({ name })).metadata?.resourceVersion));
    const before = await versions();
    const refused = assertFailure(
      await api.call('POST', '/api/v1.0/actions', { body: { name: 'update_labels', parameters: { target_nodes: [n0, n1] } } }),
      400,
      'DocumentValidationFailed',
    );
    assert.equal(refused.message, 'revision 2: 1 document error(s)');
    assert.deepEqual(refused.details.messageList, [{ message: expected[0], error: true }]);
    assert.deepEqual(await versions(), before, 'no node was written');
    await assert.rejects(worker.store.runs.get(1), (err: unknown) => isStoreError(err, StoreErrorCode.NotFound), 'no run was recorded');
  });
});
