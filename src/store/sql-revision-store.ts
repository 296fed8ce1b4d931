/**
 * The revision-store behavior, written once over a {@link SqlDriver} so the
 * SQLite and PostgreSQL backends cannot drift apart.
 *
 * Content is kept once per SHA-256 digest (`contents`); revisions and the
 * buffer hold (bucket, source, digest) rows. Revision ids are read from the
 * table under the write lock, never from memory, so concurrent committers in
 * different processes get consecutive, distinct ids.
 */
import type {
  CommitOptions,
  Revision,
  RevisionDiff,
  RevisionDocument,
  RevisionStore,
  RevisionTag,
  SourceFile,
  StagedBucket,
  StageOptions,
  TagData,
} from './revision-store.ts';
import { SiteActionTag } from './revision-store.ts';
import { StoreError, StoreErrorCode } from './store-error.ts';
import { compareText, contentDigest, diffEntries, type DiffEntry } from './revision-diff.ts';
import {
  assertBucketName,
  assertMessage,
  assertRevisionId,
  assertTagName,
  serializeTagData,
  validateBucketList,
  validateFiles,
} from './store-validation.ts';
import { closableDriver, columnString, type SqlDriver, type SqlSession, type TableNames } from './sql-driver.ts';
import { buildBuffer, buildRevisions, buildTag } from './revision-rows.ts';
import { assertRevisionExists, lastRevisionId, notFound } from './revision-lookups.ts';
import type { RunStore } from './run-store.ts';
import type { PluginStore } from './plugin-store.ts';
import { sqlPluginStore } from './sql-plugin-store.ts';
import { sqlRunStore } from './sql-run-store.ts';
import type { DriftStore } from './drift-store.ts';
import { sqlDriftStore } from './sql-drift-store.ts';
import { sqlRevisionDesigns } from './sql-revision-designs.ts';

/** A buffer as one comparable text: each bucket with its staging time and its files' digests. */
function bufferKey(buffer: readonly StagedBucket[]): string {
  return buffer
    .map((b) => [b.bucket, b.stagedAt.getTime(), ...b.files.map((f) => `${f.source}=${contentDigest(f.text)}`).sort(compareText)].join('\t'))
    .sort(compareText)
    .join('\n');
}

/** A {@link RevisionStore} over any {@link SqlDriver}. Backends construct it; callers see only the interface. */
export class SqlRevisionStore implements RevisionStore {
  readonly #driver: SqlDriver;
  readonly #t: TableNames;
  readonly #runs: RunStore;
  readonly #drift: DriftStore;
  readonly #plugins: PluginStore;
  readonly #designs: Pick<RevisionStore, 'storedDesign' | 'storeDesign'>;

  /** @param driver - the backend; owned by the store from now on (closed by {@link close}) */
  constructor(driver: SqlDriver) {
    this.#driver = closableDriver(driver);
    this.#t = driver.tables;
    this.#runs = sqlRunStore(this.#driver);
    this.#drift = sqlDriftStore(this.#driver);
    this.#plugins = sqlPluginStore(this.#driver);
    this.#designs = sqlRevisionDesigns(this.#driver);
  }

