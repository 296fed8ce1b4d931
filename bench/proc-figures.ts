/**
 * What the benchmark reads of its processes from /proc: CPU seconds used
 * and peak resident memory.
 */
import { readFileSync } from 'node:fs';
import type { StackInfo } from '../stack/stack.ts';

/** CPU seconds (user + system) a process has used so far; 0 once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** CPU seconds of each stack process, the worker and the bench, for where the time goes. */
export function cpuOf(stack: StackInfo, worker: { pid?: number | undefined }, bench = process.pid): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of stack.processes) out[p.name] = cpuSeconds(p.pid);
  out.worker = cpuSeconds(worker.pid as number);
  out.client = cpuSeconds(bench);
  return out;
}

/** Peak resident memory of a process, in MiB (VmHWM). */
export function peakRssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmHWM:'));
  return Math.round(Number(line?.split(/\s+/)[1] ?? 0) / 1024);
}
