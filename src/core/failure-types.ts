/**
 * Failure `type` strings: the public vocabulary shared by workflows,
 * activities, CLI exit codes and HTTP statuses. One table maps them at each
 * edge; nothing else invents failure names.
 */
export const FailureType = {
  NoCommittedRevision: 'NoCommittedRevision',
  NoSiteActionRevision: 'NoSiteActionRevision',
  RevisionNotFound: 'RevisionNotFound',
  DocumentValidationFailed: 'DocumentValidationFailed',
  InvalidTargets: 'InvalidTargets',
  InvalidNodeFilter: 'InvalidNodeFilter',
  RunInProgress: 'RunInProgress',
  NodeNotInDesign: 'NodeNotInDesign',
  NodeNotFound: 'NodeNotFound',
  Forbidden: 'Forbidden',
  Invalid: 'Invalid',
  Conflict: 'Conflict',
  Unavailable: 'Unavailable',
  VerificationFailed: 'VerificationFailed',
  TooManyConflicts: 'TooManyConflicts',
} as const;

/** One of the {@link FailureType} strings. */
export type FailureType = (typeof FailureType)[keyof typeof FailureType];
