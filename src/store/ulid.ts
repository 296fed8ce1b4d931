/**
 * ULIDs (Universally Unique Lexicographically Sortable Identifiers), the ids
 * Shipyard gives its actions: 26 characters of Crockford base32, a 48-bit
 * millisecond timestamp (10 characters) then 80 random bits (16 characters).
 * Sorting the strings sorts by creation time.
 */
import { randomBytes } from 'node:crypto';

/** Crockford's base32 alphabet: digits and capitals without I, L, O and U. */
export const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A ULID: exactly 26 characters of {@link CROCKFORD}, the first at most 7 (48 time bits). */
export const ULID_PATTERN = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

const TIME_MAX = 2 ** 48 - 1;
const RANDOM_MAX = (1n << 80n) - 1n;

/** `value` as `length` characters of Crockford base32, most significant first (higher bits dropped). */
export function encodeCrockford(value: bigint, length: number): string {
  let text = '';
  for (let i = 0; i < length; i++) {
    text = CROCKFORD[Number(value & 31n)] + text;
    value >>= 5n;
  }
  return text;
}

/** Whether `text` is a ULID (see {@link ULID_PATTERN}). */
export function isUlid(text: unknown): text is string {
  return typeof text === 'string' && ULID_PATTERN.test(text);
}

/** The creation time a ULID carries, in epoch milliseconds. Throws on a string that is not a ULID. */
export function ulidTime(id: string): number {
  if (!isUlid(id)) throw new Error(`not a ULID: ${JSON.stringify(String(id).slice(0, 40))}`);
  let ms = 0;
  for (const c of id.slice(0, 10)) ms = ms * 32 + CROCKFORD.indexOf(c);
  return ms;
}

/**
 * A monotonic ULID generator. Each call returns a ULID greater than every
 * earlier one of this generator: within one millisecond (or when the clock
 * steps back) the random part of the previous id is incremented instead of
 * drawn anew. `now` and `random` are for tests; throws when the time is out
 * of the 48-bit range or 2^80 ids were made in one millisecond.
 */
export function monotonicUlid(now: () => number = Date.now, random: () => bigint = () => BigInt(`0x${randomBytes(10).toString('hex')}`)): () => string {
  let lastTime = -1;
  let lastRandom = 0n;
  return () => {
    const time = now();
    if (!Number.isInteger(time) || time < 0 || time > TIME_MAX) throw new Error(`ULID time out of range: ${time}`);
    if (time <= lastTime) {
      if (lastRandom === RANDOM_MAX) throw new Error('ULID random part exhausted within one millisecond');
      lastRandom += 1n;
    } else {
      lastTime = time;
      lastRandom = random() & RANDOM_MAX;
    }
    return encodeCrockford(BigInt(lastTime), 10) + encodeCrockford(lastRandom, 16);
  };
}

/**
 * The least ULID greater than `id`: its 80-bit random part plus one (the
 * time part kept). Throws when `id` is not a ULID or its random part is full.
 */
export function nextUlid(id: string): string {
  if (!isUlid(id)) throw new Error(`not a ULID: ${JSON.stringify(String(id).slice(0, 40))}`);
  let random = 0n;
  for (const c of id.slice(10)) random = random * 32n + BigInt(CROCKFORD.indexOf(c));
  if (random === RANDOM_MAX) throw new Error('ULID random part exhausted within one millisecond');
  return id.slice(0, 10) + encodeCrockford(random + 1n, 16);
}

/** The process's ULID generator. */
export const newUlid = monotonicUlid();
