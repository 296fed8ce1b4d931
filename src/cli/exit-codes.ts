/**
 * The CLI's exit codes: one table keyed by failure type (and by how a run
 * ended), from which both the lookups and the help text are derived, so the
 * documentation cannot drift from the behaviour.
 */
import { FailureType } from '../core/failure-types.ts';
import type { RunStatusReport } from '../facade/runs.ts';
import { RunStatus } from '../workflows/messages.ts';

/** Failure type the CLI itself raises for bad arguments and unreadable paths. */
export const USAGE_ERROR = 'Usage';

/** The exit codes, by meaning. */
export const ExitCode = {
  ok: 0,
  unexpected: 1,
  invalidInput: 2,
  rejected: 3,
  partialSuccess: 4,
  failure: 5,
  unavailable: 6,
} as const;

/** One of the {@link ExitCode} values. */
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** One row of the table: a code, what it means, and the types that give it. */
export interface ExitCodeRow {
  code: ExitCode;
  meaning: string;
  /** Failure types (or run statuses) mapped to this code. */
  keys: readonly string[];
}

/**
 * The one table. Failure types not listed here give 1 when they abort a
 * command, and 5 when they are why a run failed. Per-node failure types
 * (NodeNotFound, Forbidden, …) never abort a command: they make a run
 * partial_success or failure.
 */
export const EXIT_CODES: readonly ExitCodeRow[] = [
  { code: ExitCode.ok, meaning: 'done; for a run: it finished with status success (or, without --wait, it started / is still running)', keys: [RunStatus.success] },
  { code: ExitCode.unexpected, meaning: 'unexpected error (a bug, or a failure relabel does not know)', keys: [] },
  {
    code: ExitCode.invalidInput,
    meaning: 'usage error or invalid input; nothing was stored or started',
    keys: [
      USAGE_ERROR,
      FailureType.InvalidTargets,
      FailureType.InvalidNodeFilter,
      FailureType.DocumentValidationFailed,
      FailureType.Invalid,
      'InvalidName',
      'InvalidArgument',
    ],
  },
  {
    code: ExitCode.rejected,
    meaning: 'rejected by the current state; nothing was stored or started',
    keys: [
      FailureType.NoCommittedRevision,
      FailureType.NoSiteActionRevision,
      FailureType.RevisionNotFound,
      FailureType.RunInProgress,
      'RunNotFound',
      'EmptyBuffer',
      'NothingToRetry',
      'NotRetryable',
      'SchemaVersion',
    ],
  },
  { code: ExitCode.partialSuccess, meaning: 'the run finished with status partial_success (some nodes failed; see the table)', keys: [RunStatus.partialSuccess] },
  { code: ExitCode.failure, meaning: 'the run finished with status failure, failed, or was cancelled, terminated or timed out', keys: [RunStatus.failure] },
  { code: ExitCode.unavailable, meaning: 'Temporal could not be reached (nothing was started)', keys: [FailureType.Unavailable] },
];

const byKey = new Map<string, ExitCode>(EXIT_CODES.flatMap((row) => row.keys.map((k) => [k, row.code] as const)));

/** Exit code of a command aborted by an error of failure type `type`. */
export function exitCodeForType(type: string | undefined): ExitCode {
  return (type !== undefined ? byKey.get(type) : undefined) ?? ExitCode.unexpected;
}

/**
 * Exit code reporting a run: 0 while it runs; by its final status once
 * completed; when it failed as a whole, by its failure type if that is a
 * rejection (the workflow repeats the start checks), else 5.
 */
export function exitCodeForRun(report: RunStatusReport): ExitCode {
  switch (report.execution) {
    case 'RUNNING':
      return ExitCode.ok;
    case 'COMPLETED':
      return report.result ? exitCodeForType(report.result.status) : ExitCode.unexpected;
    case 'FAILED': {
      const code = exitCodeForType(report.failure?.type);
      return code === ExitCode.invalidInput || code === ExitCode.rejected ? code : ExitCode.failure;
    }
    default:
      return ExitCode.failure;
  }
}

/** The table as help text. */
export function exitCodeHelp(): string {
  const lines = ['Exit codes:'];
  for (const row of EXIT_CODES) {
    lines.push(`  ${row.code}  ${row.meaning}`);
    if (row.keys.length > 0) lines.push(`       ${row.keys.join(', ')}`);
  }
  return lines.join('\n');
}
