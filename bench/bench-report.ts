/**
 * The benchmark's figures: every row printed as a JSON line as it is
 * measured, kept for the summary, and whether any run did not end as
 * expected (the benchmark then exits non-zero).
 */

/** Every figure printed, for the summary. */
export const rows: Record<string, unknown>[] = [];
let failed = false;
/** Figures every row carries while set (which Temporal the passes run on). */
let context: Record<string, unknown> = {};

/** Adds `figures` to every row reported from now on (until called again). */
export function reportContext(figures: Record<string, unknown>): void {
  context = figures;
}

/** Whether any row reported was not ok. */
export function anyFailed(): boolean {
  return failed;
}

/** Prints `row` (with `ok`, and `why` when not), and keeps it. */
export function report(row: Record<string, unknown>, ok: boolean, why = ''): void {
  rows.push({ ...context, ...row, ok });
  console.log(JSON.stringify({ ...context, ...row, ok, ...(why ? { why } : {}) }));
  if (!ok) failed = true;
}

/** Runs a benchmark's `main`; exits non-zero when it throws or when a row it reported did not succeed. */
export function runBench(main: () => Promise<void>): void {
  main().then(
    () => {
      if (!anyFailed()) return;
      console.error('bench: a measured run did not end as expected (see the rows with ok: false)');
      process.exit(1);
    },
    (err: unknown) => {
      console.error(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      process.exit(1);
    },
  );
}
