/**
 * The applied-run record: which update run, applying which revision, last
 * wrote a Node, kept on the Node itself in the {@link APPLIED_ANNOTATION}
 * annotation as `revision=<revision>,run=<run>`. A run whose write landed
 * but whose completion was lost (worker killed, Temporal restarted) finds
 * its own record on the node and knows the write was its own.
 */
import { APPLIED_ANNOTATION } from './constants.ts';

/** A run and the revision it applies; both positive integers. */
export type AppliedRun = { revision: number; run: number };

const FORMAT = /^revision=([1-9][0-9]{0,15}),run=([1-9][0-9]{0,15})$/;

/** The annotation value naming `applied`: `revision=5,run=17`. */
export function formatAppliedRun(applied: AppliedRun): string {
  return `revision=${applied.revision},run=${applied.run}`;
}

/**
 * The run and revision a Node's annotations name, or null when there is no
 * record or it is not exactly in the form {@link formatAppliedRun} writes
 * (a hand-edited value is never guessed at).
 */
export function readAppliedRun(annotations: Readonly<Record<string, string>>): AppliedRun | null {
  const raw = Object.hasOwn(annotations, APPLIED_ANNOTATION) ? annotations[APPLIED_ANNOTATION] : undefined;
  const match = raw === undefined ? null : FORMAT.exec(raw);
  if (!match) return null;
  const record = { revision: Number(match[1]), run: Number(match[2]) };
  return Number.isSafeInteger(record.revision) && Number.isSafeInteger(record.run) ? record : null;
}

/** Whether a Node's annotations say that `applied` (this run, this revision) wrote it. */
export function isAppliedBy(annotations: Readonly<Record<string, string>>, applied: AppliedRun): boolean {
  const record = readAppliedRun(annotations);
  return record !== null && record.run === applied.run && record.revision === applied.revision;
}
