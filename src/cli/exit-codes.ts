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
 * The one table. Failure types not listed here give 1 when they abort a
 * command, and 5 when they are why a run failed. Per-node failure types
 * (NodeNotFound, Forbidden, …) never abort a command: they make a run
 * partial_success or failure.
 */
export const EXIT_CODES: readonly ExitCodeRow[] = [
  { code: ExitCode.ok, meaning: 'done; a run finished with status success (or, not waited for, started or still running)', types: [], runStatus: RunStatus.success },
  { code: ExitCode.unexpected, meaning: 'unexpected error (a bug, or a failure relabel does not know)', types: [] },
  {
    code: ExitCode.invalidInput,
    meaning: 'usage error or invalid input; nothing was stored or started',
    types: [
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
    types: [
      FailureType.NoCommittedRevision,
      FailureType.NoSiteActionRevision,
      FailureType.RevisionNotFound,
      FailureType.RunInProgress,
      'RunNotFound',
      'EmptyBuffer',
      'NothingToRetry',
      'NotRetryable',
      'NotRunning',
      'SchemaVersion',
    ],
  },
  { code: ExitCode.partialSuccess, meaning: 'the run finished with status partial_success: some nodes failed (see the table)', types: [], runStatus: RunStatus.partialSuccess },
  { code: ExitCode.failure, meaning: 'the run finished with status failure, or failed, was cancelled, terminated or timed out', types: [], runStatus: RunStatus.failure },
  { code: ExitCode.unavailable, meaning: 'Temporal could not be reached; nothing was started', types: [FailureType.Unavailable] },
];

const byType = new Map<string, ExitCode>(EXIT_CODES.flatMap((row) => row.types.map((t) => [t, row.code] as const)));
const byRunStatus = new Map<string, ExitCode>(EXIT_CODES.flatMap((row) => (row.runStatus ? [[row.runStatus, row.code] as const] : [])));

/** Exit code of a command aborted by an error of failure type `type`. */
export function exitCodeForType(type: string | undefined): ExitCode {
  return (type !== undefined ? byType.get(type) : undefined) ?? ExitCode.unexpected;
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
