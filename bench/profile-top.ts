/**
 * `node bench/profile-top.ts [--top 25] [--by function|file] [--window FROM,TO] <.cpuprofile files or directories>`:
 * the functions (or source files) that took the most CPU time by self
 * time, over every profile given (a worker's main thread and its workflow
 * threads write one each), with the busy time they share; with `--window`,
 * only the samples taken in it (microseconds of the monotonic clock, as a
 * pass's `profileWindowUs` gives its timed run). Reads what `--cpu-prof`
 * writes; see bench/e2e.ts for profiling each pass's worker.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

/** The parts of a V8 `.cpuprofile` read here. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  /** When profiling started, in microseconds of the monotonic clock (`process.hrtime`'s). */
  startTime?: number;
  samples?: number[];
  timeDeltas?: number[];
}

/**
 * Self time in microseconds by key (a function and where it is, or its
 * file), over `profiles`; with `window` ([from, to] µs of the monotonic
 * clock), only of the samples taken in it.
 */
export function selfTimes(profiles: readonly CpuProfile[], by: 'function' | 'file' = 'function', window?: readonly [number, number]): Map<string, number> {
  const times = new Map<string, number>();
  for (const profile of profiles) {
    const keyOf = new Map(
      profile.nodes.map((n) => {
        const { functionName, url, lineNumber } = n.callFrame;
        const file = url.replace(/^file:\/\//, '') || '(native)';
        return [n.id, by === 'file' ? file : `${functionName || '(anonymous)'} ${file}:${lineNumber + 1}`];
      }),
    );
    // A sample's delta is the time since the one before: it is charged to the sample's node.
    let at = profile.startTime ?? 0;
    (profile.samples ?? []).forEach((id, i) => {
      const delta = profile.timeDeltas?.[i] ?? 0;
      at += delta;
      if (window && (at < window[0] || at > window[1])) return;
      const key = keyOf.get(id) ?? '?';
      times.set(key, (times.get(key) ?? 0) + delta);
    });
  }
  return times;
}

/** Every `.cpuprofile` under `paths` (files as given, directories searched). */
function profileFiles(paths: readonly string[]): string[] {
  return paths.flatMap((p) =>
    statSync(p).isDirectory()
      ? readdirSync(p, { recursive: true, encoding: 'utf8' })
          .filter((f) => f.endsWith('.cpuprofile'))
          .map((f) => join(p, f))
      : [p],
  );
}

/** The report: busy milliseconds (idle left out), then the top `top` keys by self time with their share of the busy time. */
export function topLines(times: Map<string, number>, top: number): string[] {
  const busy = [...times].filter(([k]) => !k.startsWith('(idle)'));
  const total = busy.reduce((sum, [, us]) => sum + us, 0);
  const lines = [`busy ${(total / 1000).toFixed(0)} ms (idle left out)`, '   self ms      %  function'];
  for (const [key, us] of busy.sort((a, b) => b[1] - a[1]).slice(0, top)) {
    lines.push(`${(us / 1000).toFixed(1).padStart(10)} ${((100 * us) / total).toFixed(1).padStart(6)}  ${key}`);
  }
  return lines;
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { top: { type: 'string', default: '25' }, by: { type: 'string', default: 'function' }, window: { type: 'string' } },
  });
  const files = profileFiles(positionals);
  const window = values.window?.split(',').map(Number);
  if (files.length === 0 || (values.by !== 'function' && values.by !== 'file') || (window && (window.length !== 2 || window.some(Number.isNaN)))) {
    console.error('usage: node bench/profile-top.ts [--top 25] [--by function|file] [--window FROM,TO] <.cpuprofile files or directories>');
    process.exit(2);
  }
  const profiles = files.map((f) => JSON.parse(readFileSync(f, 'utf8')) as CpuProfile);
  console.log(`${files.length} profile(s): ${files.join(', ')}`);
  const times = selfTimes(profiles, values.by, window as [number, number] | undefined);
  for (const line of topLines(times, Number(values.top))) console.log(line);
}
