/**
 * Input checks shared by both backends, run before any database work so an
 * invalid call writes nothing. Each check throws a {@link StoreError} whose
 * message names the offending value and where it came from.
 */
import { BUCKET_NAME_PATTERN, MAX_NAME_LENGTH, TAG_NAME_PATTERN, type SourceFile, type TagData } from './revisions/revision-store.ts';
import { StoreError, StoreErrorCode } from './store-error.ts';
import { compareText } from './revisions/revision-diff.ts';

/** Longest accepted source file name. */
export const MAX_SOURCE_LENGTH = 1024;

// Control characters make names unprintable in error messages and NUL cannot be
// stored by PostgreSQL at all.
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

function assertName(kind: string, name: unknown, pattern: RegExp): asserts name is string {
  if (typeof name !== 'string') {
    throw new StoreError(StoreErrorCode.InvalidName, `${kind} name must be a string, got ${typeof name}`);
  }
  if (name.length > MAX_NAME_LENGTH || !pattern.test(name)) {
    throw new StoreError(
      StoreErrorCode.InvalidName,
      `invalid ${kind} name ${JSON.stringify(name)}: must match ${pattern.source} ` + `and be at most ${MAX_NAME_LENGTH} characters`,
    );
  }
}

/** Throws InvalidName unless `name` is a valid bucket name. */
export function assertBucketName(name: unknown): asserts name is string {
  assertName('bucket', name, BUCKET_NAME_PATTERN);
}

/** Throws InvalidName unless `name` is a valid tag name. */
export function assertTagName(name: unknown): asserts name is string {
  assertName('tag', name, TAG_NAME_PATTERN);
}

/**
 * Throws InvalidArgument unless `id` is a positive integer (or 0 when
 * `allowZero`, meaning "before the first revision").
 */
export function assertRevisionId(id: unknown, allowZero = false): asserts id is number {
  const min = allowZero ? 0 : 1;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < min) {
    throw new StoreError(StoreErrorCode.InvalidArgument, `invalid revision id ${String(id)}: must be an integer >= ${min}`);
  }
}

/**
 * Validate the files staged for `bucket` and return them sorted by source.
 * Source names: non-empty, at most {@link MAX_SOURCE_LENGTH} characters, no
 * control characters (InvalidName). Duplicate sources, non-string text or text
 * containing NUL: InvalidArgument.
 */
export function validateFiles(bucket: string, files: unknown): SourceFile[] {
  if (!Array.isArray(files)) {
    throw new StoreError(StoreErrorCode.InvalidArgument, `files for bucket '${bucket}' must be an array`);
  }
  const seen = new Set<string>();
  const out: SourceFile[] = [];
  files.forEach((file: unknown, index) => {
    const where = `bucket '${bucket}', file #${index}`;
    if (typeof file !== 'object' || file === null) {
      throw new StoreError(StoreErrorCode.InvalidArgument, `${where}: expected {source, text}`);
    }
    const { source, text } = file as Record<string, unknown>;
    if (typeof source !== 'string' || source.length === 0) {
      throw new StoreError(StoreErrorCode.InvalidName, `${where}: source must be a non-empty string`);
    }
    if (source.length > MAX_SOURCE_LENGTH || CONTROL_CHARACTER.test(source)) {
      throw new StoreError(
        StoreErrorCode.InvalidName,
        `${where}: invalid source name ${JSON.stringify(source)}: at most ` + `${MAX_SOURCE_LENGTH} characters, no control characters`,
      );
    }
    const at = `bucket '${bucket}', source '${source}'`;
    if (seen.has(source)) {
      throw new StoreError(StoreErrorCode.InvalidArgument, `${at}: staged more than once`);
    }
    seen.add(source);
    if (typeof text !== 'string') {
      throw new StoreError(StoreErrorCode.InvalidArgument, `${at}: text must be a string`);
    }
    const nul = text.indexOf('\u0000');
    if (nul >= 0) {
      throw new StoreError(StoreErrorCode.InvalidArgument, `${at}: text contains a NUL character at offset ${nul}`);
    }
    out.push({ source, text });
  });
  return out.sort((a, b) => compareText(a.source, b.source));
}

/**
 * Check tag data is a plain JSON object and return its JSON text.
 * Throws InvalidArgument for anything else (arrays, class instances, bigint
 * values, cycles). Members JSON has no form for (undefined, functions) are
 * dropped, exactly as `JSON.stringify` does.
 */
export function serializeTagData(tag: string, data: unknown): string {
  if (data === undefined) return '{}';
  const where = `data of tag '${tag}'`;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    throw new StoreError(StoreErrorCode.InvalidArgument, `${where} must be a JSON object`);
  }
  const proto: unknown = Object.getPrototypeOf(data);
  if (proto !== Object.prototype && proto !== null) {
    throw new StoreError(StoreErrorCode.InvalidArgument, `${where} must be a plain object`);
  }
  let json: string;
  try {
    json = JSON.stringify(data);
  } catch (error) {
    throw new StoreError(StoreErrorCode.InvalidArgument, `${where} is not serializable: ${String(error)}`);
  }
  return json;
}

/** Parse tag data stored by {@link serializeTagData}. */
export function parseTagData(json: string): TagData {
  return JSON.parse(json) as TagData;
}

/** Throws InvalidArgument unless `message` is undefined or a string without NUL. */
export function assertMessage(message: unknown): asserts message is string | undefined {
  if (message === undefined) return;
  if (typeof message !== 'string' || message.includes('\u0000')) {
    throw new StoreError(StoreErrorCode.InvalidArgument, 'commit message must be a string without NUL characters');
  }
}

/**
 * Validate the `buckets` option of commit: valid names, no duplicates, and at
 * least one. Returns them sorted.
 */
export function validateBucketList(buckets: unknown): string[] {
  if (!Array.isArray(buckets)) {
    throw new StoreError(StoreErrorCode.InvalidArgument, 'commit buckets must be an array of bucket names');
  }
  for (const bucket of buckets) assertBucketName(bucket);
  const unique = [...new Set<string>(buckets as string[])].sort(compareText);
  if (unique.length === 0) {
    throw new StoreError(StoreErrorCode.EmptyBuffer, 'nothing to commit: the list of buckets to commit is empty');
  }
  return unique;
}
