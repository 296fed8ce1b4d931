/**
 * A headless Chromium for the UI tests, in this order:
 *
 * 1. `RELABEL_CHROMIUM`, when set: that executable and no other (missing is
 *    an error, never a fallback), launched with generic headless flags;
 * 2. the build shipped by the `@sparticuz/chromium` dev dependency (Linux
 *    x64 only), unpacked once into the tool cache with its own libraries
 *    (NSS, NSPR, expat), its software GL (SwiftShader) and fonts, and
 *    launched with the flags that build needs, so nothing of the system's
 *    browser or fonts is used.
 */
import { execFile } from 'node:child_process';
import { chmodSync, createReadStream, createWriteStream, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createBrotliDecompress } from 'node:zlib';
import Chromium from '@sparticuz/chromium';
import { toolsDir } from '../stack/tools.ts';

/** What `chromium.launch()` of playwright-core needs. */
export interface HeadlessChromium {
  readonly executablePath: string;
  readonly args: readonly string[];
  /** The browser's environment: ours, plus where the bundled build finds its libraries and fonts. */
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** Flags for a Chromium we did not choose, running as root in a container as readily as on a desktop. */
const GENERIC_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Decompress the file `archive` to `target`. */
async function unbrotli(archive: string, target: string, mode = 0o644): Promise<void> {
  await pipeline(createReadStream(archive), createBrotliDecompress(), createWriteStream(target, { mode }));
}

/**
 * Unpack the brotli tarball `archive` into `dir` with the system's `tar`,
 * through a file: tar stops reading at the archive's end marker, which would
 * cut a pipe short.
 */
async function untarBrotli(archive: string, dir: string): Promise<void> {
  const tarFile = join(dir, `.${basename(archive, '.br')}`);
  await unbrotli(archive, tarFile);
  try {
    await promisify(execFile)('tar', ['-x', '-f', tarFile, '-C', dir]);
  } catch (error) {
    throw new Error(`unpacking ${archive} with tar failed: ${String(error).slice(0, 500)}`);
  } finally {
    rmSync(tarFile, { force: true });
  }
}

/**
 * Unpack the `@sparticuz/chromium` build into `<cache>/chromium-<version>`
 * unless done already; returns that directory. Unpacked aside and renamed
 * into place, so a half-unpacked build is never used.
 */
async function unpackBundled(cache: string): Promise<string> {
  const bin = join(dirname(fileURLToPath(import.meta.resolve('@sparticuz/chromium'))), '..', 'bin');
  const { version } = JSON.parse(readFileSync(join(bin, '..', 'package.json'), 'utf8')) as { version: string };
  const dir = join(cache, `chromium-${version}`);
  if (existsSync(join(dir, 'chromium'))) return dir;
  mkdirSync(cache, { recursive: true });
  const staging = mkdtempSync(`${dir}.`);
  try {
    await Promise.all([
      unbrotli(join(bin, 'chromium.br'), join(staging, 'chromium'), 0o755),
      // SwiftShader's libraries beside the executable, where it loads them; Amazon Linux's NSS, NSPR and expat in lib/.
      ...['swiftshader.tar.br', 'al2023.tar.br', 'fonts.tar.br'].map((archive) => untarBrotli(join(bin, archive), staging)),
    ]);
    // The package's fonts.conf names Lambda's directories; ours names the unpacked fonts only.
    writeFileSync(
      join(staging, 'fonts.conf'),
      `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n  <dir>${join(dir, 'fonts')}</dir>\n  <cachedir>${join(dir, 'fonts-cache')}</cachedir>\n</fontconfig>\n`,
    );
    chmodSync(staging, 0o755);
    renameSync(staging, dir);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(join(dir, 'chromium'))) throw error;
  }
  return dir;
}

/**
 * The Chromium to launch, chosen as this module's description says. Throws
 * when `RELABEL_CHROMIUM` names no file, or when it is unset on a platform
 * the bundled build does not run on (it says to set it).
 */
export async function headlessChromium(env: NodeJS.ProcessEnv = process.env): Promise<HeadlessChromium> {
  const explicit = env.RELABEL_CHROMIUM;
  if (explicit) {
    if (!existsSync(explicit))
      throw new Error(`RELABEL_CHROMIUM=${explicit} does not exist; point it at a Chromium executable, or unset it to use the bundled build`);
    return { executablePath: explicit, args: GENERIC_ARGS, env: { ...env } };
  }
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(
      `the bundled Chromium (@sparticuz/chromium) runs on Linux x64 only, not ${process.platform}-${process.arch}: set RELABEL_CHROMIUM to a Chromium executable`,
    );
  }
  const dir = await unpackBundled(toolsDir(env));
  return {
    executablePath: join(dir, 'chromium'),
    // Its flags, less --single-process: Lambda needs it, but there the browser
    // exits when its last page closes, and a test opens one page after another.
    args: Chromium.args.filter((arg) => arg !== '--single-process'),
    env: { ...env, LD_LIBRARY_PATH: join(dir, 'lib'), FONTCONFIG_FILE: join(dir, 'fonts.conf') },
  };
}
