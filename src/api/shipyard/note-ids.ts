/**
 * Ids of an action's notes and validations: 26 characters of Crockford
 * base32 as Shipyard's ULIDs are (its CLI checks 26 letters and digits), but
 * derived from what they name instead of stored: a kind letter, the run
 * number (12 characters) and a position (13 characters). So `GET
 * notedetails/{id}` finds a failed node's note from its id alone, for any
 * number of failures, with nothing kept per note.
 */
import { CROCKFORD, encodeCrockford } from '../../store/ulid.ts';

/** What a note or validation id names. */
export const NoteKind = {
  /** A note on the action itself (its revision, why it failed, how many failures are not shown); `seq` numbers it. */
  action: 'A',
  /** A failed node's note; `seq` is the node's position in the run. */
  node: 'F',
  /** A note on one step; `seq` is the step's index. */
  step: 'S',
  /** A validation of the action; `seq` numbers it. */
  validation: 'V',
} as const;
/** One of the {@link NoteKind} letters. */
export type NoteKind = (typeof NoteKind)[keyof typeof NoteKind];

/** What a note id names. */
export type NoteRef = { kind: NoteKind; run: number; seq: number };

const KINDS = new Set<string>(Object.values(NoteKind));
const RUN_DIGITS = 12;
const SEQ_DIGITS = 13;

function parse(text: string): number | null {
  let n = 0n;
  for (const c of text) {
    const v = CROCKFORD.indexOf(c);
    if (v < 0) return null;
    n = n * 32n + BigInt(v);
  }
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : null;
}

/** The id of what `ref` names. Throws on a run or seq that is not a safe non-negative whole number. */
export function noteId(ref: NoteRef): string {
  for (const [name, v] of [
    ['run', ref.run],
    ['seq', ref.seq],
  ] as const) {
    if (!Number.isSafeInteger(v) || v < 0) throw new Error(`note ${name} must be a non-negative whole number, got ${v}`);
  }
  return ref.kind + encodeCrockford(BigInt(ref.run), RUN_DIGITS) + encodeCrockford(BigInt(ref.seq), SEQ_DIGITS);
}

/** What a note id names, or null for a string {@link noteId} does not produce. */
export function parseNoteId(id: string): NoteRef | null {
  if (typeof id !== 'string' || id.length !== 1 + RUN_DIGITS + SEQ_DIGITS || !KINDS.has(id[0] ?? '')) return null;
  const run = parse(id.slice(1, 1 + RUN_DIGITS));
  const seq = parse(id.slice(1 + RUN_DIGITS));
  if (run === null || seq === null || run < 1) return null;
  const ref = { kind: id[0] as NoteKind, run, seq };
  // Canonical form only, so one note has one id.
  return noteId(ref) === id ? ref : null;
}
