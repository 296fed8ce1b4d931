/**
 * The real `relabel` CLI, run as a child process: documents against a
 * temporary SQLite store; update-labels, status, retry and cancel against the
 * real Temporal server and kube-apiserver of the test stack; exit codes and
 * flag errors.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatError } from '../../src/core/plan/site-error.ts';
import { validateDocumentsAlone } from '../../src/core/site/validate-documents.ts';
import { validateSite } from '../../src/core/site/validate-site.ts';
import { createWorker } from '../../src/worker/wiring.ts';
import { adminCore, createNode, exits, relabelCli as relabel, REPO_ROOT, startRelabel, uniqueSuffix, workflowBundle } from '../helpers.ts';
import { prefixedSite, storeWithSite } from '../site.ts';
import { nodeDoc } from '../kit/site/documents.ts';
import { eventually } from '../api-support.ts';

function freshStore(): { RELABEL_STORE_URL: string } {
  return { RELABEL_STORE_URL: `sqlite:${join(mkdtempSync(join(tmpdir(), 'relabel-cli-')), 'revisions.db')}` };
}

/** Files of a directory as `docs validate` names them. */
function filesOf(dir: string): { source: string; text: string }[] {
  return ['nodes.yaml', 'policy.yaml', 'profiles.yaml', 'racks.yaml', 'site.yaml'].map((f) => ({
    source: join(dir, f),
    text: readFileSync(join(REPO_ROOT, dir, f), 'utf8'),
  }));
}

