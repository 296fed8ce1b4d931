import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import pg from 'pg';
import { findPostgresBin, MissingPostgresError, startPostgres, POSTGRES_USER } from './postgres.ts';
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
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('Uid:'));
  return Number(line?.split(/\s+/)[1]);
}

describe('startPostgres', () => {
  test('starts a loopback server with trust auth, socket in the data dir; stop leaves no process', async () => {
    const dir = tempDir();
    const server = await startPostgres({ dir });
    try {
      assert.match(server.url, /^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres$/);
      const [row] = await query(server.url, `SELECT current_user AS who, current_setting('listen_addresses') AS listen`);
      assert.deepEqual(row, { who: 'postgres', listen: '127.0.0.1' });
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
      await query(first.url, 'CREATE TABLE kept (v text); INSERT INTO kept VALUES (\'still here\')');
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

describe('findPostgresBin', () => {
  test('missing binaries are a MissingPostgresError saying where it looked and what to install', () => {
    assert.throws(
      () => findPostgresBin({ PATH: '' }, join(root, 'no-such-root')),
      (error: unknown) =>
        error instanceof MissingPostgresError &&
        /not found in RELABEL_PG_BIN, .*no-such-root\/\*\/bin or PATH/.test(error.message) &&
        /apt-get install postgresql/.test(error.message),
    );
  });

  test('RELABEL_PG_BIN wins, then the Debian directory, then PATH', () => {
    const found = findPostgresBin({ PATH: '' });
    assert.ok(existsSync(join(found, 'initdb')));
    assert.equal(findPostgresBin({ RELABEL_PG_BIN: found, PATH: '' }, join(root, 'none')), found);
    assert.equal(findPostgresBin({ PATH: `/nonexistent:${found}` }, join(root, 'none')), found);
  });
});
