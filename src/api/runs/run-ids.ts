/**
 * Action and task ids: one update run named in one URL-safe token.
 *
 * An id is `base64url(workflowId + "|" + runId)` without padding, e.g. the
 * run `update-labels/atl-lab1` / `0199…` is `dXBkYXRlLWxhYmVscy9hdGwtbGFiMXwwMTk5…`.
 * The run id pins one execution: a site's runs share a workflow id. A Shipyard
 * action and a Drydock task started for the same run have the same id.
 * Only ids naming update runs decode, so the API can never be used to read
 * or cancel any other workflow of the namespace.
 */
import { RUN_ID_PREFIX } from '../../contracts/messages.ts';

/** A run as Temporal names it. */
export type RunKey = { workflowId: string; runId: string };

const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The id of a run. */
export function encodeRunId(run: RunKey): string {
  return Buffer.from(`${run.workflowId}|${run.runId}`, 'utf8').toString('base64url');
}

/**
 * The run an id names, or null when the id is not one {@link encodeRunId}
 * produced for an update run (not canonical base64url, no separator, not a
 * UUID run id, or a workflow id outside `update-labels/`).
 */
export function decodeRunId(id: string): RunKey | null {
  if (!/^[A-Za-z0-9_-]+$/.test(id)) return null;
  const text = Buffer.from(id, 'base64url').toString('utf8');
  // Canonical form only: rejects ids that decode leniently (stray bits, invalid UTF-8).
  if (Buffer.from(text, 'utf8').toString('base64url') !== id) return null;
  const bar = text.lastIndexOf('|');
  if (bar < 0) return null;
  const workflowId = text.slice(0, bar);
  const runId = text.slice(bar + 1);
  if (!RUN_ID.test(runId) || !workflowId.startsWith(`${RUN_ID_PREFIX}/`) || workflowId.length <= RUN_ID_PREFIX.length + 1) return null;
  return { workflowId, runId };
}
