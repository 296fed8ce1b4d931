/**
 * The plugin part of the store ({@link PluginStore}), written once in
 * portable SQL over a {@link SqlDriver}. Set ids are read from the table
 * under the store-wide write lock, so they are consecutive across processes.
 * Labels travel in multi-row statements of at most {@link BATCH} rows.
 */
import type { PluginEntry } from '../../core/plan/node-wants.ts';
import type { CarriedPluginPart, FreshPluginPart, PluginSetRecord, PluginSetRow, PluginStatusRow, PluginStore } from './plugin-store.ts';
import { KEPT_PLUGIN_SETS, MAX_PLUGIN_LOOKUP } from './plugin-store.ts';
import { assertRunId, isNodeName } from '../runs/run-validation.ts';
import {
  columnDate,
  columnNumber,
  columnString,
  columnStringOrNull,
  type SqlDriver,
  type SqlSession,
  type SqlValue,
  type TableNames,
} from '../sql/sql-driver.ts';
import { StoreError, StoreErrorCode } from '../store-error.ts';

/** Rows per multi-row statement. */
const BATCH = 500;

/** Longest site or plugin name. */
const MAX_NAME = 253;

function invalid(message: string): StoreError {
  return new StoreError(StoreErrorCode.InvalidArgument, message);
}

function assertName(what: string, name: unknown): asserts name is string {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_NAME || name.includes('\0')) {
    throw invalid(`${what} must be a non-empty string of at most ${MAX_NAME} characters without NUL`);
  }
}

function assertSetId(id: unknown): asserts id is number {
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 0) throw invalid(`plugin set must be a non-negative integer, got ${String(id)}`);
}

function nullableNumber(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value);
}

async function setRecord(s: SqlSession, t: TableNames, id: number): Promise<PluginSetRecord | null> {
  const [row] = await s.all(`SELECT id, site, created_at, digest FROM ${t.pluginSets} WHERE id = ?`, [id]);
  if (!row) return null;
  const plugins = await s.all(`SELECT plugin, digest, polled_at, node_count, label_count FROM ${t.pluginSetPlugins} WHERE set_id = ? ORDER BY plugin`, [id]);
  return {
    id: columnNumber(row, 'id'),
    site: columnString(row, 'site'),
    createdAt: columnDate(row, 'created_at'),
    digest: columnString(row, 'digest'),
    plugins: plugins.map((p) => ({
      plugin: columnString(p, 'plugin'),
      digest: columnString(p, 'digest'),
      polledAt: columnDate(p, 'polled_at'),
      nodes: columnNumber(p, 'node_count'),
      labels: columnNumber(p, 'label_count'),
    })),
  };
}

/** Forgets the site's sets neither among the newest nor pinned by a run. */
async function prune(s: SqlSession, t: TableNames, site: string): Promise<void> {
  const old = await s.all(
    `SELECT id FROM ${t.pluginSets} WHERE site = ?
       AND id NOT IN (SELECT id FROM ${t.pluginSets} WHERE site = ? ORDER BY id DESC LIMIT ${KEPT_PLUGIN_SETS})
       AND id NOT IN (SELECT set_id FROM ${t.runPluginSets})`,
    [site, site],
  );
  for (const row of old) {
    const id = columnNumber(row, 'id');
    await s.run(`DELETE FROM ${t.pluginSetLabels} WHERE set_id = ?`, [id]);
    await s.run(`DELETE FROM ${t.pluginSetPlugins} WHERE set_id = ?`, [id]);
    await s.run(`DELETE FROM ${t.pluginSets} WHERE id = ?`, [id]);
  }
}

/** Writes one plugin of set `id`: carried from an earlier set as it was, or fresh, its labels in batches of {@link BATCH} rows. */
async function insertPart(s: SqlSession, t: TableNames, id: number, part: FreshPluginPart | CarriedPluginPart): Promise<void> {
  if ('carryFrom' in part) {
    const copied = await s.run(
      `INSERT INTO ${t.pluginSetPlugins} (set_id, plugin, digest, polled_at, node_count, label_count)
       SELECT ?, plugin, digest, polled_at, node_count, label_count FROM ${t.pluginSetPlugins} WHERE set_id = ? AND plugin = ?`,
      [id, part.carryFrom, part.plugin],
    );
    if (copied === 0) throw invalid(`plugin ${part.plugin} is not in plugin set ${part.carryFrom}`);
    await s.run(
      `INSERT INTO ${t.pluginSetLabels} (set_id, node, plugin, labels) SELECT ?, node, plugin, labels FROM ${t.pluginSetLabels} WHERE set_id = ? AND plugin = ?`,
      [id, part.carryFrom, part.plugin],
    );
    return;
  }
  const rows = Object.entries(part.labels);
  const labelCount = rows.reduce((n, [, labels]) => n + Object.keys(labels).length, 0);
  await s.run(`INSERT INTO ${t.pluginSetPlugins} (set_id, plugin, digest, polled_at, node_count, label_count) VALUES (?, ?, ?, ?, ?, ?)`, [
    id,
    part.plugin,
    part.digest,
    part.polledAt.toISOString(),
    rows.length,
    labelCount,
  ]);
  for (let i = 0; i < rows.length; i += BATCH) {
    const chunk = rows.slice(i, i + BATCH);
    const params = chunk.flatMap(([node, labels]): SqlValue[] => [id, node, part.plugin, JSON.stringify(labels)]);
    await s.run(`INSERT INTO ${t.pluginSetLabels} (set_id, node, plugin, labels) VALUES ${chunk.map(() => '(?, ?, ?, ?)').join(', ')}`, params);
  }
}

