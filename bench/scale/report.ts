// bench:scale's output: each figure on the large database next to the same measurement on an empty one, with the
// target (within 1.5x), the checks, the data's size and the machine; bench/results/scale.{json,md}.
import fs from 'node:fs';
import path from 'node:path';
import type { MachineFacts } from '../setup.js';
import type { DashboardFigures } from './measure-dashboard.js';
import type { DrainFigures } from './measure-drain.js';
import type { RetentionFigures } from './measure-retention.js';
import type { TriggerFigures, WebhookFigures } from './measure-service.js';

/** Large within this factor of empty: a time at most 1.5x, a rate at least 1/1.5. */
export const TARGET_FACTOR = 1.5;

export interface DatabaseRun {
  label: 'empty' | 'large';
  buildSeconds: number;
  counts: Record<string, number>;
  sizes: Record<string, string>;
  drain?: DrainFigures;
  triggers?: TriggerFigures;
  webhooks?: WebhookFigures;
  dashboard?: DashboardFigures;
  retention?: RetentionFigures;
  /** Load average (1, 5, 15 min) when each phase began. */
  loadAverage: Record<string, string>;
  /** Phases that failed, with their error (the run went on). */
  errors: Record<string, string>;
  seconds: number;
}

export interface ScaleResults {
  generatedAt: string;
  durationSeconds: number;
  factor: number;
  shape: Record<string, number>;
  machine: MachineFacts;
  settings: Record<string, unknown>;
  runs: DatabaseRun[];
  /** Markdown of the replicas' table (bench/scale/replicas.ts), and their figures. */
  replicas?: { markdown: string; runs: unknown[] } | { skipped: string };
  steps: { name: string; seconds: number }[];
}

type Better = 'lower' | 'higher';
interface Figure {
  name: string;
  unit: string;
  better: Better | null;
  value: (run: DatabaseRun) => number | undefined;
}

const FIGURES: Figure[] = [
  { name: 'trigger p50 at a fixed rate', unit: 'ms', better: 'lower', value: (r) => r.triggers?.p50 },
  { name: 'trigger p99 at a fixed rate', unit: 'ms', better: 'lower', value: (r) => r.triggers?.p99 },
  { name: 'dispatcher: one claim pass, p50', unit: 'ms', better: 'lower', value: (r) => r.drain?.claimPasses.p50Ms },
  { name: 'dispatcher: one claim pass, p99', unit: 'ms', better: 'lower', value: (r) => r.drain?.claimPasses.p99Ms },
  { name: 'dispatcher: one claim pass, mean', unit: 'ms', better: null, value: (r) => r.drain?.claimPasses.meanMs },
  {
    name: 'dispatcher: calls dialled per second (waiting calls drained)',
    unit: '/s',
    better: 'higher',
    value: (r) => r.drain?.perSecond,
  },
  {
    name: 'webhook deliveries per second to healthy endpoints, others timing out',
    unit: '/s',
    better: 'higher',
    value: (r) => r.webhooks?.perSecond,
  },
  {
    name: 'dashboard calls list, first page, median',
    unit: 'ms',
    better: 'lower',
    value: (r) => r.dashboard?.firstPage.p50,
  },
  {
    name: 'dashboard calls list, first page, p99',
    unit: 'ms',
    better: 'lower',
    value: (r) => r.dashboard?.firstPage.p99,
  },
  {
    name: 'dashboard calls list, deep keyset page, median',
    unit: 'ms',
    better: 'lower',
    value: (r) => r.dashboard?.deepPage.p50,
  },
  {
    name: 'dashboard calls list, deep keyset page, p99',
    unit: 'ms',
    better: 'lower',
    value: (r) => r.dashboard?.deepPage.p99,
  },
  { name: 'dashboard call detail, median', unit: 'ms', better: 'lower', value: (r) => r.dashboard?.detail.p50 },
  { name: 'dashboard call detail, p99', unit: 'ms', better: 'lower', value: (r) => r.dashboard?.detail.p99 },
  { name: 'retention pass', unit: 's', better: null, value: (r) => r.retention?.seconds },
  { name: 'retention: rows deleted per second', unit: '/s', better: null, value: (r) => r.retention?.rowsPerSecond },
  {
    name: 'trigger p50 during the retention pass',
    unit: 'ms',
    better: 'lower',
    value: (r) => r.retention?.triggers.p50,
  },
  {
    name: 'trigger p99 during the retention pass',
    unit: 'ms',
    better: 'lower',
    value: (r) => r.retention?.triggers.p99,
  },
];

