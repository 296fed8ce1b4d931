/**
 * The action part of the store: a run seen as a Shipyard action, with
 * Temporal's run id of its first execution and the commands issued against
 * it (`invoke`, `stop`, `pause`, `unpause`).
 */

/** A command issued against a run's action, as Shipyard's command audit lists it. */
export interface ActionCommand {
  /** A ULID. */
  id: string;
  /** `invoke` (recorded when the run is created), `stop`, `pause`, `unpause`. */
  command: string;
  /** Who issued it; null when unknown. */
  user: string | null;
  at: Date;
}

/** Most commands {@link ActionStore.commands} returns. */
export const MAX_ACTION_COMMANDS = 100;

/**
 * The action part of the store. Every method is atomic; StoreError
 * InvalidArgument for bad input, NotFound for an absent run. Command ids are
 * ULIDs that increase across processes.
 */
export interface ActionStore {
  /**
   * Records Temporal's run id of the run's first execution, so that its
   * action id finds it. NotFound when the run is absent; InvalidArgument for
   * a run id that is empty or longer than 128 characters.
   */
  setExecution(id: number, runId: string): Promise<void>;
  /**
   * Appends a command to a run's command audit and returns it (its id a
   * fresh ULID). NotFound when the run is absent; InvalidArgument for a
   * command that is not 1 to 32 lowercase letters or underscores, or a user
   * that is empty or longer than 128 characters.
   */
  recordCommand(id: number, command: string, user: string | null): Promise<ActionCommand>;
  /**
   * The newest `limit` (1 to {@link MAX_ACTION_COMMANDS}) commands of a run,
   * oldest first; none for an absent run. InvalidArgument for a bad limit.
   */
  commands(id: number, limit?: number): Promise<ActionCommand[]>;
}
