/**
 * The revisions part of the store (Deckhand/Shipyard model), shared by the
 * SQLite and PostgreSQL backends.
 *
 * Documents live in named buckets. A bucket's content is a list of source files
 * kept verbatim, so validation errors can point at file names and line numbers.
 * Changes are staged per bucket into one shared buffer and committed as an
 * immutable, monotonically numbered revision.
 */

/** One source file: its name (e.g. `site/nodes.yaml`) and its raw multi-document YAML text. */
export interface SourceFile {
  readonly source: string;
  readonly text: string;
}

/** A source file of a revision, with the bucket it belongs to. */
export interface RevisionDocument extends SourceFile {
  readonly bucket: string;
}

/** A bucket's content waiting in the staging buffer. An empty `files` list deletes the bucket on commit. */
export interface StagedBucket {
  readonly bucket: string;
  /** Files sorted by source name. */
  readonly files: readonly SourceFile[];
  readonly stagedAt: Date;
}

/** JSON object attached to a tag. */
export type TagData = Readonly<Record<string, unknown>>;

/** A tag on a revision. Names follow {@link TAG_NAME_PATTERN}. */
export interface RevisionTag {
  readonly tag: string;
  readonly data: TagData;
  /** When the tag was (last) set. */
  readonly createdAt: Date;
}

/** An immutable committed revision (its tags are the only thing that changes). */
export interface Revision {
  /** 1, 2, 3, … in commit order, without gaps. */
  readonly id: number;
  readonly createdAt: Date;
  readonly message: string | null;
  /** Names of the buckets holding at least one file, sorted. */
  readonly buckets: readonly string[];
  /** Tags sorted by name. */
  readonly tags: readonly RevisionTag[];
}

/** Options of {@link RevisionStore.commit}. */
export interface CommitOptions {
  /** Free text kept with the revision. */
  readonly message?: string;
  /**
   * Commit only these staged buckets; the others stay buffered. Lets concurrent
   * clients that each stage their own bucket commit exactly their own work.
   * Every name must be staged. Omitted: the whole buffer.
   */
  readonly buckets?: readonly string[];
}

/** Options of {@link RevisionStore.stage}. */
export interface StageOptions {
  /** Empty the whole buffer first, in the same transaction (Shipyard's `replace` buffer mode). */
  readonly replaceBuffer?: boolean;
  /**
   * Stage only if the buffer is still exactly this (what {@link RevisionStore.buffer}
   * returned: the same buckets, staged at the same times, with the same files);
   * Conflict otherwise, nothing written. A caller deciding from the buffer
   * (Shipyard's `rejectoncontents` and `append`) stages with no other writer in between.
   */
  readonly expectBuffer?: readonly StagedBucket[];
}

/** How a bucket or a source differs between two revisions. */
export type DiffStatus = 'added' | 'deleted' | 'modified' | 'unchanged';

/** One source file's status in a {@link RevisionDiff}. */
export interface SourceDiff {
  readonly source: string;
  readonly status: DiffStatus;
}

/** One bucket's status in a {@link RevisionDiff}, with its sources. */
export interface BucketDiff {
  readonly bucket: string;
  /** `modified` when any source is not `unchanged`. */
  readonly status: DiffStatus;
  /** Sources of either side, sorted by name. */
  readonly sources: readonly SourceDiff[];
}

/** Differences between two revisions, bucket by bucket (buckets sorted by name). */
export interface RevisionDiff {
  /** The older side; 0 means "before the first revision" (empty). */
  readonly from: number;
  readonly to: number;
  readonly buckets: readonly BucketDiff[];
}

/** Tags the site-action workflow sets on the revision it ran against. */
export const SiteActionTag = {
  success: 'site-action-success',
  failure: 'site-action-failure',
} as const;

/** One of the {@link SiteActionTag} values. */
export type SiteActionTag = (typeof SiteActionTag)[keyof typeof SiteActionTag];

/** Rule for tag names: lower-case alphanumerics, `-` and `.`, alphanumeric at both ends, at most 63 chars. */
export const TAG_NAME_PATTERN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** Rule for bucket names: as tags, plus `_` inside; at most 63 chars. */
export const BUCKET_NAME_PATTERN = /^[a-z0-9]([-a-z0-9_.]*[a-z0-9])?$/;

/** Longest tag or bucket name. */
export const MAX_NAME_LENGTH = 63;

/**
 * The revisions part of the store: the staging buffer, committed revisions
 * and their tags. Every method is atomic: on any error nothing is written.
 * Methods reject with a StoreError for bad input and missing things, and
 * with the driver's own error for I/O failures. Safe to use from several
 * processes on the same database at once.
 */
export interface RevisionStore {
  /**
   * Replace the buffered content of `bucket` with `files` (an empty list stages
   * the bucket's deletion). Files are validated first: names (InvalidName),
   * duplicates and NUL characters (InvalidArgument). Idempotent. See
   * {@link StageOptions} for emptying the buffer first and for staging only
   * into the buffer as read (Conflict when it changed).
   */
  stage(bucket: string, files: readonly SourceFile[], options?: StageOptions): Promise<StagedBucket>;

  /** The staged buckets, sorted by name. */
  buffer(): Promise<StagedBucket[]>;

  /** Empty the buffer; returns the names of the buckets that were staged. */
  discardBuffer(): Promise<string[]>;

  /**
   * Atomically create the next revision: the latest revision's buckets with the
   * staged ones replacing theirs; the committed buckets leave the buffer.
   * Throws EmptyBuffer when nothing (or a named bucket) is not staged.
   */
  commit(options?: CommitOptions): Promise<Revision>;

  /** The highest-numbered revision, or null when none was committed. */
  latest(): Promise<Revision | null>;

  /** One revision; NotFound when it does not exist. */
  get(id: number): Promise<Revision>;

  /** Every revision in ascending id order. */
  list(): Promise<Revision[]>;

  /** All source files of a revision, sorted by bucket then source. NotFound when absent. */
  documents(id: number): Promise<RevisionDocument[]>;

  /** Set (or replace the data of) a tag on a revision. Idempotent. NotFound when the revision is absent. */
  tag(id: number, tag: string, data?: TagData): Promise<RevisionTag>;

  /** Remove a tag; true when it was there. NotFound when the revision is absent. */
  untag(id: number, tag: string): Promise<boolean>;

  /** True when any revision carries `site-action-success` or `site-action-failure`. */
  hasSiteAction(): Promise<boolean>;

  /** Differences from revision `from` (0 = empty) to revision `to`. NotFound for absent revisions. */
  diff(from: number, to: number): Promise<RevisionDiff>;
}