export interface FigureRow {
  name: string;
  unit: string;
  empty?: number;
  large?: number;
  ratio?: number;
  target: string;
  met?: boolean;
}

export function figureRows(runs: DatabaseRun[]): FigureRow[] {
  const empty = runs.find((r) => r.label === 'empty');
  const large = runs.find((r) => r.label === 'large');
  return FIGURES.map((f) => {
    const e = empty && f.value(empty);
    const l = large && f.value(large);
    const ratio = e !== undefined && l !== undefined && e > 0 ? l / e : undefined;
    const target =
      f.better === 'lower' ? `<= ${TARGET_FACTOR}x` : f.better === 'higher' ? `>= 1/${TARGET_FACTOR}` : '–';
    const met =
      ratio === undefined || f.better === null
        ? undefined
        : f.better === 'lower'
          ? ratio <= TARGET_FACTOR
          : ratio >= 1 / TARGET_FACTOR;
    return { name: f.name, unit: f.unit, empty: e, large: l, ratio, target, met };
  });
}

interface Check {
  name: string;
  value: (run: DatabaseRun) => string | undefined;
  ok: (run: DatabaseRun) => boolean | undefined;
}

const CHECKS: Check[] = [
  {
    name: 'waiting calls dialled (failed)',
    value: (r) => r.drain && `${r.drain.calls} (${r.drain.failed})`,
    ok: (r) => r.drain && r.drain.failed === 0,
  },
  {
    name: 'most calls of one account active at once (limit 10)',
    value: (r) => r.drain && String(r.drain.maxActivePerAccount),
    ok: (r) => r.drain && r.drain.maxActivePerAccount <= 10,
  },
  {
    name: 'windowed calls dialled before their window opened',
    value: (r) => r.drain && `${r.drain.windowed.dialledBeforeOpening} of ${r.drain.windowed.calls}`,
    ok: (r) => r.drain && r.drain.windowed.dialledBeforeOpening === 0,
  },
  {
    name: 'first windowed dial after the opening',
    value: (r) => r.drain && `${Math.round(r.drain.windowed.firstDialAfterOpeningMs)} ms`,
    ok: () => undefined,
  },
  {
    name: 'triggers sent per second (fixed rate)',
    value: (r) => r.triggers && `${r.triggers.sentPerSecond} of ${r.triggers.rate}`,
    ok: (r) => r.triggers && r.triggers.sentPerSecond >= r.triggers.rate * 0.95,
  },
  {
    name: 'triggers answered 200 (all statuses)',
    value: (r) => r.triggers && JSON.stringify(r.triggers.statuses),
    ok: (r) => r.triggers && Object.keys(r.triggers.statuses).every((s) => s === '200') && r.triggers.errors === 0,
  },
  {
    name: 'triggers sent per second during retention',
    value: (r) => r.retention && `${r.retention.triggers.sentPerSecond} of ${r.retention.triggers.rate}`,
    ok: (r) => r.retention && r.retention.triggers.sentPerSecond >= r.retention.triggers.rate * 0.95,
  },
  {
    name: 'triggers during retention answered 200',
    value: (r) => r.retention && JSON.stringify(r.retention.triggers.statuses),
    ok: (r) => r.retention && Object.keys(r.retention.triggers.statuses).every((s) => s === '200'),
  },
  {
    name: 'trigger run overlapped by the retention pass',
    value: (r) => r.retention && `${r.retention.overlapSeconds} of ${r.retention.triggers.seconds} s`,
    ok: () => undefined,
  },
  {
    name: 'retention pass outcome, batches',
    value: (r) => r.retention && `${r.retention.outcome}, ${r.retention.batches}`,
    ok: (r) => r.retention && r.retention.outcome === 'completed',
  },
  {
    name: 'webhook attempts held by the timing-out endpoints',
    value: (r) => r.webhooks && String(r.webhooks.heldAtEnd),
    ok: () => undefined,
  },
  {
    name: 'dashboard rows on the first / deep page',
    value: (r) => r.dashboard && `${r.dashboard.firstPage.rows} / ${r.dashboard.deepPage.rows}`,
    ok: () => undefined,
  },
];

