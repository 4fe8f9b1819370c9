// The Overview's chart of calls per day by outcome (the last 7 or 30 UTC days), laid out on the server as numbers an
// SVG in overview.eta draws (stacked bars, no script), with the same numbers as a table and a summary for assistive
// technology. Answered calls count by the runtime's outcome label; the others as busy, no answer, voicemail or failed.
import { AGENT_OUTCOME_PREFIX, type DayOutcome } from '../../storage/index.js';

export const CHART_RANGES = [7, 30] as const;
export type ChartDays = (typeof CHART_RANGES)[number];
/** The runtime's labels shown on their own (the most frequent of the range); the rest are "other outcomes". */
export const CHART_LABELS_MAX = 6;

const DAY_MS = 86_400_000;
// Colours that read on the page's white (at least 3:1, WCAG 1.4.11), told apart from their neighbours; never the only
// cue: each series is named in the legend, each bar's part in its tooltip, each number in the table.
const LABEL_COLOURS = ['#1d4ed8', '#7c3aed', '#0e7490', '#c026d3', '#1e3a8a', '#4d7c0f'];
const FIXED = {
  other: { label: 'other outcomes', colour: '#334155' },
  answered: { label: 'answered, no outcome reported', colour: '#067647' },
  voicemail: { label: 'voicemail', colour: '#6b7280' },
  no_answer: { label: 'no answer', colour: '#8a4b00' },
  busy: { label: 'busy', colour: '#d97706' },
  failed: { label: 'failed otherwise', colour: '#b42318' },
} as const;

// The plot's geometry, in the SVG's own units (it scales to the page's width).
const PLOT = { top: 10, height: 180, left: 44, right: 20, bottom: 26 };
// About the same width for both ranges (the SVG scales to the page's width): its text keeps one size.
const SLOT: Record<ChartDays, number> = { 7: 130, 30: 30 };

export interface ChartSeries {
  key: string;
  label: string;
  colour: string;
  /** Whether the label is the runtime's own (shown as code, and a link to its calls in the Calls list). */
  runtime: boolean;
  total: number;
}

export interface ChartModel {
  days: ChartDays;
  /** The two ranges, each a link to the Overview with it (the current one not a link). */
  ranges: { days: ChartDays; href: string; current: boolean }[];
  first: string;
  last: string;
  total: number;
  /** What the chart shows, in words: the SVG's accessible name. */
  summary: string;
  series: ChartSeries[];
  width: number;
  height: number;
  /** The y axis: gridlines with their values. */
  ticks: { y: number; label: string }[];
  bars: {
    x: number;
    width: number;
    day: string;
    total: number;
    segments: { y: number; height: number; colour: string; title: string }[];
  }[];
  /** The x axis' day labels (every day of 7, every fifth of 30). */
  dayLabels: { x: number; text: string }[];
  /** The numbers: a row per day, a count per series (in `series` order). */
  rows: { day: string; counts: number[]; total: number }[];
  plot: { left: number; right: number; bottom: number };
}

/** YYYY-MM-DD of `date` (UTC). */
const dayOf = (date: Date) => date.toISOString().slice(0, 10);

/** The UTC days the chart of `days` ending on `now`'s day covers, oldest first. */
export function chartDays(now: Date, days: ChartDays): string[] {
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  return Array.from({ length: days }, (_, i) => dayOf(new Date(today - (days - 1 - i) * DAY_MS)));
}

/** The least of 1, 2, 5 x 10^k at or above `value` (at least 1). */
function niceCeiling(value: number): number {
  if (value <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 5, 10].map((m) => m * power).find((m) => m >= value)!;
}

/** Which series a counter adds to, and what to add: the runtime's labels are also counted under 'completed'. */
function seriesOf(outcome: string, shown: ReadonlySet<string>): string | null {
  if (outcome.startsWith(AGENT_OUTCOME_PREFIX)) {
    const label = outcome.slice(AGENT_OUTCOME_PREFIX.length);
    return shown.has(label) ? `agent:${label}` : 'other';
  }
  if (outcome === 'completed') return 'answered';
  if (outcome === 'busy' || outcome === 'no_answer' || outcome === 'voicemail') return outcome;
  return 'failed';
}

