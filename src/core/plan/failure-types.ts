/**
 * Failure `type` strings: the one public vocabulary shared by workflows,
 * activities, the store, the facade, CLI exit codes and HTTP statuses. Each
 * edge maps every one of them in a table typed
 * `satisfies Record<FailureType, …>`, so a type without an entry fails the
 * typecheck. Nothing else invents failure names.
 */
export const FailureType = {
  // The request or its input is wrong; nothing was stored or started.
  /** A command line that does not parse, or a file that cannot be read. */
  Usage: 'Usage',
  InvalidTargets: 'InvalidTargets',
  InvalidNodeFilter: 'InvalidNodeFilter',
  /** A bucket, source or tag name breaks the naming rules. */
  InvalidName: 'InvalidName',
  /** Any other bad argument (revision id, tag data, file text, store URL). */
  InvalidArgument: 'InvalidArgument',
  InvalidRequest: 'InvalidRequest',
  InvalidJson: 'InvalidJson',
  UnknownAction: 'UnknownAction',
  InvalidDesignRef: 'InvalidDesignRef',
  NoNodesMatched: 'NoNodesMatched',
  DocumentValidationFailed: 'DocumentValidationFailed',
  PayloadTooLarge: 'PayloadTooLarge',
  UnsupportedMediaType: 'UnsupportedMediaType',
  HeaderTooLarge: 'HeaderTooLarge',
  MethodNotAllowed: 'MethodNotAllowed',
  Unauthorized: 'Unauthorized',

  // The site or the run is not in a state that allows it.
  NoCommittedRevision: 'NoCommittedRevision',
  NoSiteActionRevision: 'NoSiteActionRevision',
  RevisionNotFound: 'RevisionNotFound',
  RunInProgress: 'RunInProgress',
  RunNotFound: 'RunNotFound',
  /** Nothing is staged to commit. */
  EmptyBuffer: 'EmptyBuffer',
  NothingToRetry: 'NothingToRetry',
  NotRetryable: 'NotRetryable',
  NotRunning: 'NotRunning',
  /** A run would remove more of the owned labels than the policy's max_removal_fraction and was not allowed to. */
  MassRemovalRefused: 'MassRemovalRefused',
  /** Something the store was asked for does not exist. */
  NotFound: 'NotFound',
  ActionNotFound: 'ActionNotFound',
  BucketNotFound: 'BucketNotFound',
  TagNotFound: 'TagNotFound',
  /** The store's database was written by a relabel this one does not know. */
  SchemaVersion: 'SchemaVersion',

  // One node's failure in a run.
  NodeNotInDesign: 'NodeNotInDesign',
  /** The node is matched by two node sets or more (and no BaremetalNode names it): none applies. */
  NodeInTwoSets: 'NodeInTwoSets',
  NodeNotFound: 'NodeNotFound',
  Forbidden: 'Forbidden',
  Invalid: 'Invalid',
  Conflict: 'Conflict',
  VerificationFailed: 'VerificationFailed',
  TooManyConflicts: 'TooManyConflicts',
  /** The run was cancelled (stopped) before the node was started: nothing was written to it. */
  NotStarted: 'NotStarted',

  // Infrastructure.
  Unavailable: 'Unavailable',
  /** The store was used after it was closed. */
  Closed: 'Closed',
  InternalError: 'InternalError',
} as const;

/** One of the {@link FailureType} strings. */
export type FailureType = (typeof FailureType)[keyof typeof FailureType];

const known: ReadonlySet<string> = new Set(Object.values(FailureType));

/** Whether `type` is one of relabel's failure types. */
export function isFailureType(type: unknown): type is FailureType {
  return typeof type === 'string' && known.has(type);
}
