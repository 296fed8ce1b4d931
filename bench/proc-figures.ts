/**
 * What the benchmark reads of its processes from /proc: CPU seconds used
 * and peak resident memory; and of the whole machine, how busy its CPUs
 * were and what the hypervisor took from them.
 */
import { readdirSync, readFileSync } from 'node:fs';
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

/** The fields of /proc/`pid`/stat after the command, or none once it is gone. */
function statFields(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  } catch {
    return [];
  }
}

/**
 * CPU seconds a process and every process under it have used so far: the
 * live ones', and what the ones already gone and waited for had used. A
 * PostgreSQL server does its work in a backend process per connection.
 */
export function treeCpuSeconds(pid: number): number {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const parent = Number(statFields(Number(entry))[1]);
    children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
  }
  let ticks = 0;
  const todo = [pid];
  for (let next = todo.pop(); next !== undefined; next = todo.pop()) {
    const f = statFields(next);
    // utime, stime, and the waited-for children's cutime, cstime.
    if (f.length > 14) ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    todo.push(...(children.get(next) ?? []));
  }
  return ticks / 100;
}

/** CPU seconds of each stack process, with the processes under it. */
export function stackCpuOf(stack: StackInfo): Record<string, number> {
  return Object.fromEntries(stack.processes.map((p) => [p.name, treeCpuSeconds(p.pid)]));
}

/** CPU seconds of each stack process (with the processes under it), the worker and the bench, for where the time goes. */
export function cpuOf(stack: StackInfo, worker: { pid?: number | undefined }, bench = process.pid): Record<string, number> {
  return { ...stackCpuOf(stack), worker: cpuSeconds(worker.pid as number), client: cpuSeconds(bench) };
}

/** Peak resident memory of a process, in MiB (VmHWM). */
export function peakRssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmHWM:'));
  return Math.round(Number(line?.split(/\s+/)[1] ?? 0) / 1024);
}

/** The machine's CPU seconds so far (/proc/stat, every CPU): busy, idle (with I/O wait), waiting for I/O, and stolen by the hypervisor. */
export function machineCpu(): { busy: number; idle: number; iowait: number; steal: number } {
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] =
    readFileSync('/proc/stat', 'utf8').split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
  return { busy: (user + nice + system + irq + softirq) / 100, idle: (idle + iowait) / 100, iowait: iowait / 100, steal: steal / 100 };
}

/**
 * What the machine did over `seconds` between two {@link machineCpu}
 * readings: cores busy and idle on average, seconds of idle CPU waiting
 * for I/O (a disk stall: the store's commits wait for it), and seconds of
 * CPU the hypervisor gave to others (a pass slowed without using more CPU).
 */
export function machineFigures(before: ReturnType<typeof machineCpu>, after: ReturnType<typeof machineCpu>, seconds: number) {
  const per = (a: number, b: number) => +((b - a) / seconds).toFixed(2);
  const total = (a: number, b: number) => +(b - a).toFixed(1);
  return {
    busyCores: per(before.busy, after.busy),
    idleCores: per(before.idle, after.idle),
    iowaitSeconds: total(before.iowait, after.iowait),
    stealSeconds: total(before.steal, after.steal),
  };
}