  createRun: RunStore['createRun'] = (input) => this.#runs.createRun(input);
  getRun: RunStore['getRun'] = (id) => this.#runs.getRun(id);
  setRunOutcome: RunStore['setRunOutcome'] = (id, outcome) => this.#runs.setRunOutcome(id, outcome);
  setRunWorkflow: RunStore['setRunWorkflow'] = (id, workflowId) => this.#runs.setRunWorkflow(id, workflowId);
  setRunExecution: RunStore['setRunExecution'] = (id, runId) => this.#runs.setRunExecution(id, runId);
  runByActionId: RunStore['runByActionId'] = (actionId) => this.#runs.runByActionId(actionId);
  recordActionCommand: RunStore['recordActionCommand'] = (id, command, user) => this.#runs.recordActionCommand(id, command, user);
  actionCommands: RunStore['actionCommands'] = (id, limit) => this.#runs.actionCommands(id, limit);
  discardRun: RunStore['discardRun'] = (id) => this.#runs.discardRun(id);
  setNodeResults: RunStore['setNodeResults'] = (id, updates) => this.#runs.setNodeResults(id, updates);
  runNodes: RunStore['runNodes'] = (id, query) => this.#runs.runNodes(id, query);
  observedState: RunStore['observedState'] = (id, node) => this.#runs.observedState(id, node);
  runNode: RunStore['runNode'] = (id, node) => this.#runs.runNode(id, node);
  runCounts: RunStore['runCounts'] = (id) => this.#runs.runCounts(id);
  cancelRunNodes: RunStore['cancelRunNodes'] = (id, detail) => this.#runs.cancelRunNodes(id, detail);
  setRunWaves: RunStore['setRunWaves'] = (id, waves) => this.#runs.setRunWaves(id, waves);
  runWaves: RunStore['runWaves'] = (id, query) => this.#runs.runWaves(id, query);
  storedDesign: RevisionStore['storedDesign'] = (id, format) => this.#designs.storedDesign(id, format);
  storeDesign: RevisionStore['storeDesign'] = (id, format, design) => this.#designs.storeDesign(id, format, design);
  savePluginSet: PluginStore['savePluginSet'] = (input) => this.#plugins.savePluginSet(input);
  latestPluginSet: PluginStore['latestPluginSet'] = (site) => this.#plugins.latestPluginSet(site);
  pluginSet: PluginStore['pluginSet'] = (id) => this.#plugins.pluginSet(id);
  pluginSetLabels: PluginStore['pluginSetLabels'] = (id, nodes) => this.#plugins.pluginSetLabels(id, nodes);
  pluginSetRows: PluginStore['pluginSetRows'] = (id, query) => this.#plugins.pluginSetRows(id, query);
  setPluginStatus: PluginStore['setPluginStatus'] = (site, polledAt, updates) => this.#plugins.setPluginStatus(site, polledAt, updates);
  pluginStatus: PluginStore['pluginStatus'] = (site) => this.#plugins.pluginStatus(site);
  pinRunPluginSet: PluginStore['pinRunPluginSet'] = (run, set) => this.#plugins.pinRunPluginSet(run, set);
  runPluginSet: PluginStore['runPluginSet'] = (run) => this.#plugins.runPluginSet(run);

  createDriftReport: DriftStore['createDriftReport'] = (input) => this.#drift.createDriftReport(input);
  addDriftNodes: DriftStore['addDriftNodes'] = (id, rows) => this.#drift.addDriftNodes(id, rows);
  finishDriftReport: DriftStore['finishDriftReport'] = (id, counts) => this.#drift.finishDriftReport(id, counts);
  setDriftHeal: DriftStore['setDriftHeal'] = (id, heal) => this.#drift.setDriftHeal(id, heal);
  getDriftReport: DriftStore['getDriftReport'] = (id) => this.#drift.getDriftReport(id);
  latestDriftReport: DriftStore['latestDriftReport'] = (site) => this.#drift.latestDriftReport(site);
  driftNodes: DriftStore['driftNodes'] = (id, query) => this.#drift.driftNodes(id, query);

  async stage(bucket: string, files: readonly SourceFile[], options: StageOptions = {}): Promise<StagedBucket> {
    assertBucketName(bucket);
    const valid = validateFiles(bucket, files);
    const t = this.#t;
    const stagedAt = new Date();
    await this.#driver.write(async (s) => {
      if (options.expectBuffer !== undefined) {
        const now = bufferKey(buildBuffer(await s.all(`SELECT bucket, staged_at FROM ${t.buffer}`), await this.#bufferTexts(s)));
        if (now !== bufferKey(options.expectBuffer)) {
          throw new StoreError(StoreErrorCode.Conflict, `the buffer changed since it was read; nothing staged for bucket '${bucket}'`);
        }
      }
      const whole = options.replaceBuffer === true;
      const old = await s.all(`SELECT DISTINCT digest FROM ${t.bufferFiles}${whole ? '' : ' WHERE bucket = ?'}`, whole ? [] : [bucket]);
      await s.run(`DELETE FROM ${t.bufferFiles}${whole ? '' : ' WHERE bucket = ?'}`, whole ? [] : [bucket]);
      if (whole) await s.run(`DELETE FROM ${t.buffer}`);
      await s.run(
        `INSERT INTO ${t.buffer} (bucket, staged_at) VALUES (?, ?)
         ON CONFLICT (bucket) DO UPDATE SET staged_at = excluded.staged_at`,
        [bucket, stagedAt.toISOString()],
      );
      for (const file of valid) {
        const digest = contentDigest(file.text);
        await s.run(
          `INSERT INTO ${t.contents} (digest, text) VALUES (?, ?) ON CONFLICT (digest) DO NOTHING`,
          [digest, file.text],
        );
        await s.run(`INSERT INTO ${t.bufferFiles} (bucket, source, digest) VALUES (?, ?, ?)`, [
          bucket,
          file.source,
          digest,
        ]);
      }
      await this.#prune(s, old.map((row) => columnString(row, 'digest')));
    });
    return { bucket, files: valid, stagedAt };
  }

