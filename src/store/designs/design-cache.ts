/**
 * Validated designs by revision, kept in a long-lived process (the worker,
 * the API server) so that the thousands of nodes of a run, and every request
 * about one revision, read and validate its documents once. Revisions are
 * immutable, so a cached design never goes stale.
 *
 * A valid revision's design is also kept in the store (compressed JSON, in
 * the format of the code that resolved it, see `design-format.ts`): the
 * first process to validate a revision stores it, and every other process,
 * or the same one after a restart, reads it back in a second or two instead
 * of validating again (a minute of CPU for 50,000 nodes). A stored design
 * that cannot be read back is validated again.
 */
import { promisify } from 'node:util';
import { constants, zstdCompress, zstdDecompress } from 'node:zlib';
import type { Design, SiteValidation } from '../../core/site/validate-site.ts';
import { designFormat } from './design-format.ts';
import { parseShared, stringifyShared } from '../shared-json.ts';
import { validateDocuments } from '../revisions/revision-checks.ts';
import type { RevisionDocument } from '../revisions/revision-store.ts';
import type { Store } from '../store.ts';

/** A revision's design, or every error found in its documents. */
export type DesignResult = { ok: true; design: Design } | Extract<SiteValidation, { ok: false }>;

/** Looks up (validating at most once per revision) the design of a revision. */
export interface DesignCache {
  get(revision: number): Promise<DesignResult>;
}

/** A {@link DesignCache} that can also be told a design (as a commit knows it). */
export interface DesignMemory extends DesignCache {
  /** Remembers `design` as revision `revision`'s, validated by the caller from exactly its documents. */
  remember(revision: number, design: Design): void;
}

const compress = promisify(zstdCompress);
const decompress = promisify(zstdDecompress);

/**
 * A design as the store keeps it: Zstandard (level 3) of its shared JSON
 * (`shared-json.ts`), in base64. A design repeats itself from node to node:
 * 50,000 nodes are 106 MB of JSON, 10 MB of shared JSON, and keep in a few
 * hundred KB; read back, the nodes share their equal labels, sources and
 * taints, so the design takes a fraction of the time and memory to read.
 */
export async function encodeDesign(design: Design): Promise<string> {
  return (await compress(stringifyShared(design), { params: { [constants.ZSTD_c_compressionLevel]: 3 } })).toString('base64');
}

/** The design {@link encodeDesign} stored (its equal parts shared: read only); throws when the text is not one. */
export async function decodeDesign(text: string): Promise<Design> {
  const design = parseShared((await decompress(Buffer.from(text, 'base64'))).toString('utf8')) as Design;
  if (typeof design !== 'object' || design === null || typeof design.nodes !== 'object' || typeof design.site !== 'string')
    throw new Error('not a stored design');
  return design;
}

/** The stored design of `revision`, or undefined when none can be read back. */
async function storedDesign(store: Store, revision: number, format: string): Promise<Design | undefined> {
  const text = await store.designs.get(revision, format);
  if (text === null) return undefined;
  try {
    return await decodeDesign(text);
  } catch {
    return undefined;
  }
}

/** Stores `design` as `revision`'s, best effort: a design too large for one string, or one the store refuses, is validated again by the next reader. */
async function storeDesign(store: Store, revision: number, format: string, design: Design): Promise<void> {
  try {
    await store.designs.save(revision, format, await encodeDesign(design));
  } catch {
    // Readers validate instead.
  }
}

/** Validates `revision`'s documents; stores a valid design for the next reader. */
async function validated(store: Store, revision: number, format: string): Promise<DesignResult> {
  const v = validateDocuments(await store.revisions.documents(revision));
  if (!v.ok) return v;
  await storeDesign(store, revision, format, v.design);
  return { ok: true, design: v.design };
}

/**
 * Stores `design`, validated from `files` before they were committed as
 * `revision`, once the revision is read back holding exactly those files
 * (another commit or stage in between would make it another site); true
 * when it holds them, so the design is the revision's. Storing is best
 * effort, as in {@link validated}.
 */
export async function keepCommittedDesign(store: Store, revision: number, files: readonly RevisionDocument[], design: Design): Promise<boolean> {
  const key = (d: RevisionDocument) => `${d.bucket}\0${d.source}`;
  const expected = new Map(files.map((d) => [key(d), d.text]));
  const committed = await store.revisions.documents(revision);
  if (committed.length !== expected.size || committed.some((d) => expected.get(key(d)) !== d.text)) return false;
  await storeDesign(store, revision, designFormat(), design);
  return true;
}

/** A {@link DesignCache} over `store` keeping the `size` most recently used revisions. */
export function createDesignCache(store: Store, size = 4): DesignMemory {
  const entries = new Map<number, Promise<DesignResult>>();
  const keep = (revision: number, entry: Promise<DesignResult>) => {
    entries.delete(revision);
    entries.set(revision, entry);
    while (entries.size > size) entries.delete(entries.keys().next().value as number);
  };
  return {
    remember(revision, design) {
      keep(revision, Promise.resolve({ ok: true, design }));
    },
    get(revision) {
      let entry = entries.get(revision);
      if (entry) {
        entries.delete(revision);
      } else {
        // Only the design is kept: the parsed documents of a large site weigh hundreds of MiB.
        const format = designFormat();
        entry = storedDesign(store, revision, format).then((design): Promise<DesignResult> | DesignResult =>
          design ? { ok: true, design } : validated(store, revision, format),
        );
        // A failed read is not cached: the next attempt reads again.
        entry.catch(() => entries.delete(revision));
      }
      keep(revision, entry);
      return entry;
    },
  };
}
