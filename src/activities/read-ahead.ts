/**
 * Reading ahead by one: the next item of an async source is requested as
 * soon as the current one is handed out, so the API server serialises the
 * next page of nodes while the worker plans this one (two cores at work
 * instead of one taking turns). Holds at most one item more than the
 * caller; errors surface where the caller asks for the item that failed.
 */

/** `source`, one item read ahead. */
export async function* readAhead<T>(source: AsyncIterable<T>): AsyncGenerator<T, void, undefined> {
  const it = source[Symbol.asyncIterator]();
  let next = it.next();
  let finished = false;
  try {
    for (;;) {
      const step = await next;
      if (step.done === true) {
        finished = true;
        return;
      }
      next = it.next();
      // A caller that stops now never awaits the read ahead: its failure must not go unhandled.
      next.catch(() => undefined);
      yield step.value;
    }
  } finally {
    if (!finished) {
      // Stopped early, or the source failed: let the read ahead settle, then close the source.
      await next.catch(() => undefined);
      await it.return?.();
    }
  }
}
