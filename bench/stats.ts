// Small statistics for the bench: latency percentiles (nearest rank) and the median of repeated runs.

export interface Percentiles {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentiles of raw samples (milliseconds), rounded to 0.1 ms. */
export function percentiles(samples: number[]): Percentiles {
  const sorted = Float64Array.from(samples).sort();
  const at = (p: number) =>
    sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : 0;
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    count: sorted.length,
    p50: round(at(50)),
    p90: round(at(90)),
    p99: round(at(99)),
    max: round(sorted.at(-1) ?? 0),
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The median of each numeric field over several runs of the same shape. */
export function medianOf<T extends { [K in keyof T]: number }>(runs: T[]): T {
  const out: Record<string, number> = {};
  for (const key of Object.keys(runs[0] ?? {})) out[key] = median(runs.map((r) => (r as Record<string, number>)[key]!));
  return out as T;
}
