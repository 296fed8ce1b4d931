/**
 * The designs part of the store: each revision's validated design, kept as
 * opaque text under a format name so a process that needs it reads it back
 * instead of validating the documents again. The design cache encodes the
 * design and names the format after the code that resolved it.
 */

/**
 * The designs part of the store. A revision keeps one design: saving
 * replaces the one kept (in any format). InvalidArgument for a bad revision
 * id, format (1 to 64 characters) or empty design.
 */
export interface DesignStore {
  /**
   * The design kept for revision `id` in `format` (opaque text, see
   * {@link DesignStore.save}), or null when none is kept in that format.
   */
  get(id: number, format: string): Promise<string | null>;

  /**
   * Keep `design` (opaque, non-empty text) as revision `id`'s validated
   * design in `format`, in place of the one kept before (in any format).
   * NotFound when the revision is absent.
   */
  save(id: number, format: string, design: string): Promise<void>;
}