/** A plugin status row as the store returns it. */
function statusRow(row: Record<string, unknown>): PluginStatusRow {
  const lastGoodAt = row.last_good_at === null || row.last_good_at === undefined ? null : columnDate(row, 'last_good_at');
  return {
    site: columnString(row, 'site'),
    plugin: columnString(row, 'plugin'),
    polledAt: columnDate(row, 'polled_at'),
    ok: columnNumber(row, 'ok') === 1,
    error: columnStringOrNull(row, 'error'),
    lastGoodAt,
    lastGoodSet: nullableNumber(row.last_good_set),
    nodes: nullableNumber(row.node_count),
    labels: nullableNumber(row.label_count),
  };
}

/** The plugin sets: saving one (and forgetting old ones), reading one, its labels and rows. */
function setStore(driver: SqlDriver): Pick<PluginStore, 'saveSet' | 'latestSet' | 'getSet' | 'labels' | 'rows'> {
  const t = driver.tables;
  return {
    async saveSet(input) {
      assertName('site', input.site);
      assertName('digest', input.digest);
      const seen = new Set<string>();
      for (const part of input.parts) {
        assertName('plugin', part.plugin);
        if (seen.has(part.plugin)) throw invalid(`plugin ${part.plugin} is given twice`);
        seen.add(part.plugin);
        if ('carryFrom' in part) assertSetId(part.carryFrom);
        else
          for (const node of Object.keys(part.labels))
            if (!isNodeName(node)) throw invalid(`plugin ${part.plugin}: invalid node name ${JSON.stringify(String(node).slice(0, 300))}`);
      }
      return driver.write(async (s) => {
        const [last] = await s.all(`SELECT COALESCE(MAX(id), 0) AS last FROM ${t.pluginSets}`);
        const id = (last ? columnNumber(last, 'last') : 0) + 1;
        await s.run(`INSERT INTO ${t.pluginSets} (id, site, created_at, digest) VALUES (?, ?, ?, ?)`, [id, input.site, new Date().toISOString(), input.digest]);
        for (const part of input.parts) {
          await insertPart(s, t, id, part);
        }
        await prune(s, t, input.site);
        const record = await setRecord(s, t, id);
        if (!record) throw new Error(`plugin set ${id} vanished inside its own transaction`);
        return record;
      });
    },

    async latestSet(site) {
      assertName('site', site);
      return driver.read(async (s) => {
        const [row] = await s.all(`SELECT MAX(id) AS id FROM ${t.pluginSets} WHERE site = ?`, [site]);
        const id = nullableNumber(row?.id);
        return id === null ? null : setRecord(s, t, id);
      });
    },

    async getSet(id) {
      assertSetId(id);
      return driver.read((s) => setRecord(s, t, id));
    },

    async labels(id, nodes) {
      assertSetId(id);
      if (nodes.length > MAX_PLUGIN_LOOKUP) throw invalid(`at most ${MAX_PLUGIN_LOOKUP} nodes are looked up at once, got ${nodes.length}`);
      const names = [...new Set(nodes.filter(isNodeName))];
      const found = new Map<string, PluginEntry[]>();
      if (names.length === 0) return found;
      await driver.read(async (s) => {
        for (let i = 0; i < names.length; i += BATCH) {
          const chunk = names.slice(i, i + BATCH);
          const rows = await s.all(
            `SELECT node, plugin, labels FROM ${t.pluginSetLabels} WHERE set_id = ? AND node IN (${chunk.map(() => '?').join(', ')}) ORDER BY node, plugin`,
            [id, ...chunk],
          );
          for (const row of rows) {
            const node = columnString(row, 'node');
            const entry = { plugin: columnString(row, 'plugin'), labels: JSON.parse(columnString(row, 'labels')) as Record<string, string> };
            found.set(node, [...(found.get(node) ?? []), entry]);
          }
        }
      });
      return found;
    },

    async rows(id, query) {
      assertSetId(id);
      if (!Number.isSafeInteger(query.limit) || query.limit < 1 || query.limit > 5000) throw invalid(`limit must be 1 to 5000, got ${String(query.limit)}`);
      const after = query.after;
      const rows = await driver.read((s) =>
        after
          ? s.all(
              `SELECT node, plugin, labels FROM ${t.pluginSetLabels} WHERE set_id = ? AND (node > ? OR (node = ? AND plugin > ?)) ORDER BY node, plugin LIMIT ?`,
              [id, after.node, after.node, after.plugin, query.limit],
            )
          : s.all(`SELECT node, plugin, labels FROM ${t.pluginSetLabels} WHERE set_id = ? ORDER BY node, plugin LIMIT ?`, [id, query.limit]),
      );
      return rows.map((row): PluginSetRow => ({
        node: columnString(row, 'node'),
        plugin: columnString(row, 'plugin'),
        labels: JSON.parse(columnString(row, 'labels')) as Record<string, string>,
      }));
    },
  };
}

