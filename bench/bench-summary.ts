/**
 * The end-to-end benchmark's closing summary (see bench/e2e.ts): a table of
 * every timed row, then per size relabel's ratio to the engine floor on each
 * Temporal measured.
 */
import { rows } from './bench-report.ts';
import type { StackTemporal } from '../stack/stack.ts';

/** The summary table's columns, from each row (then where the time went per changed node, and ok). */
const SUMMARY_COLUMNS = [
  'nodes',
  'temporal',
  'pass',
  'seconds',
  'p50Ms',
  'p95Ms',
  'p99Ms',
  'maxMs',
  'ratioToFloor',
  'ratioToEngineFloor',
  'relabelRatio',
  'nodesPerSecond',
  'writesCounted',
  'refused',
  'children',
  'eventsPerChangedNode',
  'largestPayloadKB',
  'workerPeakRssMiB',
] as const;

/**
 * Where the time went, per changed node: Temporal server CPU ms (the dev
 * server, or temporal-server and, apart, its PostgreSQL), worker CPU ms, the
 * server's database and visibility operations.
 */
function perNode(r: Record<string, unknown>): Record<string, number | undefined> {
  const cpu = r.cpuMsPerChangedNode as Record<string, number> | null | undefined;
  const server = r.temporalServer as { dbOpsPerChangedNode?: number; visibilityOpsPerChangedNode?: number } | undefined;
  return {
    temporalMs: cpu?.temporal ?? cpu?.['temporal-server'],
    temporalPgMs: cpu?.['temporal-postgres'],
    workerMs: cpu?.worker,
    dbOps: server?.dbOpsPerChangedNode,
    visOps: server?.visibilityOpsPerChangedNode,
  };
}

/**
 * What a write and a child carry: the worker's bytes, JSON Patch operations
 * and `test`s per Node write, the nodes' KB afterwards, the parent's events
 * per child, a child's input and result bytes.
 */
function perWrite(r: Record<string, unknown>): Record<string, number | null | undefined> {
  const worker = (r.nodeWrites as { worker?: Record<string, number | null> } | undefined)?.worker;
  const node = r.nodeSize as { bytes?: number } | undefined;
  const child = r.child as { inputBytes?: number; resultBytes?: number } | undefined;
  return {
    writeB: worker?.bytesPerWrite,
    ops: worker?.opsPerWrite,
    tests: worker?.testOpsPerWrite,
    nodeKB: node?.bytes === undefined ? undefined : +(node.bytes / 1024).toFixed(1),
    parentEv: r.parentEventsPerChild as number | undefined,
    childInB: child?.inputBytes,
    childOutB: child?.resultBytes,
  };
}

/** The seconds of the row of `pass` at `nodes` on `temporal`, if measured. */
function secondsOf(nodes: unknown, temporal: StackTemporal, pass: string): number | undefined {
  const row = rows.find((r) => r.nodes === nodes && r.temporal === temporal && r.pass === pass && typeof r.seconds === 'number');
  return row?.seconds as number | undefined;
}

/**
 * One line per size: relabel's every-node-changed time over the engine
 * floor's on each Temporal of `temporals` (the two times beside it).
 */
export function ratioLines(temporals: readonly StackTemporal[]): string[] {
  const sizes = [...new Set(rows.map((r) => r.nodes))];
  const lines: string[] = [];
  for (const nodes of sizes) {
    const each = temporals.flatMap((temporal) => {
      const [relabel, engine] = [secondsOf(nodes, temporal, 'all-changed'), secondsOf(nodes, temporal, 'engine-floor')];
      if (relabel === undefined || engine === undefined) return [];
      const again = secondsOf(nodes, temporal, 'engine-floor-again');
      const both =
        again === undefined
          ? ''
          : `; engine floor again after it ${again} s: ${(relabel / again).toFixed(2)}; mean of both ${(relabel / ((engine + again) / 2)).toFixed(2)}`;
      return [`${temporal} ${(relabel / engine).toFixed(2)} (${relabel} s / ${engine} s${both})`];
    });
    if (each.length > 0) lines.push(`# relabel ÷ engine floor, every node changed, ${String(nodes)} nodes: ${each.join(', ')}`);
  }
  return lines;
}

/**
 * One line per size where both ran: the every-node-changed time of the
 * nodes as node-set members over theirs as named nodes, on each Temporal
 * (bench/member-passes.ts).
 */
export function memberRatioLines(temporals: readonly StackTemporal[]): string[] {
  const sizes = [...new Set(rows.map((r) => r.nodes))];
  return sizes.flatMap((nodes) => {
    const each = temporals.flatMap((temporal) => {
      const [members, named] = [secondsOf(nodes, temporal, 'members-changed'), secondsOf(nodes, temporal, 'all-changed')];
      return members === undefined || named === undefined ? [] : [`${temporal} ${(members / named).toFixed(2)} (${members} s / ${named} s)`];
    });
    return each.length > 0 ? [`# node-set members ÷ named nodes, every node changed, ${String(nodes)} nodes: ${each.join(', ')}`] : [];
  });
}

/** One line per quiet measured before a pass (`--idle-seconds`): the stack's CPU a second then, and the nodes' size. */
export function idleLines(): string[] {
  return rows
    .filter((r) => typeof r.pass === 'string' && r.pass.startsWith('idle before ') && r.idleTotalMsPerSecond !== undefined)
    .map((r) => {
      const parts = Object.entries((r.idleCpuMsPerSecond ?? {}) as Record<string, number>)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
      return `# ${String(r.nodes)} nodes, ${String(r.pass)} (nodes of ${String(r.nodeBytes)} bytes): ${String(r.idleTotalMsPerSecond)} CPU ms/s (${parts})`;
    });
}

/** Prints the summary table and the ratio lines. */
export function printSummary(temporals: readonly StackTemporal[]): void {
  console.log('\n# summary');
  console.table(
    rows
      .filter((r) => r.seconds !== undefined)
      .map((r) => ({ ...Object.fromEntries(SUMMARY_COLUMNS.map((k) => [k, r[k]])), ...perNode(r), ...perWrite(r), ok: r.ok })),
  );
  for (const line of [...idleLines(), ...ratioLines(temporals), ...memberRatioLines(temporals)]) console.log(line);
}
