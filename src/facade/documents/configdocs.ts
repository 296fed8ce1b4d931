/**
 * Shipyard's view of the revision store: named versions of the site's
 * documents (`buffer`, `committed`, `last_site_action`,
 * `successful_site_action`), each collection's status between two of them,
 * and staging under Shipyard's buffer modes. Shipyard keeps its buffer as an
 * uncommitted Deckhand revision; relabel's buffer is the staged buckets, and
 * the `buffer` version is the committed site with them laid over it.
 */
import { FailureType } from '../../core/plan/failure-types.ts';
import { compareText, contentDigest, diffEntries, type DiffEntry } from '../../store/revisions/revision-diff.ts';
import { SiteActionTag, type DiffStatus, type RevisionDocument, type SourceFile, type StagedBucket } from '../../store/revisions/revision-store.ts';
import type { Store } from '../../store/store.ts';
import { RelabelError } from '../relabel-error.ts';

/** Shipyard's version names. */
export type VersionName = 'buffer' | 'committed' | 'last_site_action' | 'successful_site_action';

/** Shipyard's buffer modes, and relabel's own `bucket` (this bucket's staged content replaced, the others kept, no further check). */
export type BufferMode = 'rejectoncontents' | 'append' | 'replace' | 'bucket';

/** Shipyard's collection statuses. */
export type CollectionStatus = 'created' | 'modified' | 'deleted' | 'unmodified';

/** One collection (bucket) compared between two versions, as Shipyard's `GET configdocs` lists it. */
export interface CollectionComparison {
  collection_name: string;
  base_version: VersionName;
  /** The base's revision; 0 when nothing was committed. */
  base_revision: number;
  new_version: VersionName;
  /** The new side's revision; null for a buffer that holds changes (relabel's buffer is not a revision until committed). */
  new_revision: number | null;
  /** `not present` for a created collection, else `present`. */
  base_status: 'present' | 'not present';
  new_status: CollectionStatus;
}

/** A version's documents: its revision (null: the buffer with changes) and its files. */
export interface VersionDocuments {
  revision: number | null;
  files: RevisionDocument[];
}

/** Oldest first, as Shipyard orders versions for a comparison. */
const VERSION_ORDER: readonly VersionName[] = ['successful_site_action', 'last_site_action', 'committed', 'buffer'];

const STATUS_OF: Record<DiffStatus, CollectionStatus> = { added: 'created', deleted: 'deleted', modified: 'modified', unchanged: 'unmodified' };

const entries = (files: readonly RevisionDocument[]): DiffEntry[] => files.map((f) => ({ bucket: f.bucket, source: f.source, digest: contentDigest(f.text) }));

/** What the configdocs facade uses of the documents facade. */
export interface ConfigdocsDeps {
  /**
   * Checks a bucket's files each on its own, and the node-set selectors of
   * the site they would make (over the buffer too unless `withBuffer` is
   * false); throws every error.
   */
  check(bucket: string, files: readonly SourceFile[], withBuffer: boolean): Promise<void>;
  /** Runs a store call, turning store errors into facade errors. */
  call<T>(fn: () => Promise<T>): Promise<T>;
}

