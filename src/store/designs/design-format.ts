/**
 * The format name of a stored design: a digest of the core's source (the
 * code that validates documents and resolves designs), so a design is read
 * back only by the code that resolved it. Any change to that code, an
 * upgrade included, names a new format, and the first process to need the
 * design validates the documents again and stores it anew.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const CORE = new URL('../../core/', import.meta.url).pathname;

/** How a stored design is encoded (see `encodeDesign`): part of the format, so a change of encoding is a new format too. */
const ENCODING = 'zstd-shared-json-base64';

let format: string | undefined;

/** `design-` and 24 hex digits of the SHA-256 of the encoding's name and every core source file, by path. */
export function designFormat(): string {
  if (format !== undefined) return format;
  const files = readdirSync(CORE, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .sort();
  const hash = createHash('sha256').update(`${ENCODING}\0`);
  for (const file of files)
    hash
      .update(`${file}\0`)
      .update(readFileSync(join(CORE, file)))
      .update('\0');
  format = `design-${hash.digest('hex').slice(0, 24)}`;
  return format;
}
