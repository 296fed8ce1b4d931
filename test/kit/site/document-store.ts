/**
 * Test support for the facade's unit tests: a documents facade over a fresh
 * in-memory SQLite store.
 */
import { openStore } from '../../../src/store/open-store.ts';
import { createDocuments } from '../../../src/facade/documents/documents.ts';

/** Runs `body` with a documents facade over a fresh in-memory store, closed afterwards. */
export async function withDocuments(body: (documents: ReturnType<typeof createDocuments>) => Promise<void>): Promise<void> {
  const store = await openStore('sqlite::memory:');
  try {
    await body(createDocuments(store));
  } finally {
    await store.close();
  }
}
