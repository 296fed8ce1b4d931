/**
 * The action part of the store in SQL: a run's Temporal run id and its
 * command audit (Shipyard's `invoke`, `stop`, `pause`, `unpause`), over a
 * {@link SqlDriver}. Ids are ULIDs that increase across processes: each is
 * drawn under the store-wide write lock, above every id already stored.
 */
import type { ActionCommand, ActionStore } from './action-store.ts';
import { MAX_ACTION_COMMANDS } from './action-store.ts';
import { assertRunId } from './run-validation.ts';
import { columnDate, columnString, columnStringOrNull, type SqlDriver, type SqlRow, type SqlSession } from '../sql/sql-driver.ts';
import { StoreError, StoreErrorCode } from '../store-error.ts';
import { isUlid, newUlid, nextUlid } from '../ulid.ts';

/** A fresh ULID greater than every one the store holds in `table`.`column`, so ids increase across processes too (call it under the write lock). */
export async function freshUlid(s: SqlSession, table: string, column: string): Promise<string> {
  const [row] = await s.all(`SELECT MAX(${column}) AS last FROM ${table}`);
  const last = row ? columnStringOrNull(row, 'last') : null;
  const id = newUlid();
  return last !== null && isUlid(last) && last >= id ? nextUlid(last) : id;
}

function actionCommand(row: SqlRow): ActionCommand {
  return { id: columnString(row, 'id'), command: columnString(row, 'command'), user: columnStringOrNull(row, 'issued_by'), at: columnDate(row, 'issued_at') };
}

const COMMAND = /^[a-z_]{1,32}$/;

/** Throws InvalidArgument for a command or user {@link ActionStore.recordCommand} refuses. */
function assertCommand(command: string, user: string | null): void {
  if (typeof command !== 'string' || !COMMAND.test(command)) {
    throw new StoreError(
      StoreErrorCode.InvalidArgument,
      `invalid action command ${JSON.stringify(String(command).slice(0, 40))}: expected 1 to 32 lowercase letters or underscores`,
    );
  }
  if (user !== null && (typeof user !== 'string' || user.length === 0 || user.length > 128)) {
    throw new StoreError(StoreErrorCode.InvalidArgument, 'invalid command user: expected a non-empty string of at most 128 characters, or null');
  }
}

/** NotFound for run `id`. */
export function runNotFound(id: number): StoreError {
  return new StoreError(StoreErrorCode.NotFound, `run ${id} not found`);
}

/** The {@link ActionStore} over `driver`. */
export function sqlActionStore(driver: SqlDriver): ActionStore {
  const t = driver.tables;
  return {
    async setExecution(id, runId) {
      assertRunId(id);
      if (typeof runId !== 'string' || runId.length === 0 || runId.length > 128) {
        throw new StoreError(StoreErrorCode.InvalidArgument, 'invalid execution run id: expected a non-empty string of at most 128 characters');
      }
      const changed = await driver.write((s) => s.run(`UPDATE ${t.runs} SET execution_run_id = ? WHERE id = ?`, [runId, id]));
      if (changed === 0) throw runNotFound(id);
    },

    async recordCommand(id, command, user) {
      assertRunId(id);
      assertCommand(command, user);
      return driver.write(async (s) => {
        if ((await s.all(`SELECT 1 AS found FROM ${t.runs} WHERE id = ?`, [id])).length === 0) throw runNotFound(id);
        const recorded: ActionCommand = { id: await freshUlid(s, t.runCommands, 'id'), command, user, at: new Date() };
        await s.run(`INSERT INTO ${t.runCommands} (id, run_id, command, issued_by, issued_at) VALUES (?, ?, ?, ?, ?)`, [
          recorded.id,
          id,
          command,
          user,
          recorded.at.toISOString(),
        ]);
        return recorded;
      });
    },

    async commands(id, limit = MAX_ACTION_COMMANDS) {
      assertRunId(id);
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_ACTION_COMMANDS) {
        throw new StoreError(StoreErrorCode.InvalidArgument, `invalid limit ${String(limit)}: expected a whole number from 1 to ${MAX_ACTION_COMMANDS}`);
      }
      const rows = await driver.read((s) =>
        s.all(`SELECT id, command, issued_by, issued_at FROM ${t.runCommands} WHERE run_id = ? ORDER BY id DESC LIMIT ?`, [id, limit]),
      );
      return rows.map(actionCommand).reverse();
    },
  };
}