/** Each site's plugins' last poll: how it went, and their last good set. */
function statusStore(driver: SqlDriver): Pick<PluginStore, 'setStatus' | 'status'> {
  const t = driver.tables;
  return {
    async setStatus(site, polledAt, updates) {
      assertName('site', site);
      for (const u of updates) assertName('plugin', u.plugin);
      const at = polledAt.toISOString();
      await driver.write(async (s) => {
        const listed = updates.map((u) => u.plugin);
        await s.run(`DELETE FROM ${t.pluginStatus} WHERE site = ?${listed.length > 0 ? ` AND plugin NOT IN (${listed.map(() => '?').join(', ')})` : ''}`, [
          site,
          ...listed,
        ]);
        for (const u of updates) {
          const error = u.ok ? null : (u.error ?? 'failed');
          const counts = [u.nodes ?? null, u.labels ?? null];
          if (u.ok) {
            await s.run(
              `INSERT INTO ${t.pluginStatus} (site, plugin, polled_at, ok, error, last_good_at, last_good_set, node_count, label_count) VALUES (?, ?, ?, 1, NULL, ?, ?, ?, ?)
               ON CONFLICT (site, plugin) DO UPDATE SET polled_at = excluded.polled_at, ok = 1, error = NULL, last_good_at = excluded.last_good_at,
                 last_good_set = excluded.last_good_set, node_count = excluded.node_count, label_count = excluded.label_count`,
              [site, u.plugin, at, at, u.set ?? null, ...counts],
            );
          } else {
            await s.run(
              `INSERT INTO ${t.pluginStatus} (site, plugin, polled_at, ok, error, last_good_at, last_good_set, node_count, label_count) VALUES (?, ?, ?, 0, ?, NULL, NULL, NULL, NULL)
               ON CONFLICT (site, plugin) DO UPDATE SET polled_at = excluded.polled_at, ok = 0, error = excluded.error`,
              [site, u.plugin, at, error],
            );
          }
        }
      });
    },

    async status(site) {
      if (site !== undefined) assertName('site', site);
      const rows = await driver.read((s) =>
        site === undefined
          ? s.all(`SELECT * FROM ${t.pluginStatus} ORDER BY site, plugin`)
          : s.all(`SELECT * FROM ${t.pluginStatus} WHERE site = ? ORDER BY plugin`, [site]),
      );
      return rows.map(statusRow);
    },
  };
}

/** The plugin set each run applies, pinned once. */
function pinStore(driver: SqlDriver): Pick<PluginStore, 'pinRun' | 'pinnedSet'> {
  const t = driver.tables;
  return {
    async pinRun(run, set) {
      assertRunId(run);
      assertSetId(set);
      return driver.write(async (s) => {
        await s.run(`INSERT INTO ${t.runPluginSets} (run_id, set_id) VALUES (?, ?) ON CONFLICT (run_id) DO NOTHING`, [run, set]);
        const [row] = await s.all(`SELECT set_id FROM ${t.runPluginSets} WHERE run_id = ?`, [run]);
        return row ? columnNumber(row, 'set_id') : set;
      });
    },

    async pinnedSet(run) {
      assertRunId(run);
      const [row] = await driver.read((s) => s.all(`SELECT set_id FROM ${t.runPluginSets} WHERE run_id = ?`, [run]));
      return row ? columnNumber(row, 'set_id') : null;
    },
  };
}

/** The {@link PluginStore} over `driver`. */
export function sqlPluginStore(driver: SqlDriver): PluginStore {
  return { ...setStore(driver), ...statusStore(driver), ...pinStore(driver) };
}