const fmt = (n: number | undefined) =>
  n === undefined || Number.isNaN(n)
    ? '–'
    : Math.abs(n) >= 100
      ? Math.round(n).toLocaleString('en')
      : String(Math.round(n * 100) / 100);

export function markdown(results: ScaleResults): string {
  const m = results.machine;
  const rows = figureRows(results.runs);
  const byLabel = (label: string) => results.runs.find((r) => r.label === label);
  const cell = (label: string, f: (r: DatabaseRun) => string | undefined) => {
    const r = byLabel(label);
    return (r && f(r)) ?? '–';
  };
  const okCell = (label: string, c: Check) => {
    const r = byLabel(label);
    const ok = r && c.ok(r);
    return ok === undefined ? '' : ok ? ' (ok)' : ' (**not ok**)';
  };
  const lines = [
    '# Scale benchmark results',
    '',
    `Generated ${results.generatedAt} by \`npm run bench:scale\` in ${Math.round(results.durationSeconds)} s${results.factor === 1 ? '' : ` (scale factor ${results.factor})`}.`,
    '',
    `Machine: ${m.cores} cores (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.platform}; Node ${m.node}; PostgreSQL ${m.postgres}; Redis ${m.redis}.`,
    '',
    '| Figure | Empty | Large | Ratio | Target | Met |',
    '|---|---:|---:|---:|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.name} (${r.unit}) | ${fmt(r.empty)} | ${fmt(r.large)} | ${r.ratio === undefined ? '–' : `${r.ratio.toFixed(2)}x`} | ${r.target} | ${r.met === undefined ? '–' : r.met ? 'yes' : '**no**'} |`,
    ),
    '',
    '| Check | Empty | Large |',
    '|---|---|---|',
    ...CHECKS.map(
      (c) =>
        `| ${c.name} | ${cell('empty', c.value)}${okCell('empty', c)} | ${cell('large', c.value)}${okCell('large', c)} |`,
    ),
    '',
    '| Database | Build (s) | Rows | Sizes | Load average at each phase |',
    '|---|---:|---|---|---|',
    ...results.runs.map(
      (r) =>
        `| ${r.label} | ${Math.round(r.buildSeconds)} | ${Object.entries(r.counts)
          .map(([k, v]) => `${k} ${v.toLocaleString('en')}`)
          .join(', ')} | ${Object.entries(r.sizes)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')} | ${Object.entries(r.loadAverage)
          .map(([k, v]) => `${k} ${v}`)
          .join('; ')} |`,
    ),
    '',
  ];
  for (const run of results.runs)
    for (const [phase, error] of Object.entries(run.errors))
      lines.push(`**${run.label}: ${phase} failed**: ${error}`, '');
  const retention = byLabel('large')?.retention;
  if (retention)
    lines.push(
      `Rows deleted by the large database's retention pass: ${
        Object.entries(retention.deleted)
          .filter(([, n]) => n > 0)
          .map(([t, n]) => `${t} ${n.toLocaleString('en')}`)
          .join(', ') || 'none'
      }.`,
      '',
    );
  if (results.replicas && 'markdown' in results.replicas)
    lines.push('## Replicas (large database)', '', results.replicas.markdown, '');
  else if (results.replicas) lines.push(`Replicas: ${results.replicas.skipped}`, '');
  lines.push('Steps: ' + results.steps.map((s) => `${s.name} ${Math.round(s.seconds)} s`).join(', ') + '.', '');
  return lines.join('\n');
}

export function writeScaleResults(dir: string, results: ScaleResults): string {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'scale.json'),
    `${JSON.stringify({ ...results, figures: figureRows(results.runs) }, null, 2)}\n`,
  );
  const md = markdown(results);
  fs.writeFileSync(path.join(dir, 'scale.md'), md);
  return md;
}