/** The chart of `days` days ending on `now`'s UTC day from the counters `rows` (outcomesByDay's). */
export function overviewChart(rows: DayOutcome[], now: Date, days: ChartDays, baseHref: string): ChartModel {
  const dayList = chartDays(now, days);
  const labelTotals = new Map<string, number>();
  for (const r of rows)
    if (r.outcome.startsWith(AGENT_OUTCOME_PREFIX)) {
      const label = r.outcome.slice(AGENT_OUTCOME_PREFIX.length);
      labelTotals.set(label, (labelTotals.get(label) ?? 0) + r.calls);
    }
  const labels = [...labelTotals]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, CHART_LABELS_MAX)
    .map(([label]) => label);
  const shown = new Set(labels);
  const series: ChartSeries[] = [
    ...labels.map((label, i) => ({
      key: `agent:${label}`,
      label,
      colour: LABEL_COLOURS[i % LABEL_COLOURS.length]!,
      runtime: true,
      total: 0,
    })),
    ...(labelTotals.size > labels.length ? (['other'] as const) : []).map((k) => ({ key: k, ...FIXED[k] })),
    ...(['answered', 'voicemail', 'no_answer', 'busy', 'failed'] as const).map((k) => ({ key: k, ...FIXED[k] })),
  ].map((s) => ({ runtime: false, total: 0, ...s }));
  const index = new Map(series.map((s, i) => [s.key, i]));
  const byDay = new Map(dayList.map((d) => [d, series.map(() => 0)]));
  for (const r of rows) {
    const counts = byDay.get(r.day);
    const key = seriesOf(r.outcome, shown);
    if (!counts || key === null) continue;
    counts[index.get(key)!]! += r.calls;
    // A labelled call counts under 'completed' too: answered without a label is what is left.
    if (key !== 'answered' && r.outcome.startsWith(AGENT_OUTCOME_PREFIX)) counts[index.get('answered')!]! -= r.calls;
  }
  const table = dayList.map((day) => {
    const counts = byDay.get(day)!.map((n) => Math.max(0, n));
    counts.forEach((n, i) => (series[i]!.total += n));
    return { day, counts, total: counts.reduce((a, b) => a + b, 0) };
  });
  const total = table.reduce((a, r) => a + r.total, 0);
  const top = niceCeiling(Math.max(...table.map((r) => r.total), 1));
  const slot = SLOT[days];
  const scale = (n: number) => (n / top) * PLOT.height;
  const bottom = PLOT.top + PLOT.height;
  const bars = table.map((row, i) => {
    let y = bottom;
    const segments = row.counts.flatMap((n, s) => {
      if (n === 0) return [];
      const height = scale(n);
      y -= height;
      return [{ y, height, colour: series[s]!.colour, title: `${row.day}: ${series[s]!.label} ${n}` }];
    });
    return { x: PLOT.left + i * slot + slot * 0.15, width: slot * 0.7, day: row.day, total: row.total, segments };
  });
  const words = series
    .filter((s) => s.total > 0)
    .map((s) => `${s.label} ${s.total}`)
    .join(', ');
  return {
    days,
    ranges: CHART_RANGES.map((d) => ({ days: d, href: `${baseHref}?days=${d}`, current: d === days })),
    first: dayList[0]!,
    last: dayList.at(-1)!,
    total,
    summary:
      `Calls per day by outcome, the last ${days} days (UTC, ${dayList[0]} to ${dayList.at(-1)}): ${total} ` +
      `${total === 1 ? 'call' : 'calls'} ended${words ? `: ${words}` : ''}. The table below has each day's numbers.`,
    series,
    width: PLOT.left + days * slot + PLOT.right,
    height: bottom + PLOT.bottom,
    ticks: (top % 2 === 0 ? [0, top / 2, top] : [0, top]).map((n) => ({ y: bottom - scale(n), label: String(n) })),
    bars,
    dayLabels: dayList
      .map((day, i) => ({ i, text: day.slice(5) }))
      .filter(({ i }) => days === 7 || (days - 1 - i) % 5 === 0)
      .map(({ i, text }) => ({ x: PLOT.left + i * slot + slot / 2, text })),
    rows: table,
    plot: { left: PLOT.left, right: PLOT.left + days * slot, bottom },
  };
}
