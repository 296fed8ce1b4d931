/**
 * What the cluster costs with no pass running (`--idle-seconds N`): before a
 * timed pass, the CPU each stack process uses over N quiet seconds, per
 * second, with the nodes' size then. On the simulated cluster that is the
 * status heartbeats and what the controllers do with them; a pass shares
 * the two cores with it, so a pass run on larger nodes (the passes write the
 * same nodes one after the other) starts with less of the machine left. Give
 * it at least the heartbeat interval: a shorter window sees part of a cycle.
 */
import type { StackInfo } from '../stack/stack.ts';
import { stackCpuOf } from './proc-figures.ts';
import { report } from './bench-report.ts';
import { nodeSizes } from './write-figures.ts';
import { opts } from './bench-options.ts';

/** Seconds of quiet measured before each timed pass that asks for it; 0: none. */
export const idleSeconds = Number(opts['idle-seconds']);

/** CPU milliseconds a second of each stack process over `seconds` quiet seconds, and their sum. */
export async function idleCpu(stack: StackInfo, seconds: number): Promise<{ perSecond: Record<string, number>; totalMsPerSecond: number }> {
  const before = stackCpuOf(stack);
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const elapsed = (performance.now() - t0) / 1000;
  const after = stackCpuOf(stack);
  const perSecond = Object.fromEntries(stack.processes.map((p) => [p.name, Math.round((((after[p.name] ?? 0) - (before[p.name] ?? 0)) * 1000) / elapsed)]));
  return { perSecond, totalMsPerSecond: Object.values(perSecond).reduce((a, b) => a + b, 0) };
}

/** With `--idle-seconds`, measures and reports the quiet before pass `pass` (a row `idle before <pass>`). */
export async function reportIdle(ctx: { stack: StackInfo; size: number; prefix: string }, pass: string): Promise<void> {
  if (!(idleSeconds > 0)) return;
  const { perSecond, totalMsPerSecond } = await idleCpu(ctx.stack, idleSeconds);
  const size = await nodeSizes(ctx.stack.adminKubeconfig, ctx.prefix);
  report(
    { nodes: ctx.size, pass: `idle before ${pass}`, idleSeconds, idleCpuMsPerSecond: perSecond, idleTotalMsPerSecond: totalMsPerSecond, nodeBytes: size.bytes },
    true,
  );
}
