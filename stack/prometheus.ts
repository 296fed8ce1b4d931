/**
 * Prometheus text read by the tests and benchmarks of the local stack: the
 * counters the servers and the worker publish on their /metrics.
 */

/** One series of Prometheus text: its metric name, its labels and its value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/**
 * Every series in Prometheus text, or only those of metric `name`; comments
 * and lines that are not a series are passed over.
 */
export function* samples(text: string, name?: string): Generator<Sample> {
  for (const line of text.split('\n')) {
    // A server's text runs to megabytes: the metric's name is checked before the line is parsed.
    if (name !== undefined && !line.startsWith(name)) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? ([0-9.eE+-]+|NaN|\+Inf)$/.exec(line);
    if (!match) continue;
    if (name !== undefined && match[1] !== name) continue;
    const labels = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1] as string, m[2] as string]),
    );
    yield { name: match[1] as string, labels, value: Number(match[3]) };
  }
}

/**
 * The value of metric `name` in Prometheus text: the sum over its series whose
 * labels include `labels`; 0 when there is none.
 */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const s of samples(text, name)) {
    if (Object.entries(labels).every(([k, v]) => s.labels[k] === v)) sum += s.value;
  }
  return sum;
}
