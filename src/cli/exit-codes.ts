/**
 * The CLI's exit codes: one table keyed by failure type (and by how a run
 * ended), from which both the lookups and the help text are derived, so the
 * documentation cannot drift from the behaviour.
 */
import { FailureType, isFailureType } from '../core/plan/failure-types.ts';
import type { RunStatusReport } from '../facade/runs/runs.ts';
import { RunStatus } from '../contracts/messages.ts';

/** Failure type the CLI itself raises for bad arguments and unreadable paths. */
export const USAGE_ERROR = FailureType.Usage;

/** The exit codes, by meaning. */
export const ExitCode = {
  ok: 0,
  unexpected: 1,
  invalidInput: 2,
  rejected: 3,
  partialSuccess: 4,
  failure: 5,
  unavailable: 6,
  aborted: 7,
} as const;

/** One of the {@link ExitCode} values. */
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** One row of the table: a code, what it means, and the failure types (or the run status) that give it. */
export interface ExitCodeRow {
  code: ExitCode;
  meaning: string;
  /** Failure types mapped to this code. */
  types: readonly string[];
  /** The final run status mapped to this code. */
  runStatus?: RunStatus;
}

/**
 * THE table: failure type → exit code, one entry per type (the typecheck
 * refuses a missing one). Per-node failure types (NodeNotFound, Forbidden, …)
 * never abort a command: they make a run partial_success or failure, and
 * map to 5 when one is why a run failed as a whole.
 */
export const EXIT_CODE_OF_FAILURE = {
  [FailureType.Usage]: ExitCode.invalidInput,
  [FailureType.InvalidTargets]: ExitCode.invalidInput,
  [FailureType.InvalidNodeFilter]: ExitCode.invalidInput,
  [FailureType.DocumentValidationFailed]: ExitCode.invalidInput,
  [FailureType.Invalid]: ExitCode.invalidInput,
  [FailureType.InvalidName]: ExitCode.invalidInput,
  [FailureType.InvalidArgument]: ExitCode.invalidInput,
  [FailureType.InvalidRequest]: ExitCode.invalidInput,
  [FailureType.InvalidJson]: ExitCode.invalidInput,
  [FailureType.UnknownAction]: ExitCode.invalidInput,
  [FailureType.InvalidDesignRef]: ExitCode.invalidInput,
  [FailureType.NoNodesMatched]: ExitCode.invalidInput,
  [FailureType.PayloadTooLarge]: ExitCode.invalidInput,
  [FailureType.UnsupportedMediaType]: ExitCode.invalidInput,
  [FailureType.HeaderTooLarge]: ExitCode.invalidInput,
  [FailureType.MethodNotAllowed]: ExitCode.invalidInput,
  [FailureType.NoCommittedRevision]: ExitCode.rejected,
  [FailureType.NoSiteActionRevision]: ExitCode.rejected,
  [FailureType.RevisionNotFound]: ExitCode.rejected,
  [FailureType.RunInProgress]: ExitCode.rejected,
  [FailureType.RunNotFound]: ExitCode.rejected,
  [FailureType.EmptyBuffer]: ExitCode.rejected,
  [FailureType.NothingToRetry]: ExitCode.rejected,
  [FailureType.NotRetryable]: ExitCode.rejected,
  [FailureType.NotRunning]: ExitCode.rejected,
  [FailureType.MassRemovalRefused]: ExitCode.rejected,
  [FailureType.SchemaVersion]: ExitCode.rejected,
  [FailureType.NotFound]: ExitCode.rejected,
  [FailureType.ActionNotFound]: ExitCode.rejected,
  [FailureType.BucketNotFound]: ExitCode.rejected,
  [FailureType.TagNotFound]: ExitCode.rejected,
  [FailureType.NodeNotInDesign]: ExitCode.failure,
  [FailureType.NodeInTwoSets]: ExitCode.failure,
  [FailureType.NodeNotFound]: ExitCode.failure,
  [FailureType.Forbidden]: ExitCode.failure,
  [FailureType.Unauthorized]: ExitCode.failure,
  [FailureType.Conflict]: ExitCode.failure,
  [FailureType.VerificationFailed]: ExitCode.failure,
  [FailureType.TooManyConflicts]: ExitCode.failure,
  [FailureType.NotStarted]: ExitCode.failure,
  [FailureType.Unavailable]: ExitCode.unavailable,
  [FailureType.Closed]: ExitCode.unavailable,
  [FailureType.InternalError]: ExitCode.unexpected,
} as const satisfies Record<FailureType, ExitCode>;

const typesOf = (code: ExitCode): FailureType[] =>
  (Object.entries(EXIT_CODE_OF_FAILURE) as [FailureType, ExitCode][]).filter(([, c]) => c === code).map(([t]) => t);

/** The codes with their meanings and the failure types (or the run status) that give each, for the help text. */
export const EXIT_CODES: readonly ExitCodeRow[] = [
  {
    code: ExitCode.ok,
    meaning: 'done; a run finished with status success (or, not waited for, started or still running)',
    types: [],
    runStatus: RunStatus.success,
  },
  { code: ExitCode.unexpected, meaning: 'unexpected error (a bug, or a failure relabel does not know)', types: typesOf(ExitCode.unexpected) },
  { code: ExitCode.invalidInput, meaning: 'usage error or invalid input; nothing was stored or started', types: typesOf(ExitCode.invalidInput) },
  { code: ExitCode.rejected, meaning: 'rejected by the current state; nothing was stored or started', types: typesOf(ExitCode.rejected) },
  {
    code: ExitCode.partialSuccess,
    meaning: 'the run finished with status partial_success: some nodes failed (see the table)',
    types: [],
    runStatus: RunStatus.partialSuccess,
  },
  {
    code: ExitCode.failure,
    meaning: 'the run finished with status failure, or failed, was cancelled, terminated or timed out',
    types: typesOf(ExitCode.failure),
    runStatus: RunStatus.failure,
  },
  { code: ExitCode.unavailable, meaning: 'Temporal or the store could not be reached; nothing was started', types: typesOf(ExitCode.unavailable) },
  { code: ExitCode.aborted, meaning: 'the run was aborted at a gate of its waves (relabel abort): later waves were not started', types: [] },
];

const byRunStatus = new Map<string, ExitCode>(EXIT_CODES.flatMap((row) => (row.runStatus ? [[row.runStatus, row.code] as const] : [])));

/** Exit code of a command aborted by an error of failure type `type`. */
export function exitCodeForType(type: string | undefined): ExitCode {
  return isFailureType(type) ? EXIT_CODE_OF_FAILURE[type] : ExitCode.unexpected;
}

/**
 * Exit code reporting a run: 0 while it runs; 7 once aborted at a gate
 * (whatever its status, which says partial or failure because nodes were
 * not started, not because they failed); else by its final status once
 * completed; when it failed as a whole, by its failure type if that is a
 * rejection (the workflow repeats the start checks), else 5.
 */
export function exitCodeForRun(report: RunStatusReport): ExitCode {
  switch (report.execution) {
    case 'RUNNING':
      return ExitCode.ok;
    case 'COMPLETED':
      if (report.result?.aborted) return ExitCode.aborted;
      return (report.result && byRunStatus.get(report.result.status)) ?? ExitCode.unexpected;
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
    let line = '';
    for (const type of row.types) {
      if (line !== '' && line.length + type.length > 70) {
        lines.push(`     ${line},`);
        line = '';
      }
      line = line === '' ? type : `${line}, ${type}`;
    }
    if (line !== '') lines.push(`     ${line}`);
  }
  return lines.join('\n');
}
