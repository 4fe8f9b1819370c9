// Small statistics for the bench: latency percentiles (nearest rank), rounds pooled, and the median of repeated runs.

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

/**
 * Latency over several rounds, every sample counted: the percentiles of all rounds' samples pooled, the worst round
 * (the one with the highest p99) beside them, and the spread of each round's p50 and p99.
 */
export interface Pooled extends Percentiles {
  rounds: Percentiles[];
  worst: Percentiles & { round: number };
  spread: { p50: [number, number]; p99: [number, number]; max: [number, number] };
}

export function pooled(rounds: number[][]): Pooled {
  const each = rounds.map((samples) => percentiles(samples));
  const all = percentiles(rounds.flat());
  let worst = 0;
  each.forEach((r, i) => {
    if (r.p99 > each[worst]!.p99) worst = i;
  });
  const range = (pick: (p: Percentiles) => number): [number, number] => [
    Math.min(...each.map(pick)),
    Math.max(...each.map(pick)),
  ];
  return {
    ...all,
    rounds: each,
    worst: { ...(each[worst] ?? percentiles([])), round: worst + 1 },
    spread: { p50: range((p) => p.p50), p99: range((p) => p.p99), max: range((p) => p.max) },
  };
}

/** "worst round 2: p50 / p99 / max …; rounds' p99 a–b ms" for a table's note. */
export function describePooled(p: Pooled): string {
  const w = p.worst;
  return `worst round (${w.round} of ${p.rounds.length}): p50 ${w.p50} / p99 ${w.p99} / max ${w.max} ms; rounds' p50 ${p.spread.p50[0]}–${p.spread.p50[1]}, p99 ${p.spread.p99[0]}–${p.spread.p99[1]}, max ${p.spread.max[0]}–${p.spread.max[1]} ms`;
}