describe('relabel docs', { concurrency: true }, () => {
  it('validates the sample site', async () => {
    const text = exits(await relabel(['docs', 'validate', 'examples/site']), 0);
    assert.match(text.stdout, /^ok: 5 file\(s\), 24 node\(s\), 3 rack\(s\), 5 host profile\(s\), site atl-lab1$/m);
    const json = JSON.parse(exits(await relabel(['docs', 'validate', 'examples/site/', '-o', 'json']), 0).stdout);
    assert.equal(json.ok, true);
    assert.equal(Object.keys(json.design.nodes).length, 24);
  });

  it('validates the fleet site, counting its node sets', async () => {
    const text = exits(await relabel(['docs', 'validate', 'examples/fleet-site']), 0);
    assert.match(text.stdout, /^ok: 4 file\(s\), 0 node\(s\), 2 node set\(s\), 0 rack\(s\), 1 host profile\(s\), site aws-prod1$/m);
  });

  it('lists every error of the broken site, as the core finds them, and exits 2', async () => {
    const expected = validateSite(filesOf('examples/broken-site'));
    assert.ok(!expected.ok);
    assert.equal(expected.errors.length, 5);
    const run = exits(await relabel(['docs', 'validate', 'examples/broken-site']), 2);
    const lines = run.stdout.trimEnd().split('\n');
    assert.deepEqual(lines, [...expected.errors.map(formatError), '5 error(s) in 3 file(s)']);
    const json = JSON.parse(exits(await relabel(['docs', 'validate', '-o', 'json', 'examples/broken-site']), 2).stdout);
    assert.equal(json.ok, false);
    assert.deepEqual(json.errors, expected.errors);
  });

  it('lists every defect of a node at once, a schema error among them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'relabel-cli-defects-'));
    const body =
      "  metadata:\n    owner_data: {bad key: x}\n    annotations: {Upper.Example/ok: y, ex ample/a: z}\n    taints:\n      - {key: 'a/b/c', effect: NoSchedule}\n      - {key: example.com/ok, effect: Sometimes}";
    writeFileSync(join(dir, 'n.yaml'), nodeDoc('n1', body));
    const lines = exits(await relabel(['docs', 'validate', dir]), 2)
      .stdout.trimEnd()
      .split('\n');
    assert.equal(lines.at(-1), '4 error(s) in 1 file(s)');
    // Each error's place: file:line:column and path.
    const places = lines.slice(0, -1).map((line) => /^(\S+) drydock\/BaremetalNode\/v1 "n1" (.*?): /.exec(line)?.slice(1).join(' '));
    assert.deepEqual(places, [
      `${join(dir, 'n.yaml')}:8:18 data.metadata.owner_data["bad key"]`,
      `${join(dir, 'n.yaml')}:9:40 data.metadata.annotations["ex ample/a"]`,
      `${join(dir, 'n.yaml')}:11:15 data.metadata.taints[0].key`,
      `${join(dir, 'n.yaml')}:12:39 data.metadata.taints[1].effect`,
    ]);
  });

  it('refuses an invalid stage with every per-document error and stores nothing', async () => {
    const env = freshStore();
    const run = exits(await relabel(['docs', 'stage', 'site', 'examples/broken-site'], env), 2);
    // Staging checks each document on its own: of the broken site's five errors, the dangling
    // profile and the inheritance cycle are the commit's to find.
    const expected = validateDocumentsAlone(filesOf('examples/broken-site').map((f) => ({ ...f, source: f.source.replace('examples/broken-site', 'site') })));
    assert.ok(!expected.ok);
    assert.deepEqual(
      expected.errors.map((e) => `${e.source}:${e.line}`),
      ['site/nodes.yaml:242', 'site/profiles.yaml:86', 'site/racks.yaml:42'],
    );
    for (const e of expected.errors) assert.ok(run.stderr.includes(formatError(e)), `missing: ${formatError(e)}\n${run.stderr}`);
    assert.match(run.stderr, /DocumentValidationFailed: bucket site has invalid documents: 3 document error/);
    assert.doesNotMatch(run.stderr, /is not defined|inheritance cycle/);
    const json = JSON.parse(exits(await relabel(['docs', 'stage', 'site', 'examples/broken-site', '-o', 'json'], env), 2).stdout);
    assert.equal(json.error.type, 'DocumentValidationFailed');
    assert.equal(json.error.details.length, 3);
    assert.deepEqual(JSON.parse(exits(await relabel(['docs', 'buffer', '-o', 'json'], env), 0).stdout), []);
    assert.match(exits(await relabel(['docs', 'buffer'], env), 0).stdout, /the buffer is empty/);
    assert.match(exits(await relabel(['docs', 'commit'], env), 3).stderr, /EmptyBuffer: nothing is staged/);
    assert.deepEqual(JSON.parse(exits(await relabel(['docs', 'list', '-o', 'json'], env), 0).stdout), []);
  });

  it('stages, commits, lists, shows, diffs and tags revisions, in text and JSON', async () => {
    const env = freshStore();
    assert.match(exits(await relabel(['docs', 'stage', 'site', 'examples/site'], env), 0).stdout, /staged bucket site: 5 file\(s\): nodes.yaml, policy.yaml/);
    assert.deepEqual(
      JSON.parse(exits(await relabel(['docs', 'buffer', '-o', 'json'], env), 0).stdout).map((b: { bucket: string; sources: string[] }) => [
        b.bucket,
        b.sources,
      ]),
      [['site', ['nodes.yaml', 'policy.yaml', 'profiles.yaml', 'racks.yaml', 'site.yaml']]],
    );
    assert.match(exits(await relabel(['docs', 'commit', '-m', 'first'], env), 0).stdout, /committed revision 1 \(buckets: site\)/);

    // A second revision from a directory with a subdirectory and one file changed.
    const dir = mkdtempSync(join(tmpdir(), 'relabel-cli-site-'));
    cpSync(join(REPO_ROOT, 'examples/site'), dir, { recursive: true });
    mkdirSync(join(dir, 'racks'));
    renameSync(join(dir, 'racks.yaml'), join(dir, 'racks', 'racks.yaml'));
    writeFileSync(join(dir, 'nodes.yaml'), `${readFileSync(join(dir, 'nodes.yaml'), 'utf8')}# edited\n`);
    const staged = JSON.parse(exits(await relabel(['docs', 'stage', 'site', dir, '-o', 'json'], env), 0).stdout);
    assert.deepEqual(staged.sources, ['nodes.yaml', 'policy.yaml', 'profiles.yaml', 'racks/racks.yaml', 'site.yaml']);
    const committed = JSON.parse(exits(await relabel(['docs', 'commit', '-m', 'second', '-o', 'json'], env), 0).stdout);
    assert.equal(committed.id, 2);
    assert.deepEqual(committed.buckets, ['site']);

    assert.match(
      exits(await relabel(['docs', 'tag', '1', 'site-action-success', '--data', '{"by":"cli-test"}'], env), 0).stdout,
      /tagged revision 1 site-action-success/,
    );

    // Reads only from here: run them side by side.
    const reads = await Promise.all(
      [
        ['docs', 'list'],
        ['docs', 'list', '-o', 'json'],
        ['docs', 'show', '1', '-o', 'json'],
        ['docs', 'show', '1'],
        ['docs', 'show', '2', '--documents'],
        ['docs', 'show', '2', '--documents', '-o', 'json'],
        ['docs', 'diff', '1', '2'],
        ['docs', 'diff', '0', '1', '-o', 'json'],
      ].map(async (args) => exits(await relabel(args, env), 0).stdout),
    );
    const [listText, listJson, showJson, showText, yaml, withDocs, diff, diffJson] = reads as [string, string, string, string, string, string, string, string];

    const list = listText.trimEnd().split('\n');
    assert.match(list[0] ?? '', /^REV\s+CREATED\s+BUCKETS\s+TAGS\s+MESSAGE$/);
    assert.match(list[1] ?? '', /^1\s+\S+Z\s+site\s+site-action-success\s+first$/);
    assert.match(list[2] ?? '', /^2\s+\S+Z\s+site\s+-\s+second$/);
    assert.deepEqual(
      JSON.parse(listJson).map((r: { id: number; message: string }) => [r.id, r.message]),
      [
        [1, 'first'],
        [2, 'second'],
      ],
    );

    const shown = JSON.parse(showJson);
    assert.equal(shown.id, 1);
    assert.deepEqual(
      shown.tags.map((t: { tag: string; data: unknown }) => [t.tag, t.data]),
      [['site-action-success', { by: 'cli-test' }]],
    );
    assert.match(showText, /^revision\s+1$/m);
    assert.match(showText, /^ {2}site-action-success {2}\S+Z {2}\{"by":"cli-test"\}$/m);
    assert.match(yaml, /^# site\/racks\/racks.yaml \(revision 2\)$/m);
    assert.ok(yaml.includes(readFileSync(join(dir, 'racks', 'racks.yaml'), 'utf8')));
    assert.equal(JSON.parse(withDocs).documents.length, 5);

    assert.match(diff, /^modified\s+site\/nodes.yaml$/m);
    assert.match(diff, /^deleted\s+site\/racks.yaml$/m);
    assert.match(diff, /^added\s+site\/racks\/racks.yaml$/m);
    assert.doesNotMatch(diff, /policy.yaml/);
    assert.deepEqual(
      JSON.parse(diffJson).buckets.map((b: { bucket: string; status: string }) => [b.bucket, b.status]),
      [['site', 'added']],
    );

    assert.deepEqual(JSON.parse(exits(await relabel(['docs', 'untag', '1', 'site-action-success', '-o', 'json'], env), 0).stdout), {
      revision: 1,
      tag: 'site-action-success',
      removed: true,
    });
    assert.deepEqual(JSON.parse(exits(await relabel(['docs', 'show', '1', '-o', 'json'], env), 0).stdout).tags, []);
    assert.match(exits(await relabel(['docs', 'show', '7'], env), 3).stderr, /RevisionNotFound: revision 7/);
    exits(await relabel(['docs', 'stage', 'site', 'examples/site'], env), 0);
    assert.match(exits(await relabel(['docs', 'discard'], env), 0).stdout, /discarded: site/);
  });

  it('names the flag or argument of a bad value and exits 2 before touching anything', async () => {
    const cases: [string[], RegExp][] = [
      [['update-labels', '--nodes', 'a', '--concurrency', '0'], /option '--concurrency <k>' argument '0' is invalid\. must be a whole number ≥ 1/],
      [['update-labels', '--nodes', 'a', '--revision', 'abc'], /option '--revision <n>' argument 'abc' is invalid/],
      [['update-labels', '--nodes', 'a,,b'], /option '--nodes <names>' argument 'a,,b' is invalid\. target node #2 is empty/],
      [['update-labels', '--nodes', 'a,a'], /--nodes <names>.*listed more than once/],
      [['update-labels'], /^error: choose the targets with exactly one of --nodes, --nodes-from, --all, --node-set, or --rack\/--tag\/--label$/m],
      [['update-labels', '--all', '--nodes', 'a'], /exactly one of .* \(several were given\)/],
      [['update-labels', '--label', 'novalue'], /option '--label <key=value>' argument 'novalue' is invalid\. must be key=value/],
      [['update-labels', '--rack', 'a,,b'], /option '--rack <names>' argument 'a,,b' is invalid/],
      [['update-labels', '--nodes-from', 'no/such/file'], /cannot read no\/such\/file: ENOENT/],
      [['status', 'x', '-o', 'yaml'], /option '-o, --output <format>' argument 'yaml' is invalid\. Allowed choices are text, json/],
      [['docs', 'show', 'abc'], /argument 'rev'.*whole number ≥ 1/],
      [['docs', 'diff', '-1', '2'], /argument 'from'.*whole number ≥ 0/],
      [['docs', 'tag', '1', 'x', '--data', 'nope'], /option '--data <json>' argument 'nope' is invalid\. must be JSON/],
      [['docs', 'validate', 'no/such/dir'], /cannot read no\/such\/dir: no such file or directory/],
      [['no-such-command'], /unknown command 'no-such-command'/],
      [['planet', '--help'], /^error: unknown command 'planet'/],
      [['--store', 'sqlite:/tmp/x.db', 'planet'], /^error: unknown command 'planet'/],
    ];
    await Promise.all(
      cases.map(async ([args, message]) => {
        // An unreachable Temporal and an unwritable store: parsing must fail first.
        const run = await relabel(args, { RELABEL_STORE_URL: 'sqlite:/proc/nope/revisions.db', TEMPORAL_ADDRESS: '127.0.0.1:1' });
        exits(run, 2);
        assert.match(run.stderr, message, args.join(' '));
      }),
    );
    assert.match(exits(await relabel(['--store', 'sqlite:/tmp/x.db', 'docs', '--help']), 0).stdout, /Usage: relabel docs/);
    assert.match(exits(await relabel(['--help']), 0).stdout, /Exit codes:\n {2}0 .*\n(.*\n)* {2}4 .*partial_success/);
  });
});

describe('relabel update-labels, status, retry, cancel', { concurrency: true }, () => {
  const prefix = `cli${uniqueSuffix()}`;
  const site = prefixedSite(prefix);
  const [n0, n1, n2, n3] = site.nodes as [string, string, string, string];
  let stack: Awaited<ReturnType<typeof startRelabel>>;
  let env: Record<string, string>;

  before(async () => {
    const { url, store } = await storeWithSite(site.files);
    await store.close();
    stack = await startRelabel(url);
    env = { RELABEL_STORE_URL: url, RELABEL_TASK_QUEUE: stack.taskQueue };
    const core = adminCore();
    for (const name of [n0, n1, n2]) await createNode(core, name);
  });
  after(async () => stack.stop());

  it('update-labels chooses its targets with --all, a rack/tag/label filter or --nodes-from; a filter matching nothing is refused', async () => {
    const validation = validateSite(site.files);
    assert.ok(validation.ok);
    const nodes = Object.values(validation.design.nodes);
    const start = async (...args: string[]) =>
      (JSON.parse(exits(await relabel(['update-labels', '--dry-run', ...args, '-o', 'json'], env), 0).stdout) as { targets: string[] }).targets;
    const names = (list: typeof nodes) => list.map((n) => n.name).sort();

    assert.deepEqual(await start('--all'), names(nodes));
    assert.equal(nodes.length, 24);
    const first = validation.design.nodes[n0];
    assert.ok(first?.rack);
    const inRack = nodes.filter((n) => n.rack === first.rack);
    assert.ok(inRack.length > 1 && inRack.length < nodes.length);
    assert.deepEqual(await start('--rack', first.rack), names(inRack));
    const [key, value] = Object.entries(first.labels).find(([k]) => k !== 'kubernetes.io/hostname') ?? [];
    assert.ok(key !== undefined && value !== undefined);
    const both = inRack.filter((n) => n.labels[key] === value);
    assert.ok(both.length >= 1 && both.length < inRack.length, 'the label narrows the rack');
    assert.deepEqual(await start('--rack', first.rack, '--label', `${key}=${value}`), names(both));

    const file = join(mkdtempSync(join(tmpdir(), 'relabel-targets-')), 'nodes.txt');
    writeFileSync(file, `${n1}\n${n0}, ${n2}\n\n`);
    assert.deepEqual(await start('--nodes-from', file), [n1, n0, n2]);

    const none = exits(await relabel(['update-labels', '--dry-run', '--rack', 'no-such-rack'], env), 2);
    assert.match(none.stderr, /NoNodesMatched: the selection matches no node of revision 1/);
  });

  it('runs lists update runs newest first, by site and status; a dry run is listed as dry_run', async () => {
    const dry = JSON.parse(exits(await relabel(['update-labels', '--nodes', n0, '--dry-run', '--wait', '-o', 'json'], env), 0).stdout) as {
      workflowId: string;
      runId: string;
    };
    type Listed = { workflowId: string; runId: string; run?: number; execution: string; outcome?: string };
    const list = async (...args: string[]) =>
      JSON.parse(exits(await relabel(['runs', '--site', `${prefix}-site`, ...args, '-o', 'json'], env), 0).stdout) as Listed[];
    const found = await eventually(
      async () => (await list('--dry-run')).find((r) => r.runId === dry.runId),
      (r) => r?.outcome === 'dry_run' && r.execution === 'COMPLETED',
    );
    assert.equal(found?.workflowId, dry.workflowId);
    assert.equal(typeof found?.run, 'number');
    assert.ok(!(await list('--status', 'failure')).some((r) => r.runId === dry.runId), 'not listed under another status');
    assert.deepEqual(JSON.parse(exits(await relabel(['runs', '--site', 'no-such-site', '-o', 'json'], env), 0).stdout), []);
    const text = exits(await relabel(['runs', '--site', `${prefix}-site`, '--dry-run'], env), 0).stdout;
    assert.match(text, /^RUN\s+WORKFLOW ID\s+BY\s+VIA\s+EXECUTION\s+STATUS\s+STARTED\s+CLOSED$/m);
    assert.match(text, new RegExp(`^${found?.run}\\s+${dry.workflowId}\\s+\\S+\\s+cli\\s+COMPLETED\\s+dry_run\\s`, 'm'));
    assert.match(
      exits(await relabel(['runs', '--dry-run', '--status', 'success'], env), 2).stderr,
      /--dry-run lists dry runs, whose status is dry_run, not success/,
    );
    assert.match(
      exits(await relabel(['runs', '--status', 'done'], env), 2).stderr,
      /argument 'done' is invalid\. Allowed choices are success, partial_success, failure, running, dry_run/,
    );
  });

  it('a dry run shows per node what would change (old → new) and per label key how many nodes gain, change or lose it; writes nothing', async () => {
    const node = site.nodes[10] as string;
    const validation = validateSite(site.files);
    assert.ok(validation.ok);
    const [key, value] = Object.entries(validation.design.nodes[node]?.labels ?? {}).find(([k, v]) => !k.includes('kubernetes.io') && v !== '') ?? [];
    assert.ok(key !== undefined && value !== undefined);
    const core = adminCore();
    await createNode(core, node, { [key]: `${value}-old` });
    const before = (await core.readNode({ name: node })).metadata?.resourceVersion;
    const run = exits(await relabel(['update-labels', '--nodes', node, '--dry-run', '--wait'], env), 0);
    const esc = (t: string) => t.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    assert.match(run.stdout, new RegExp(`^${esc(node)}\\s+success\\s+\\d+\\s+0\\s+0\\s+set .*${esc(key)}: ${esc(value)}-old → ${esc(value)}`, 'm'));
    assert.doesNotMatch(run.stdout, /no change/);
    assert.match(run.stdout, /^nodes per label key:\nLABEL\s+GAIN\s+CHANGE\s+LOSE\s+ADOPT$/m);
    assert.match(run.stdout, new RegExp(`^${esc(key)}\\s+0\\s+1\\s+0\\s+0$`, 'm'));
    assert.match(run.stdout, /^status: success \(dry run: nothing written\)/m);
    assert.equal((await core.readNode({ name: node })).metadata?.resourceVersion, before, 'a dry run writes nothing');
  });

  it('runs update-labels --wait, reports per node, retries exactly the missing node; status -o json parses', async () => {
    const run = exits(await relabel(['update-labels', '--nodes', `${n0},${n1},${n2}`, '--wait'], env), 0);
    const workflowId = `update-labels/${prefix}-site`;
    assert.match(run.stdout, new RegExp(`^workflow ID\\s+${workflowId}$`, 'm'));
    assert.match(run.stdout, /^run ID\s+[0-9a-f-]{36}$/m);
    assert.match(run.stdout, new RegExp(`^Temporal UI\\s+${process.env.TEMPORAL_UI_URL}/namespaces/default/workflows/${encodeURIComponent(workflowId)}/`, 'm'));
    assert.match(run.stdout, /^NODE\s+STATUS\s+SET\s+REMOVED\s+ADOPTED\s+DETAIL$/m);
    for (const n of [n0, n1, n2]) assert.match(run.stdout, new RegExp(`^${n}\\s+success\\s+[1-9]\\d*\\s+0\\s+0\\s+set [^\\n]*=`, 'm'));
    assert.match(run.stdout, /^nodes per label key:\nLABEL\s+GAIN\s+CHANGE\s+LOSE\s+ADOPT\n/m);
    assert.match(run.stdout, /^status: success: 3 of 3 node\(s\) succeeded, 0 failed, 3 written$/m);
    assert.match(run.stderr, /^progress: done: 3\/3 done \(3 ok, 0 failed, 0 running, 0 pending, 3 written\)$/m);

    const status = JSON.parse(exits(await relabel(['status', workflowId, '-o', 'json'], env), 0).stdout);
    assert.equal(status.workflowId, workflowId);
    assert.equal(status.execution, 'COMPLETED');
    assert.equal(status.result.status, 'success');
    assert.deepEqual(
      status.nodes.items.map((n: { node: string; status: string }) => [n.node, n.status]),
      [
        [n0, 'success'],
        [n1, 'success'],
        [n2, 'success'],
      ],
    );

    // One target missing from the cluster: partial_success, exit 4, the reason in the table.
    const partial = exits(await relabel(['update-labels', '--nodes', `${n0},${n3}`, '--wait'], env), 4);
    assert.match(partial.stdout, new RegExp(`^${n0}\\s+success\\s+0\\s+0\\s+0\\s+no change$`, 'm'));
    assert.match(partial.stdout, new RegExp(`^${n3}\\s+failure\\s+-\\s+-\\s+-\\s+NodeNotFound: .*not found in the cluster`, 'm'));
    assert.match(partial.stdout, /^status: partial_success: 1 of 2 node\(s\) succeeded, 1 failed, 0 written$/m);
    const runId = /^run ID\s+(\S+)$/m.exec(partial.stdout)?.[1] ?? '';
    assert.match(partial.stdout, new RegExp(`relabel retry ${workflowId} --run-id ${runId}`));
    exits(await relabel(['status', workflowId], env), 4);
    // The whole run summed up instead of the per-node table.
    const summed = exits(await relabel(['status', workflowId, '--summary'], env), 4);
    assert.match(summed.stdout, /^nodes: 1 failure, 1 success \(0 written\)$/m);
    assert.match(summed.stdout, /^failures by type: NodeNotFound 1$/m);
    assert.match(summed.stdout, /^no label changes$/m);
    assert.doesNotMatch(summed.stdout, /^NODE\s+STATUS/m);
    assert.match(
      exits(await relabel(['status', workflowId, '--summary', '--failures'], env), 2).stderr,
      /option '--summary' cannot be used with option '--failures'/,
    );
    const firstRunId = status.runId as string;
    const firstSummary = JSON.parse(exits(await relabel(['status', workflowId, '--run-id', firstRunId, '--summary', '-o', 'json'], env), 0).stdout);
    assert.equal(firstSummary.nodes, undefined, 'no node page with --summary');
    assert.deepEqual(firstSummary.summary.statuses, { success: 3 });
    assert.equal(firstSummary.summary.written, 3);
    const gains: Record<string, number> = {};
    for (const n of status.nodes.items as { set: Record<string, string> }[]) for (const k of Object.keys(n.set)) gains[k] = (gains[k] ?? 0) + 1;
    assert.deepEqual(
      Object.fromEntries(Object.entries(firstSummary.summary.labels as Record<string, { gain: number }>).map(([k, e]) => [k, e.gain])),
      gains,
      'per key, as many gains as nodes that set it',
    );

    await createNode(adminCore(), n3);
    const retried = JSON.parse(exits(await relabel(['retry', workflowId, '--run-id', runId, '--wait', '-o', 'json'], env), 0).stdout);
    assert.deepEqual(retried.result.retryOf, { workflowId, runId });
    assert.deepEqual(
      retried.nodes.items.map((n: { node: string; status: string }) => [n.node, n.status]),
      [[n3, 'success']],
    );
    assert.match(exits(await relabel(['retry', workflowId], env), 3).stderr, /NothingToRetry/);
  });

  it('rejects by state with exit 3, as text or as a JSON error', async () => {
    const noRun = await relabel(['status', `update-labels/${prefix}-nothing`], env);
    assert.match(exits(noRun, 3).stderr, /RunNotFound/);
    const badRevision = JSON.parse(exits(await relabel(['update-labels', '--nodes', n0, '--revision', '99', '-o', 'json'], env), 3).stdout);
    assert.equal(badRevision.error.type, 'RevisionNotFound');

    const noAction = await storeWithSite(site.files, { siteAction: false });
    await noAction.store.close();
    const r = await relabel(['update-labels', '--nodes', n0], { ...env, RELABEL_STORE_URL: noAction.url });
    assert.match(exits(r, 3).stderr, /NoSiteActionRevision: no revision has participated in a site action/);
    assert.match(exits(await relabel(['update-labels', '--nodes', n0], { ...env, ...freshStore() }), 3).stderr, /NoCommittedRevision/);
  });

  it('rejects a second run for a site while one runs (exit 3); a cancelled run exits 5', async () => {
    // No worker polls this queue yet: the first run stays running until one does.
    const other = prefixedSite(`${prefix}x`);
    const { url, store } = await storeWithSite(other.files);
    await store.close();
    const taskQueue = `relabel-idle-${uniqueSuffix()}`;
    const idle = { RELABEL_STORE_URL: url, RELABEL_TASK_QUEUE: taskQueue };
    const first = JSON.parse(exits(await relabel(['update-labels', '--nodes', other.nodes.slice(0, 2).join(','), '-o', 'json'], idle), 0).stdout);
    assert.equal(first.workflowId, `update-labels/${prefix}x-site`);
    assert.deepEqual(first.targets, other.nodes.slice(0, 2));
    assert.equal(first.dryRun, false);
    const second = await relabel(['update-labels', '--nodes', other.nodes[2] as string], idle);
    assert.match(exits(second, 3).stderr, /RunInProgress: an update_labels run is already in progress/);
    // No worker serves the run: a pause cannot be answered, and says so at once.
    assert.match(exits(await relabel(['pause', first.workflowId], idle), 6).stderr, /Unavailable: cannot pause run .*: no worker is polling task queue/);
    const cancelled = exits(await relabel(['cancel', first.workflowId], idle), 0);
    assert.match(cancelled.stdout, new RegExp(`cancellation requested for ${first.workflowId} \\(run ${first.runId}\\)`));

    // A worker arrives, sees the cancellation and the run ends CANCELED.
    const { worker, close } = await createWorker({
      temporalAddress: process.env.TEMPORAL_ADDRESS as string,
      namespace: 'default',
      taskQueue,
      kubeconfig: process.env.KUBECONFIG,
      storeUrl: url,
      workflowBundle: await workflowBundle(),
    });
    const running = worker.run();
    try {
      const ended = exits(await relabel(['status', first.workflowId, '--wait'], idle), 5);
      assert.match(ended.stdout, /^execution\s+CANCELLED$/m);
      // Every target is listed, settled as never started.
      for (const node of other.nodes.slice(0, 2)) assert.match(ended.stdout, new RegExp(`^${node}\\s+cancelled\\b.*NotStarted`, 'm'));
    } finally {
      worker.shutdown();
      await running;
      await close();
    }
  });

  it('exits 6 when Temporal cannot be reached', async () => {
    const run = await relabel(['update-labels', '--nodes', n0, '--address', '127.0.0.1:1'], env);
    assert.match(exits(run, 6).stderr, /Unavailable: cannot reach Temporal at 127\.0\.0\.1:1/);
  });
});
