/**
 * Who started an update run and how: the audit trail kept with each run in
 * the revision store, in the workflow's input and memo, and shown by
 * `relabel runs` and the API's actions. Pure.
 */
import { clip } from './text.ts';

/** How a run was started: a closed set. */
export const StartedVia = {
  /** `relabel update-labels` on a command line. */
  cli: 'cli',
  /** The HTTP API (a Shipyard action or a Drydock task). */
  api: 'api',
  /** A Temporal Schedule. */
  schedule: 'schedule',
  /** `relabel retry`: a run over the failed nodes of an earlier one. */
  retry: 'retry',
  /** A drift detection healing drifted nodes: `by` says what started the detection (see {@link healAudit}). */
  heal: 'heal',
  /** The join watcher: nodes that joined the cluster, by `join:<watcher workflow ID>`. */
  join: 'join',
  /** A release of nodes that left management (`relabel release`, or a drift detection under `orphans: release`). */
  release: 'release',
  /** A fleet rollout: the site's run started as its child, by `fleet:<rollout workflow ID>` unless the rollout names who. */
  fleet: 'fleet',
} as const;
/** One of the {@link StartedVia} strings. */
export type StartedVia = (typeof StartedVia)[keyof typeof StartedVia];

/** Longest `by` kept (an API token's name, an OS user name, a schedule ID). */
export const MAX_STARTED_BY = 128;

/** Who started a run and how: one small object, bounded whatever it holds. */
export interface RunAudit {
  /** The API token's name, the OS user of the CLI, the schedule's ID, or what started a healing detection; at most {@link MAX_STARTED_BY} characters. */
  by: string;
  via: StartedVia;
}

const VIAS: ReadonlySet<string> = new Set(Object.values(StartedVia));

/** Whether `value` is one of the {@link StartedVia} strings. */
export function isStartedVia(value: unknown): value is StartedVia {
  return typeof value === 'string' && VIAS.has(value);
}

/**
 * The audit record of a run started by `by` through `via`: `by` with
 * control characters replaced by spaces, trimmed and clipped to
 * {@link MAX_STARTED_BY}; `unknown` when that leaves nothing.
 */
export function runAudit(by: string, via: StartedVia): RunAudit {
  const clean = by.replace(/[\u0000-\u001f\u007f]/g, ' ').trim();
  return { by: clean === '' ? 'unknown' : clip(clean, MAX_STARTED_BY), via };
}

/** The audit record from a memo or an input that may hold one; undefined when it holds none or a malformed one. */
export function auditFrom(value: unknown): RunAudit | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { by, via } = value as { by?: unknown; via?: unknown };
  return typeof by === 'string' && isStartedVia(via) ? runAudit(by, via) : undefined;
}

/**
 * The audit record of a heal run started by the drift detection
 * `workflowId`, which `detection` started (its input's audit, else the
 * Schedule that started it): via `heal`, by `schedule:<schedule ID>` for a
 * Schedule, the person (OS user, token name) for anyone else, and
 * `workflow:<workflowId>` when the detection says nothing of who started it.
 */
export function healAudit(detection: RunAudit | undefined, workflowId: string): RunAudit {
  if (detection === undefined) return runAudit(`workflow:${workflowId}`, StartedVia.heal);
  return runAudit(detection.via === StartedVia.schedule ? `schedule:${detection.by}` : detection.by, StartedVia.heal);
}
