/**
 * The applied-run record: which update run, applying which revision of
 * which site, last wrote a Node, and the node set the node was written as
 * a member of, kept on the Node itself in the {@link APPLIED_ANNOTATION}
 * annotation as `revision=<revision>,run=<run>[,site=<site>][,set=<set>]`.
 * A run whose write landed but whose completion was lost (worker killed,
 * Temporal restarted) finds its own record on the node and knows the write
 * was its own; drift tells this site's nodes from another site's by the
 * site, and a member that moved between sets by the set.
 *
 * Site and set names are any non-empty text, so they are written
 * percent-encoded (`encodeURIComponent`: no `,` or `=` is left in them).
 * Records written before the site and set were kept (`revision=5,run=17`)
 * still read, without them.
 */
import { APPLIED_ANNOTATION } from './constants.ts';

/** A run and the revision it applies (both positive integers), and, when known, the site and the node set it wrote the node as. */
export type AppliedRun = { revision: number; run: number; site?: string; set?: string };

/** Longest encoded site or set name a record keeps: a longer set is left out, a longer site makes the record site-less. */
export const MAX_RECORD_NAME = 253;

/**
 * The longest value {@link formatAppliedRun} writes: a revision and a run,
 * each a safe integer of at most 16 digits, and a site and a set of at most
 * {@link MAX_RECORD_NAME} characters each (ASCII once encoded, so as many
 * bytes).
 */
export const APPLIED_RECORD_MAX_BYTES = 'revision=,run=,site=,set='.length + 2 * String(Number.MAX_SAFE_INTEGER).length + 2 * MAX_RECORD_NAME;

const FORMAT = /^revision=([1-9][0-9]{0,15}),run=([1-9][0-9]{0,15})(?:,site=([^,=]{1,253}))?(?:,set=([^,=]{1,253}))?$/;

function encoded(name: string | undefined): string | undefined {
  if (name === undefined || name === '') return undefined;
  const text = encodeURIComponent(name);
  return text.length <= MAX_RECORD_NAME ? text : undefined;
}

function decoded(text: string | undefined): string | null | undefined {
  if (text === undefined) return undefined;
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

/** The annotation value naming `applied`: `revision=5,run=17,site=seaworthy,set=workers`. */
export function formatAppliedRun(applied: AppliedRun): string {
  const site = encoded(applied.site);
  const set = encoded(applied.set);
  return `revision=${applied.revision},run=${applied.run}${site ? `,site=${site}` : ''}${set ? `,set=${set}` : ''}`;
}

/**
 * The run and revision (and site and set, when written) a Node's
 * annotations name, or null when there is no record or it is not exactly
 * in the form {@link formatAppliedRun} writes (a hand-edited value is
 * never guessed at).
 */
export function readAppliedRun(annotations: Readonly<Record<string, string>>): AppliedRun | null {
  const raw = Object.hasOwn(annotations, APPLIED_ANNOTATION) ? annotations[APPLIED_ANNOTATION] : undefined;
  const match = raw === undefined ? null : FORMAT.exec(raw);
  if (!match) return null;
  const record: AppliedRun = { revision: Number(match[1]), run: Number(match[2]) };
  if (!Number.isSafeInteger(record.revision) || !Number.isSafeInteger(record.run)) return null;
  const site = decoded(match[3]);
  const set = decoded(match[4]);
  if (site === null || set === null) return null;
  if (site !== undefined) record.site = site;
  if (set !== undefined) record.set = set;
  return record;
}

/** Whether a Node's annotations say that `applied` (this run, this revision) wrote it. */
export function isAppliedBy(annotations: Readonly<Record<string, string>>, applied: AppliedRun): boolean {
  const record = readAppliedRun(annotations);
  return record !== null && record.run === applied.run && record.revision === applied.revision;
}

/**
 * Whether a record names `site`: one that names a site must name this one;
 * a record from before sites were kept counts as this site's only when
 * `siteless` says so (the cluster holds no other site's records).
 */
export function isSiteRecord(record: AppliedRun, site: string, siteless: boolean): boolean {
  return record.site === undefined ? siteless : record.site === site;
}
