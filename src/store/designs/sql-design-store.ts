/**
 * Validated designs kept with their revision, so a process that needs a
 * revision's design reads it back instead of validating the documents
 * again (a minute of CPU for a site of 50,000 nodes). The store keeps the
 * design as opaque text under a format name; the design cache (which
 * encodes it) names the format after the code that resolved it, so a
 * design resolved by other code is never read. A revision keeps one
 * design: saving replaces the one kept (in any format).
 */
import type { DesignStore } from './design-store.ts';
import { assertRevisionId } from '../store-validation.ts';
import { assertRevisionExists } from '../revisions/revision-lookups.ts';
import { invalid } from '../runs/run-validation.ts';
import { columnString, type SqlDriver } from '../sql/sql-driver.ts';

/** Longest format name. */
const MAX_FORMAT = 64;

function assertFormat(format: string): void {
  if (typeof format !== 'string' || format.length === 0 || format.length > MAX_FORMAT) throw invalid(`a design format needs 1 to ${MAX_FORMAT} characters`);
}

/** The {@link DesignStore} over `driver`. */
export function sqlDesignStore(driver: SqlDriver): DesignStore {
  const t = driver.tables;
  return {
    async get(id, format) {
      assertRevisionId(id);
      assertFormat(format);
      const rows = await driver.read((s) => s.all(`SELECT design FROM ${t.revisionDesigns} WHERE revision_id = ? AND format = ?`, [id, format]));
      const [row] = rows;
      return row === undefined ? null : columnString(row, 'design');
    },

    async save(id, format, design) {
      assertRevisionId(id);
      assertFormat(format);
      if (typeof design !== 'string' || design.length === 0) throw invalid(`revision ${id}: a stored design must be non-empty text`);
      await driver.write(async (s) => {
        await assertRevisionExists(s, t, id);
        await s.run(`DELETE FROM ${t.revisionDesigns} WHERE revision_id = ?`, [id]);
        await s.run(`INSERT INTO ${t.revisionDesigns} (revision_id, format, design) VALUES (?, ?, ?)`, [id, format, design]);
      });
    },
  };
}