  buffer(): Promise<StagedBucket[]> {
    const t = this.#t;
    return this.#driver.read(async (s) => buildBuffer(await s.all(`SELECT bucket, staged_at FROM ${t.buffer}`), await this.#bufferTexts(s)));
  }

  /** The buffer's files with their texts. */
  #bufferTexts(s: SqlSession) {
    const t = this.#t;
    return s.all(
      `SELECT f.bucket, f.source, c.text FROM ${t.bufferFiles} f
       JOIN ${t.contents} c ON c.digest = f.digest`,
    );
  }

  discardBuffer(): Promise<string[]> {
    const t = this.#t;
    return this.#driver.write(async (s) => {
      const buckets = await s.all(`SELECT bucket FROM ${t.buffer}`);
      const old = await s.all(`SELECT DISTINCT digest FROM ${t.bufferFiles}`);
      await s.run(`DELETE FROM ${t.bufferFiles}`);
      await s.run(`DELETE FROM ${t.buffer}`);
      await this.#prune(s, old.map((row) => columnString(row, 'digest')));
      return buckets.map((row) => columnString(row, 'bucket')).sort(compareText);
    });
  }

  async commit(options: CommitOptions = {}): Promise<Revision> {
    assertMessage(options.message);
    const wanted = options.buckets === undefined ? undefined : validateBucketList(options.buckets);
    const t = this.#t;
    return this.#driver.write(async (s) => {
      const staged = (await s.all(`SELECT bucket FROM ${t.buffer}`)).map((r) => columnString(r, 'bucket'));
      if (staged.length === 0) {
        throw new StoreError(StoreErrorCode.EmptyBuffer, 'nothing to commit: the staging buffer is empty');
      }
      const missing = wanted?.filter((bucket) => !staged.includes(bucket)) ?? [];
      if (missing.length > 0) {
        throw new StoreError(StoreErrorCode.EmptyBuffer,
          `nothing staged for bucket(s) ${missing.map((b) => `'${b}'`).join(', ')}; ` +
            `staged: ${staged.sort(compareText).map((b) => `'${b}'`).join(', ')}`,
        );
      }
      const last = await lastRevisionId(s, t);
      const next = last + 1;
      await s.run(`INSERT INTO ${t.revisions} (id, created_at, message) VALUES (?, ?, ?)`, [
        next,
        new Date().toISOString(),
        options.message ?? null,
      ]);
      await s.run(
        `INSERT INTO ${t.revisionFiles} (revision_id, bucket, source, digest)
         SELECT ?, bucket, source, digest FROM ${t.revisionFiles} WHERE revision_id = ?`,
        [next, last],
      );
      for (const bucket of wanted ?? staged) {
        await s.run(`DELETE FROM ${t.revisionFiles} WHERE revision_id = ? AND bucket = ?`, [next, bucket]);
        await s.run(
          `INSERT INTO ${t.revisionFiles} (revision_id, bucket, source, digest)
           SELECT ?, bucket, source, digest FROM ${t.bufferFiles} WHERE bucket = ?`,
          [next, bucket],
        );
        await s.run(`DELETE FROM ${t.bufferFiles} WHERE bucket = ?`, [bucket]);
        await s.run(`DELETE FROM ${t.buffer} WHERE bucket = ?`, [bucket]);
      }
      return this.#revision(s, next);
    });
  }

  latestRevision(): Promise<Revision | null> {
    return this.#driver.read(async (s) => {
      const last = await lastRevisionId(s, this.#t);
      return last === 0 ? null : this.#revision(s, last);
    });
  }

  async getRevision(id: number): Promise<Revision> {
    assertRevisionId(id);
    return this.#driver.read((s) => this.#revision(s, id));
  }

  listRevisions(): Promise<Revision[]> {
    const t = this.#t;
    return this.#driver.read(async (s) =>
      buildRevisions(
        await s.all(`SELECT id, created_at, message FROM ${t.revisions} ORDER BY id`),
        await s.all(`SELECT DISTINCT revision_id, bucket FROM ${t.revisionFiles}`),
        await s.all(`SELECT revision_id, tag, data, created_at FROM ${t.revisionTags}`),
      ),
    );
  }

  async documents(id: number): Promise<RevisionDocument[]> {
    assertRevisionId(id);
    const t = this.#t;
    return this.#driver.read(async (s) => {
      await assertRevisionExists(s, t, id);
      const rows = await s.all(
        `SELECT f.bucket, f.source, c.text FROM ${t.revisionFiles} f
         JOIN ${t.contents} c ON c.digest = f.digest WHERE f.revision_id = ?`,
        [id],
      );
      return rows
        .map((r) => ({
          bucket: columnString(r, 'bucket'),
          source: columnString(r, 'source'),
          text: columnString(r, 'text'),
        }))
        .sort((a, b) => compareText(a.bucket, b.bucket) || compareText(a.source, b.source));
    });
  }

  async tag(id: number, tag: string, data?: TagData): Promise<RevisionTag> {
    assertRevisionId(id);
    assertTagName(tag);
    const json = serializeTagData(tag, data);
    const t = this.#t;
    return this.#driver.write(async (s) => {
      await assertRevisionExists(s, t, id);
      await s.run(
        `INSERT INTO ${t.revisionTags} (revision_id, tag, data, created_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (revision_id, tag) DO UPDATE SET data = excluded.data, created_at = excluded.created_at`,
        [id, tag, json, new Date().toISOString()],
      );
      const [row] = await s.all(
        `SELECT tag, data, created_at FROM ${t.revisionTags} WHERE revision_id = ? AND tag = ?`,
        [id, tag],
      );
      if (!row) throw new Error(`tag '${tag}' of revision ${id} vanished inside its own transaction`);
      return buildTag(row);
    });
  }

  async untag(id: number, tag: string): Promise<boolean> {
    assertRevisionId(id);
    assertTagName(tag);
    const t = this.#t;
    return this.#driver.write(async (s) => {
      await assertRevisionExists(s, t, id);
      const removed = await s.run(`DELETE FROM ${t.revisionTags} WHERE revision_id = ? AND tag = ?`, [id, tag]);
      return removed > 0;
    });
  }

  hasSiteActionRevision(): Promise<boolean> {
    const t = this.#t;
    return this.#driver.read(async (s) => {
      const rows = await s.all(`SELECT 1 AS found FROM ${t.revisionTags} WHERE tag IN (?, ?) LIMIT 1`, [
        SiteActionTag.success,
        SiteActionTag.failure,
      ]);
      return rows.length > 0;
    });
  }

  async diff(from: number, to: number): Promise<RevisionDiff> {
    assertRevisionId(from, true);
    assertRevisionId(to, true);
    const t = this.#t;
    return this.#driver.read(async (s) => {
      const side = async (id: number): Promise<DiffEntry[]> => {
        if (id === 0) return [];
        await assertRevisionExists(s, t, id);
        const rows = await s.all(
          `SELECT bucket, source, digest FROM ${t.revisionFiles} WHERE revision_id = ?`,
          [id],
        );
        return rows.map((r) => ({
          bucket: columnString(r, 'bucket'),
          source: columnString(r, 'source'),
          digest: columnString(r, 'digest'),
        }));
      };
      return diffEntries(from, to, await side(from), await side(to));
    });
  }

  close(): Promise<void> {
    return this.#driver.close();
  }

  async #revision(s: SqlSession, id: number): Promise<Revision> {
    const t = this.#t;
    const [revision] = buildRevisions(
      await s.all(`SELECT id, created_at, message FROM ${t.revisions} WHERE id = ?`, [id]),
      await s.all(`SELECT DISTINCT revision_id, bucket FROM ${t.revisionFiles} WHERE revision_id = ?`, [id]),
      await s.all(`SELECT revision_id, tag, data, created_at FROM ${t.revisionTags} WHERE revision_id = ?`, [id]),
    );
    if (!revision) throw await notFound(s, t, id);
    return revision;
  }

  /** Drop contents no longer referenced by any revision or staged file. */
  async #prune(s: SqlSession, digests: readonly string[]): Promise<void> {
    const t = this.#t;
    for (const digest of new Set(digests)) {
      await s.run(
        `DELETE FROM ${t.contents} WHERE digest = ?
         AND NOT EXISTS (SELECT 1 FROM ${t.revisionFiles} WHERE digest = ?)
         AND NOT EXISTS (SELECT 1 FROM ${t.bufferFiles} WHERE digest = ?)`,
        [digest, digest, digest],
      );
    }
  }
}
