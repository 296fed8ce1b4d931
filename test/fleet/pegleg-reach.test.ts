/**
 * `relabel fleet docs reach` on a Pegleg repository of three sites (two of
 * type `large`, one `small`; test/fixtures/pegleg-fleet), made a git
 * repository here and changed commit by commit: a global change reaches
 * every site, a type change the sites of that type, a type change a site
 * overrides reaches the others of the type only, a site change that site
 * only; a site that fails to render at the head is named and the command
 * exits non-zero; bad input is refused; nothing is ever written.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exits, relabelCli, REPO_ROOT } from '../helpers.ts';

const FIXTURE = join(REPO_ROOT, 'test/fixtures/pegleg-fleet');

type KeyCounts = { gained: number; changed: number; lost: number };
type Listed<T> = { total: number; items: T[] };
type NodeChange = {
  name: string;
  labels: { changed: Record<string, { from: string; to: string }> };
  causes: { source: string; name: string; layer: string }[];
};
type Site = {
  name: string;
  type: string;
  status: string;
  inScope: boolean;
  layers: string[];
  registered?: boolean;
  changedSources: Listed<{ source: string; name: string }>;
  documents?: Record<'added' | 'changed' | 'removed', Listed<{ schema: string; name: string }>>;
  nodes?: Listed<NodeChange> & { keys: Record<'labels' | 'annotations' | 'taints', KeyCounts> };
  failed?: { at: string; total: number; items: string[] };
};
type Reach = {
  base: { ref: string; commit: string };
  head: { ref: string | null; commit?: string };
  changedFiles: Listed<{ path: string; layer: string; change: string }>;
  sites: Site[];
  registry?: { registered: number; notInRepository: Listed<string> };
  totals: Record<string, number>;
};

describe('relabel fleet docs reach', () => {
  let root: string;
  let repo: string;
  // Pointed at a store that must never come to exist: without --registry no store is opened.
  let env: Record<string, string>;
  const git = (...args: string[]) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' });
  const edit = (path: string, from: string, to: string) => {
    const text = readFileSync(join(repo, path), 'utf8');
    assert.ok(text.includes(from), `${path} holds ${from}`);
    writeFileSync(join(repo, path), text.replace(from, to));
  };
  const commit = (tag: string) => {
    git('commit', '-q', '-a', '-m', tag);
    git('tag', tag);
  };
  const reach = async (args: string[], code = 0, extraEnv: Record<string, string> = {}): Promise<Reach> =>
    JSON.parse(exits(await relabelCli(['fleet', 'docs', 'reach', '--pegleg', repo, '-o', 'json', ...args], { ...env, ...extraEnv }), code).stdout) as Reach;
  const site = (r: Reach, name: string): Site => r.sites.find((s) => s.name === name) ?? assert.fail(`no site ${name}`);

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'relabel-reach-'));
    repo = join(root, 'airship-sites');
    cpSync(FIXTURE, repo, { recursive: true });
    env = { RELABEL_STORE_URL: `sqlite:${join(root, 'never', 'revisions.db')}` };
    git('init', '-q');
    git('config', 'user.email', 'test@example.com');
    git('config', 'user.name', 'test');
    git('add', '.');
    commit('initial');
    edit('global/profiles/control-plane.yaml', 'zone: global-default', 'zone: east');
    commit('global-change');
    edit('type/large/profiles.yaml', 'pool: large-workers', 'pool: big-workers');
    commit('type-change');
    // bravo replaces the large type's cp profile with its own size.
    edit('type/large/profiles.yaml', 'size: large', 'size: xlarge');
    commit('overridden-change');
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('a global change reaches every site, each label change credited to the global document', async () => {
    const r = await reach(['--base', 'initial', '--head', 'global-change']);
    assert.equal(r.base.commit, git('rev-parse', 'initial').trim());
    assert.equal(r.head.commit, git('rev-parse', 'global-change').trim());
    assert.deepEqual(r.changedFiles.items, [{ path: 'global/profiles/control-plane.yaml', layer: 'global', change: 'changed' }]);
    assert.deepEqual(
      r.sites.map((s) => [s.name, s.type, s.status, s.inScope, s.layers]),
      [
        ['alpha', 'large', 'reached', true, ['global']],
        ['bravo', 'large', 'reached', true, ['global']],
        ['charlie', 'small', 'reached', true, ['global']],
      ],
    );
    for (const s of r.sites) {
      assert.equal(s.nodes?.total, 1, s.name);
      const node = s.nodes?.items[0];
      assert.equal(node?.name, `${s.name}-cp1`);
      assert.deepEqual(node?.labels.changed, { zone: { from: 'global-default', to: 'east' } });
      assert.deepEqual(
        node?.causes.map((c) => [c.source, c.name, c.layer]),
        [['global/profiles/control-plane.yaml', 'cp-global', 'global']],
      );
      assert.deepEqual(s.nodes?.keys.labels, { gained: 0, changed: 1, lost: 0 });
      // The abstract global profile is not rendered; the concrete cp layered on it is.
      assert.deepEqual(s.documents?.changed.items, [{ schema: 'drydock/HostProfile/v1', name: 'cp' }]);
    }
    assert.equal(r.totals['reached'], 3);
  });

  it('a type change reaches only the sites of that type', async () => {
    const r = await reach(['--base', 'global-change', '--head', 'type-change']);
    assert.deepEqual(
      r.sites.map((s) => [s.name, s.status, s.inScope, s.nodes?.total, s.nodes?.keys.labels.changed]),
      [
        ['alpha', 'reached', true, 2, 2],
        ['bravo', 'reached', true, 2, 2],
        ['charlie', 'unchanged', false, 0, 0],
      ],
    );
    assert.deepEqual(
      site(r, 'alpha').nodes?.items.map((n) => n.name),
      ['alpha-w1', 'alpha-w2'],
    );
    assert.deepEqual(site(r, 'charlie').layers, []);
  });

  it("a type change a site's replacement overrides reaches only the other site of the type", async () => {
    const r = await reach(['--base', 'type-change', '--head', 'overridden-change']);
    assert.deepEqual(
      r.sites.map((s) => [s.name, s.status, s.inScope, s.layers, s.nodes?.total]),
      [
        ['alpha', 'reached', true, ['type'], 1],
        ['bravo', 'unchanged', true, ['type'], 0],
        ['charlie', 'unchanged', false, [], 0],
      ],
    );
    assert.deepEqual(site(r, 'alpha').nodes?.items[0]?.labels.changed, { size: { from: 'large', to: 'xlarge' } });
    assert.deepEqual(site(r, 'bravo').documents?.changed.total, 0);
    assert.deepEqual(
      site(r, 'bravo').changedSources.items.map((d) => [d.source, d.name]),
      [['type/large/profiles.yaml', 'cp']],
    );
    assert.equal(r.totals['inScopeUnchanged'], 1);
    const text = exits(await relabelCli(['fleet', 'docs', 'reach', '--pegleg', repo, '--base', 'type-change', '--head', 'overridden-change'], env), 0).stdout;
    assert.match(text, /^alpha +large +type +reached +\+0 ~1 -0 +1 +\+0 ~1 -0/m);
    assert.match(text, /^bravo +large +type +unchanged /m);
    assert.match(text, /^ {4}alpha-cp1: ~label size=large→xlarge; from type\/large\/profiles\.yaml drydock\/HostProfile\/v1 "cp" \(layer type\)$/m);
    assert.match(text, /^3 site\(s\): 2 under a changed layer, 1 reached, 1 under a changed layer but unchanged \(overridden or no effect\)/m);
  });

  it('compares the working tree with HEAD by default: a site change reaches that site only, and nothing is written', async () => {
    const before = { status: git('status', '--porcelain'), index: readFileSync(join(repo, '.git', 'index')) };
    const original = readFileSync(join(repo, 'site/alpha/nodes.yaml'), 'utf8');
    writeFileSync(
      join(repo, 'site/alpha/nodes.yaml'),
      original.replace('  host_profile: worker\n', '  host_profile: worker\n  metadata:\n    owner_data:\n      role: edge\n'),
    );
    try {
      const r = await reach([]);
      assert.deepEqual(r.head, { ref: null });
      assert.equal(r.base.ref, 'HEAD');
      assert.deepEqual(
        r.sites.map((s) => [s.name, s.status, s.layers]),
        [
          ['alpha', 'reached', ['site']],
          ['bravo', 'unchanged', []],
          ['charlie', 'unchanged', []],
        ],
      );
      assert.deepEqual(site(r, 'alpha').nodes?.keys.labels, { gained: 1, changed: 0, lost: 0 });
      assert.deepEqual(
        site(r, 'alpha').nodes?.items[0]?.causes.map((c) => [c.source, c.name]),
        [['site/alpha/nodes.yaml', 'alpha-w1']],
      );
      assert.equal(git('status', '--porcelain'), ' M site/alpha/nodes.yaml\n');
      assert.deepEqual(readFileSync(join(repo, '.git', 'index')), before.index, 'the index is not refreshed');
    } finally {
      writeFileSync(join(repo, 'site/alpha/nodes.yaml'), original);
    }
    assert.equal(git('status', '--porcelain'), before.status);
    assert.equal(existsSync(join(root, 'never')), false, 'no store was opened');
  });

  it('names a site that fails to render at the head, with its errors, exits 2 and writes nothing', async () => {
    const original = readFileSync(join(repo, 'site/charlie/nodes.yaml'), 'utf8');
    edit(
      'site/charlie/nodes.yaml',
      'name: charlie-w2\n  layeringDefinition:\n    abstract: false\n    layer: site',
      'name: charlie-w2\n  layeringDefinition:\n    abstract: false\n    layer: nowhere',
    );
    try {
      const r = await reach([], 2);
      const charlie = site(r, 'charlie');
      assert.equal(charlie.status, 'failed');
      assert.equal(charlie.failed?.at, 'head');
      assert.ok(charlie.failed && charlie.failed.total >= 1);
      assert.match(charlie.failed?.items[0] ?? '', /^site\/charlie\/nodes\.yaml:\d+:\d+ drydock\/BaremetalNode\/v1 "charlie-w2" .*nowhere/);
      assert.equal(charlie.documents, undefined);
      assert.deepEqual(
        r.sites.filter((s) => s.name !== 'charlie').map((s) => s.status),
        ['unchanged', 'unchanged'],
      );
      const text = await relabelCli(['fleet', 'docs', 'reach', '--pegleg', repo, '--limit', '1'], env);
      exits(text, 2);
      assert.match(text.stdout, /^charlie +small +site +FAILED at head/m);
      assert.match(text.stdout, /^charlie: does not validate at the head:\n {4}site\/charlie\/nodes\.yaml:/m);
    } finally {
      writeFileSync(join(repo, 'site/charlie/nodes.yaml'), original);
    }
    assert.equal(git('status', '--porcelain'), '');
    assert.equal(existsSync(join(root, 'never')), false);
  });

  it('answers -o json in a fixed shape, every list bounded by --limit with its total, and --sites picks sites', async () => {
    const r = await reach(['--base', 'initial', '--head', 'overridden-change', '--limit', '1', '--sites', 'alpha,charlie']);
    assert.deepEqual(Object.keys(r), ['repository', 'base', 'head', 'changedFiles', 'sites', 'totals']);
    assert.deepEqual(
      r.sites.map((s) => s.name),
      ['alpha', 'charlie'],
    );
    const alpha = site(r, 'alpha');
    assert.deepEqual(Object.keys(alpha), ['name', 'type', 'status', 'inScope', 'layers', 'changedSources', 'documents', 'nodes']);
    assert.deepEqual(Object.keys(alpha.nodes ?? {}), ['total', 'items', 'keys']);
    assert.equal(r.changedFiles.total, 2);
    assert.equal(r.changedFiles.items.length, 1);
    assert.equal(alpha.nodes?.total, 3);
    assert.equal(alpha.nodes?.items.length, 1);
    assert.deepEqual(alpha.nodes?.keys, {
      labels: { gained: 0, changed: 4, lost: 0 },
      annotations: { gained: 0, changed: 0, lost: 0 },
      taints: { gained: 0, changed: 0, lost: 0 },
    });
    assert.deepEqual(r.totals, { sites: 2, inScope: 2, reached: 2, inScopeUnchanged: 0, unchanged: 0, added: 0, removed: 0, failed: 0 });
  });

  it('with --registry, marks the registered sites and names registered sites the repository lacks', async () => {
    const store = { RELABEL_STORE_URL: `sqlite:${join(root, 'registry.db')}` };
    for (const name of ['alpha', 'delta']) exits(await relabelCli(['fleet', 'sites', 'add', name], store), 0);
    const r = await reach(['--base', 'initial', '--head', 'global-change', '--registry'], 0, store);
    assert.deepEqual(
      r.sites.map((s) => [s.name, s.registered]),
      [
        ['alpha', true],
        ['bravo', false],
        ['charlie', false],
      ],
    );
    assert.deepEqual(r.registry, { registered: 2, notInRepository: { total: 1, items: ['delta'] } });
    const text = exits(
      await relabelCli(['fleet', 'docs', 'reach', '--pegleg', repo, '--base', 'initial', '--head', 'global-change', '--registry'], store),
      0,
    ).stdout;
    assert.match(text, /^alpha .* yes$/m);
    assert.match(text, /^bravo .* no$/m);
    assert.match(text, /^registry: 2 site\(s\); not in the repository: delta$/m);
  });

  it('reads a Pegleg repository kept in a folder of a larger git repository', async () => {
    const outer = join(root, 'outer');
    cpSync(FIXTURE, join(outer, 'deploy', 'sites'), { recursive: true });
    const inOuter = (...args: string[]) => execFileSync('git', ['-C', outer, '-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args]);
    inOuter('init', '-q');
    inOuter('add', '.');
    inOuter('commit', '-q', '-m', 'sites');
    const file = join(outer, 'deploy', 'sites', 'type', 'small', 'profiles.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('size: small', 'size: tiny'));
    const run = exits(await relabelCli(['fleet', 'docs', 'reach', '--pegleg', join(outer, 'deploy', 'sites'), '-o', 'json'], env), 0);
    const r = JSON.parse(run.stdout) as Reach;
    assert.deepEqual(
      r.sites.map((s) => [s.name, s.status]),
      [
        ['alpha', 'unchanged'],
        ['bravo', 'unchanged'],
        ['charlie', 'reached'],
      ],
    );
    assert.deepEqual(r.changedFiles.items, [{ path: 'type/small/profiles.yaml', layer: 'type', change: 'changed' }]);
  });

  it('refuses bad input with a message naming it, exit 2, nothing printed on stdout', async () => {
    const plain = join(root, 'plain');
    mkdirSync(join(plain, 'global'), { recursive: true });
    writeFileSync(join(plain, 'global', 'a.yaml'), 'a: 1\n');
    execFileSync('git', ['-C', plain, 'init', '-q']);
    execFileSync('git', ['-C', plain, '-c', 'user.email=t@example.com', '-c', 'user.name=t', 'commit', '-q', '--allow-empty', '-m', 'x']);
    const notGit = mkdtempSync(join(tmpdir(), 'relabel-reach-plain-'));
    const cases: [string[], RegExp][] = [
      [['--pegleg', plain], /is not a Pegleg repository: no site\/<name>\/site-definition\.yaml in it/],
      [['--pegleg', repo, '--base', 'no-such-ref'], /--base "no-such-ref" names no commit of the git repository at /],
      [['--pegleg', repo, '--base', '--all'], /--base "--all": expected a git ref/],
      [['--pegleg', repo, '--head', 'no-such-ref'], /--head "no-such-ref" names no commit/],
      [['--pegleg', notGit], /is not in a git repository, so it has no HEAD to compare with/],
      [['--pegleg', join(root, 'missing')], /--pegleg .*missing: no such folder/],
      [['--pegleg', repo, '--sites', 'alpha,zulu'], /--sites: no site "zulu" in .* \(its sites: alpha, bravo, charlie\)/],
      [['--pegleg', repo, '--limit', '0'], /--limit/],
    ];
    try {
      for (const [args, message] of cases) {
        const run = exits(await relabelCli(['fleet', 'docs', 'reach', ...args], env), 2);
        assert.match(run.stderr, message, args.join(' '));
        assert.equal(run.stdout, '', args.join(' '));
      }
    } finally {
      rmSync(notGit, { recursive: true, force: true });
    }
    assert.equal(existsSync(join(root, 'never')), false);
  });
});
