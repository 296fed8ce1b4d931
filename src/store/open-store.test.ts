import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { defaultDataDir, defaultStoreUrl, openStore, parseStoreUrl } from './open-store.ts';
import { isStoreError } from './store-error.ts';

const dir = mkdtempSync(join(tmpdir(), 'relabel-open-store-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('parseStoreUrl', () => {
  const cases: [string, ReturnType<typeof parseStoreUrl>][] = [
    ['sqlite:/var/lib/relabel/r.db', { kind: 'sqlite', path: '/var/lib/relabel/r.db' }],
    ['sqlite:///var/lib/relabel/r.db', { kind: 'sqlite', path: '/var/lib/relabel/r.db' }],
    ['sqlite:rel/r.db', { kind: 'sqlite', path: resolve('rel/r.db') }],
    ['sqlite::memory:', { kind: 'sqlite', path: ':memory:' }],
    ['/plain/path.db', { kind: 'sqlite', path: '/plain/path.db' }],
    ['plain.db', { kind: 'sqlite', path: resolve('plain.db') }],
    ['C:\\data\\r.db', { kind: 'sqlite', path: resolve('C:\\data\\r.db') }],
    ['postgres://u:p@db:5432/relabel', { kind: 'postgres', connectionString: 'postgres://u:p@db:5432/relabel' }],
    ['postgres://db/x?schema=s', { kind: 'postgres', connectionString: 'postgres://db/x', schema: 's' }],
    [
      'postgresql://db/relabel?schema=site_a&sslmode=require',
      { kind: 'postgres', connectionString: 'postgresql://db/relabel?sslmode=require', schema: 'site_a' },
    ],
  ];
  for (const [url, expected] of cases) {
    test(url, () => assert.deepEqual(parseStoreUrl(url), expected));
  }

  test('unsupported schemes and empty URLs are InvalidArgument; passwords never appear', () => {
    for (const [url, message] of [
      ['', /store URL is empty/],
      ['sqlite:', /names no file/],
      ['mysql://u:secret@db/x', /unsupported store URL scheme 'mysql:' in mysql:\/\/u:\*\*\*@db\/x; use sqlite:<path> or postgres:\/\/…/],
    ] as const) {
      assert.throws(
        () => parseStoreUrl(url),
        (error: unknown) => isStoreError(error, 'InvalidArgument') && message.test(error.message) && !error.message.includes('secret'),
      );
    }
  });
});

describe('default location', () => {
  test('RELABEL_DATA_DIR wins, then XDG_DATA_HOME, then ~/.local/share/relabel', () => {
    assert.equal(defaultDataDir({ RELABEL_DATA_DIR: '/srv/relabel', XDG_DATA_HOME: '/x' }), '/srv/relabel');
    assert.equal(defaultDataDir({ RELABEL_DATA_DIR: 'rel' }), resolve('rel'));
    assert.equal(defaultDataDir({ XDG_DATA_HOME: '/xdg' }), '/xdg/relabel');
    assert.equal(defaultDataDir({ XDG_DATA_HOME: 'not-absolute' }), join(homedir(), '.local/share/relabel'));
    assert.equal(defaultDataDir({}), join(homedir(), '.local/share/relabel'));
    assert.equal(defaultStoreUrl({ RELABEL_DATA_DIR: '/srv/relabel' }), 'sqlite:/srv/relabel/revisions.db');
  });
});

describe('openStore', () => {
  test('a plain path opens a SQLite store, creating its directories', async () => {
    const path = join(dir, 'deep', 'er', 'r.db');
    const store = await openStore(path);
    await store.revisions.stage('site', [{ source: 'n.yaml', text: 'n' }]);
    await store.revisions.commit();
    await store.close();
    assert.ok(existsSync(path));
    const again = await openStore(`sqlite:${path}`);
    assert.equal((await again.revisions.latest())?.id, 1);
    await again.close();
  });

  test('a bad URL rejects (never throws synchronously)', async () => {
    const pending = openStore('ftp://x');
    await assert.rejects(pending, (error: unknown) => isStoreError(error, 'InvalidArgument'));
  });
});