/** Builds Shipyard's configdocs semantics over a store. */
export function createConfigdocs(store: Store, { check, call }: ConfigdocsDeps) {
  /** The revision a committed version names, or null when there is none. */
  async function revisionOf(version: Exclude<VersionName, 'buffer'>): Promise<number | null> {
    if (version === 'committed') return (await store.revisions.latest())?.id ?? null;
    const wanted: string[] = version === 'successful_site_action' ? [SiteActionTag.success] : [SiteActionTag.success, SiteActionTag.failure];
    const found = (await store.revisions.list()).reverse().find((r) => r.tags.some((t) => wanted.includes(t.tag)));
    return found?.id ?? null;
  }

  /** The committed files (none before the first commit) with the staged buckets laid over them. */
  async function bufferFiles(committed: number | null, staged: readonly StagedBucket[]): Promise<RevisionDocument[]> {
    const replaced = new Set(staged.map((b) => b.bucket));
    const kept = committed === null ? [] : (await store.revisions.documents(committed)).filter((d) => !replaced.has(d.bucket));
    const laid = staged.flatMap((b) => b.files.map((f) => ({ bucket: b.bucket, source: f.source, text: f.text })));
    return [...kept, ...laid].sort((a, b) => compareText(a.bucket, b.bucket) || compareText(a.source, b.source));
  }

  /** How each collection of the buffer (as read now, or `staged`) differs from the committed site (buckets on either side, sorted). */
  async function bufferChanges(
    staged?: readonly StagedBucket[],
  ): Promise<{ committed: number | null; files: RevisionDocument[]; changed: Map<string, CollectionStatus> }> {
    const committed = await revisionOf('committed');
    const before = committed === null ? [] : await store.revisions.documents(committed);
    const files = await bufferFiles(committed, staged ?? (await store.revisions.buffer()));
    const changed = new Map<string, CollectionStatus>();
    for (const b of diffEntries(committed ?? 0, 0, entries(before), entries(files)).buckets) {
      if (b.status !== 'unchanged') changed.set(b.bucket, STATUS_OF[b.status]);
    }
    return { committed, files, changed };
  }

  /**
   * A version's documents. `buffer` is the committed site with the staged
   * buckets laid over it (its revision null when it holds changes, else the
   * committed one's). RevisionNotFound when the version does not exist: no
   * commit, no site action, or (for `buffer`) nothing committed or staged.
   */
  async function documentsOf(version: VersionName): Promise<VersionDocuments> {
    if (version === 'buffer') {
      const { committed, files, changed } = await bufferChanges();
      if (committed === null && changed.size === 0)
        throw new RelabelError(FailureType.RevisionNotFound, 'buffer version does not exist: nothing is committed or staged');
      return { revision: changed.size > 0 ? null : committed, files };
    }
    const revision = await revisionOf(version);
    if (revision === null) throw new RelabelError(FailureType.RevisionNotFound, `${version} version does not exist`);
    return { revision, files: await store.revisions.documents(revision) };
  }

  /**
   * Each collection's status between two versions, as Shipyard's `GET
   * configdocs`: the older version (in Shipyard's order successful site
   * action, last site action, committed, buffer) is the base; every bucket
   * of either side is listed, sorted. Default: committed against buffer.
   * Absent committed is the empty revision 0; an absent site-action
   * version is RevisionNotFound.
   */
  async function status(versions: readonly VersionName[] = ['committed', 'buffer']): Promise<CollectionComparison[]> {
    const [first, second] = versions;
    if (versions.length !== 2 || first === undefined || second === undefined || first === second) {
      throw new RelabelError(FailureType.Invalid, 'versions names exactly two different versions to compare');
    }
    const [base, next] = VERSION_ORDER.indexOf(first) > VERSION_ORDER.indexOf(second) ? [second, first] : [first, second];
    const side = async (version: VersionName): Promise<VersionDocuments> => {
      if (version === 'committed') {
        const id = await revisionOf('committed');
        return { revision: id ?? 0, files: id === null ? [] : await store.revisions.documents(id) };
      }
      if (version === 'buffer') {
        const { committed, files, changed } = await bufferChanges();
        return { revision: changed.size > 0 ? null : (committed ?? 0), files };
      }
      return documentsOf(version);
    };
    const from = await side(base);
    const to = await side(next);
    return diffEntries(from.revision ?? 0, to.revision ?? 0, entries(from.files), entries(to.files)).buckets.map((b) => ({
      collection_name: b.bucket,
      base_version: base,
      base_revision: from.revision ?? 0,
      new_version: next,
      new_revision: to.revision,
      base_status: b.status === 'added' ? 'not present' : 'present',
      new_status: STATUS_OF[b.status],
    }));
  }

  /** Whether the buffer changes anything compared with the committed site (Shipyard: the buffer is not empty). */
  async function hasChanges(): Promise<boolean> {
    return (await bufferChanges()).changed.size > 0;
  }

  /**
   * Stages a collection under a Shipyard buffer mode; `files` null stages
   * its removal (Shipyard's `empty-collection`). Files are checked on their
   * own after the buffer mode. `rejectoncontents`: Conflict when the buffer holds any change;
   * `append`: Conflict when this collection is already changed in the
   * buffer; `replace`: the buffer is emptied first; `bucket` checks nothing
   * more (relabel's own staging). Then, but for `bucket`, a collection
   * (not a removal) that changes nothing compared with the committed site is
   * refused (Invalid; as Shipyard, "added no new revision") and nothing is
   * staged. Returns how the collection now differs from the committed site.
   * Every mode but `bucket` stages only into the buffer as it was read
   * (Conflict when another stage or a commit came in between), and
   * `replace` empties it in the same transaction.
   */
  async function stage(bucket: string, files: readonly SourceFile[] | null, mode: BufferMode): Promise<CollectionStatus> {
    // Decided from this reading of the buffer, and staged only into it as read: a concurrent stage or commit is a Conflict.
    const snapshot = await store.revisions.buffer();
    const { committed, changed } = await bufferChanges(snapshot);
    const busy = mode === 'rejectoncontents' ? changed.size > 0 : mode === 'append' ? changed.has(bucket) : false;
    if (busy) {
      throw new RelabelError(
        FailureType.Conflict,
        `buffermode ${mode}: the buffer ${mode === 'append' ? `already changes collection ${bucket}` : `holds changes to ${[...changed.keys()].join(', ')}`}; ` +
          'commit it, or use another buffermode',
      );
    }
    // As Shipyard, the buffer is judged before the documents are.
    if (files !== null) await check(bucket, files, mode !== 'replace');
    const before = committed === null ? [] : (await store.revisions.documents(committed)).filter((d) => d.bucket === bucket);
    const after = (files ?? []).map((f) => ({ bucket, source: f.source, text: f.text }));
    const status = diffEntries(0, 0, entries(before), entries(after)).buckets[0]?.status ?? 'unchanged';
    if (files !== null && status === 'unchanged' && mode !== 'bucket') {
      throw new RelabelError(FailureType.Invalid, `collection ${bucket} added no change: it holds the same documents as the committed one; nothing staged`);
    }
    await store.revisions.stage(
      bucket,
      files ?? [],
      mode === 'bucket' ? {} : { expectBuffer: snapshot, ...(mode === 'replace' ? { replaceBuffer: true } : {}) },
    );
    return STATUS_OF[status];
  }

  return {
    documentsOf: (version: VersionName) => call(() => documentsOf(version)),
    status: (versions?: readonly VersionName[]) => call(() => status(versions)),
    hasChanges: () => call(hasChanges),
    stage: (bucket: string, files: readonly SourceFile[] | null, mode: BufferMode) => call(() => stage(bucket, files, mode)),
  };
}

/** The configdocs facade's type. */
export type Configdocs = ReturnType<typeof createConfigdocs>;
