// bench:scale's output: each figure on each dimension's database next to its own empty database's (built beside it,
// measured interleaved with it), per run and pooled, with the target (within 1.5x of empty; the dashboard's pages
// also p99 < 50 ms), the checks, the retention pass and the online upgrade on the history database, each database's
// build and autovacuum wait, the machine and its load; scale.{json,md}.
import fs from 'node:fs';
import path from 'node:path';
import type { MachineFacts } from '../setup.js';
import type { Percentiles, Pooled } from '../stats.js';
import type { Dimension } from './data.js';
import type { DashboardPage } from './measure-dashboard.js';
import type { DrainFigures } from './measure-drain.js';
import type { RetentionFigures } from './measure-retention.js';
import { describeStates, WAIT_SAMPLE_MS } from './wait-sampler.js';
import type { IdleFigures, TriggerFigures, WebhookFigures } from './measure-service.js';
import { chainsText } from './lock-sampler.js';
import type { UpgradeFigures } from './measure-upgrade.js';

/** A dimension within this factor of empty: a time at most 1.5x, a rate at least 1/1.5. */
export const TARGET_FACTOR = 1.5;
/** The dashboard's pages, pooled p99 over HTTP under trigger load. */
export const DASHBOARD_TARGET_MS = 50;
/** The triggers' p99 during a retention pass against the same service without one. */
export const RETENTION_TARGET_FACTOR = 2;

export interface DatabaseRun {
  label: Dimension;
  buildSeconds: number;
  buildPhases: Record<string, number>;
  autovacuum: { caughtUp: boolean; seconds: number; text: string };
  deadRowsAfterBuild: Record<string, number>;
  counts: Record<string, number>;
  sizes: Record<string, string>;
  /** (i) The quiet service's CPU and its database sessions', each run's and over all runs' seconds. */
  idle?: { runs: IdleFigures[]; pooled: IdleFigures };
  drain?: {
    runs: Omit<DrainFigures, 'passes'>[];
    pooled: Pick<DrainFigures, 'calls' | 'seconds' | 'perSecond' | 'claimPasses' | 'maxActivePerAccount'>;
  };
  triggers?: { runs: TriggerFigures[]; pooled: Pooled };
  webhooks?: { runs: WebhookFigures[]; pooled: { healthy: number; seconds: number; perSecond: number } };
  dashboard?: {
    rate: number;
    pages: Record<DashboardPage, Pooled & { name: string; path: string }>;
    /** Every page's requests together. */
    all: Pooled;
    /** The triggers sent meanwhile. */
    triggers: Pooled;
  };
  retention?: RetentionFigures;
  upgrade?: UpgradeFigures;
  /** Load average (1, 5, 15 min) when each phase began. */
  loadAverage: Record<string, string>;
  /** Phases that failed, with their error (the run went on). */
  errors: Record<string, string>;
  seconds: number;
  /**
   * A dimension's own empty database, built beside it and measured interleaved with it (each phase on one, then on
   * the other, the empty one first in odd runs): its ratios are against this. Absent on the empty database itself.
   */
  empty?: DatabaseRun;
}

/** The name a database goes by in the results: `tenants`, `empty (beside tenants)`, or `empty` measured alone. */
const databaseName = (run: DatabaseRun, beside?: DatabaseRun) =>
  beside ? `${run.label} (beside ${beside.label})` : run.label;

/** Every database measured, each dimension's own empty one after it, with its name. */
function databasesOf(runs: DatabaseRun[]): { name: string; run: DatabaseRun }[] {
  return runs.flatMap((run) => [
    { name: databaseName(run), run },
    ...(run.empty ? [{ name: databaseName(run.empty, run), run: run.empty }] : []),
  ]);
}

export interface ScaleResults {
  generatedAt: string;
  durationSeconds: number;
  /** The measured service's commit (`git describe --always --dirty` of its checkout), or null outside git. */
  commit: string | null;
  factor: number;
  shape: Record<string, number>;
  base: Record<string, number>;
  machine: MachineFacts;
  database: { kind: string; settings: Record<string, string> };
  settings: Record<string, unknown>;
  /** Each dimension with its own empty database in `empty`; or the empty database alone (BENCH_ONLY=empty). */
  runs: DatabaseRun[];
  /** Databases whose build or measurement failed as a whole, with the error. */
  failed: Record<string, string>;
  /** Markdown of the replicas' table (bench/scale/replicas.ts), and their figures. */
  replicas?: { markdown: string; runs: unknown[] } | { skipped: string };
  steps: { name: string; seconds: number }[];
}

type Better = 'lower' | 'higher';
interface Figure {
  name: string;
  unit: string;
  better: Better;
  /** The pooled value, and each run's. */
  pooled: (run: DatabaseRun) => number | undefined;
  perRun: (run: DatabaseRun) => number[] | undefined;
  /** An absolute limit besides the ratio (the dashboard's 50 ms). */
  limit?: number;
  /** Below this the figure is met whatever its ratio (a quiet service's few milliseconds a second, whose ratio is noise). */
  floor?: number;
}

const PAGE_NAMES: Record<DashboardPage, string> = {
  overview: 'overview',
  firstPage: 'calls list, first page',
  deepPage: 'calls list, deep keyset page',
  nameSearch: 'calls list, name search',
  detail: 'call detail',
};

/** A quiet service and its sessions below this many CPU milliseconds a second (1% of a core) cost nothing worth a ratio. */
const IDLE_FLOOR_MS_PER_SECOND = 10;

const FIGURES: Figure[] = [
  {
    name: 'quiet service: CPU of the service and its database sessions',
    unit: 'ms/s',
    better: 'lower',
    pooled: (r) => r.idle?.pooled.msPerSecond,
    perRun: (r) => r.idle?.runs.map((i) => i.msPerSecond),
    floor: IDLE_FLOOR_MS_PER_SECOND,
  },
  {
    name: 'trigger p50 at a fixed rate',
    unit: 'ms',
    better: 'lower',
    pooled: (r) => r.triggers?.pooled.p50,
    perRun: (r) => r.triggers?.pooled.rounds.map((p) => p.p50),
  },
  {
    name: 'trigger p99 at a fixed rate',
    unit: 'ms',
    better: 'lower',
    pooled: (r) => r.triggers?.pooled.p99,
    perRun: (r) => r.triggers?.pooled.rounds.map((p) => p.p99),
  },
  {
    name: 'dispatcher: one claim pass, p50',
    unit: 'ms',
    better: 'lower',
    pooled: (r) => r.drain?.pooled.claimPasses.p50Ms,
    perRun: (r) => r.drain?.runs.map((d) => d.claimPasses.p50Ms),
  },
  {
    name: 'dispatcher: one claim pass, p99',
    unit: 'ms',
    better: 'lower',
    pooled: (r) => r.drain?.pooled.claimPasses.p99Ms,
    perRun: (r) => r.drain?.runs.map((d) => d.claimPasses.p99Ms),
  },
  {
    name: "dispatcher: claim passes' time per call dialled",
    unit: 'ms',
    better: 'lower',
    pooled: (r) => r.drain?.pooled.claimPasses.msPerCall,
    perRun: (r) => r.drain?.runs.map((d) => d.claimPasses.msPerCall),
  },
  {
    name: 'dispatcher: due calls dialled per second (drain)',
    unit: '/s',
    better: 'higher',
    pooled: (r) => r.drain?.pooled.perSecond,
    perRun: (r) => r.drain?.runs.map((d) => d.perSecond),
  },
  {
    name: 'webhook deliveries per second to healthy endpoints, others timing out',
    unit: '/s',
    better: 'higher',
    pooled: (r) => r.webhooks?.pooled.perSecond,
    perRun: (r) => r.webhooks?.runs.map((w) => w.perSecond),
  },
  ...(Object.keys(PAGE_NAMES) as DashboardPage[]).flatMap((page): Figure[] => [
    {
      name: `dashboard ${PAGE_NAMES[page]}, p50`,
      unit: 'ms',
      better: 'lower',
      pooled: (r) => r.dashboard?.pages[page].p50,
      perRun: (r) => r.dashboard?.pages[page].rounds.map((p) => p.p50),
    },
    {
      name: `dashboard ${PAGE_NAMES[page]}, p99`,
      unit: 'ms',
      better: 'lower',
      pooled: (r) => r.dashboard?.pages[page].p99,
      perRun: (r) => r.dashboard?.pages[page].rounds.map((p) => p.p99),
      limit: DASHBOARD_TARGET_MS,
    },
  ]),
  {
    name: 'trigger p99 while the dashboard is read',
    unit: 'ms',
    better: 'lower',
    pooled: (r) => r.dashboard?.triggers.p99,
    perRun: (r) => r.dashboard?.triggers.rounds.map((p) => p.p99),
  },
];

export interface FigureRow {
  dimension: Dimension;
  name: string;
  unit: string;
  empty?: number;
  value?: number;
  emptyRuns?: number[];
  runs?: number[];
  ratio?: number;
  target: string;
  met?: boolean;
}

/**
 * Each dimension's figures against its own empty database's; the empty database measured alone (BENCH_ONLY=empty) has
 * its figures in the empty columns and no ratio.
 */
export function figureRows(runs: DatabaseRun[]): FigureRow[] {
  return runs.flatMap((run) =>
    FIGURES.map((f) => {
      const alone = run.label === 'empty';
      const empty = alone ? run : run.empty;
      const e = empty && f.pooled(empty);
      const v = alone ? undefined : f.pooled(run);
      const ratio = e !== undefined && v !== undefined && e > 0 ? v / e : undefined;
      const within =
        ratio === undefined
          ? undefined
          : (f.floor !== undefined && v! < f.floor) ||
            (f.better === 'lower' ? ratio <= TARGET_FACTOR : ratio >= 1 / TARGET_FACTOR);
      // The absolute limit holds for every database, the empty one alone included.
      const limited = alone ? e : v;
      const underLimit = f.limit === undefined || limited === undefined ? undefined : limited < f.limit;
      const target = `${f.better === 'lower' ? `<= ${TARGET_FACTOR}x` : `>= 1/${TARGET_FACTOR}`}${f.limit === undefined ? '' : `, < ${f.limit} ${f.unit}`}${f.floor === undefined ? '' : ` or < ${f.floor} ${f.unit}`}`;
      const met =
        within === undefined && underLimit === undefined ? undefined : within !== false && underLimit !== false;
      return {
        dimension: run.label,
        name: f.name,
        unit: f.unit,
        empty: e,
        value: v,
        emptyRuns: empty && f.perRun(empty),
        runs: alone ? undefined : f.perRun(run),
        ratio,
        target,
        met,
      };
    }),
  );
}

const fmt = (n: number | undefined) =>
  n === undefined || Number.isNaN(n)
    ? '–'
    : Math.abs(n) >= 100
      ? Math.round(n).toLocaleString('en')
      : String(Math.round(n * 100) / 100);
const runsCell = (ns: number[] | undefined) => (ns && ns.length > 0 ? ns.map(fmt).join(' / ') : '–');
const pct = (p: Percentiles) => `${fmt(p.p50)} / ${fmt(p.p99)} / ${fmt(p.max)} (${p.count.toLocaleString('en')})`;
const yes = (ok: boolean | undefined) => (ok === undefined ? '–' : ok ? 'yes' : '**no**');

function checks(r: DatabaseRun): string[] {
  const out: string[] = [];
  if (r.idle)
    out.push(
      `quiet service (nothing sent or due, ${r.idle.pooled.seconds} s over ${r.idle.runs.length} runs): CPU ms a second, service ${r.idle.pooled.serviceMsPerSecond} and its database sessions ${r.idle.pooled.databaseMsPerSecond} (runs: ${r.idle.runs.map((i) => `${i.serviceMsPerSecond} + ${i.databaseMsPerSecond}`).join(', ')})`,
    );
  if (r.drain)
    out.push(
      `drain: ${r.drain.pooled.calls} calls dialled in ${r.drain.runs.length} runs, ${r.drain.runs.reduce((n, d) => n + d.failed, 0)} failed, most active per account ${r.drain.pooled.maxActivePerAccount} (limit 10: ${yes(r.drain.pooled.maxActivePerAccount <= 10)})`,
    );
  if (r.triggers) {
    const statuses = r.triggers.runs.map((t) => JSON.stringify(t.statuses)).join(', ');
    const all200 = r.triggers.runs.every((t) => Object.keys(t.statuses).every((s) => s === '200') && t.errors === 0);
    out.push(
      `triggers: sent ${r.triggers.runs.map((t) => `${t.sentPerSecond}/s`).join(', ')} of ${r.triggers.runs[0]?.rate}/s; statuses ${statuses} (all 200: ${yes(all200)}); ${describe(r.triggers.pooled)}`,
    );
  }
  if (r.webhooks)
    out.push(
      `webhooks: attempts held by the timing-out endpoints at the end of each run ${r.webhooks.runs.map((w) => w.heldAtEnd).join(', ')}`,
    );
  if (r.dashboard)
    out.push(
      `dashboard: all pages pooled p50 / p99 / max ${pct(r.dashboard.all)} ms while ${r.dashboard.rate} triggers/s ran (their p50 / p99 / max ${pct(r.dashboard.triggers)} ms)`,
    );
  return out;
}

const describe = (p: Pooled) =>
  `worst run (${p.worst.round} of ${p.rounds.length}): p50 ${p.worst.p50} / p99 ${p.worst.p99} / max ${p.worst.max} ms`;

/** The one sentence that says what a ratio compares. */
function pairing(runs: DatabaseRun[]): string {
  if (runs.length > 0 && runs.every((r) => r.label === 'empty'))
    return 'The empty database alone (BENCH_ONLY named no dimension): its figures, no ratios.';
  return "Each dimension is measured interleaved with its own fresh empty database, built beside it with its own service: each phase on one, then on the other, the empty one first in odd runs and the dimension first in even ones, so that the shared host's drift falls on both alike.";
}

export function markdown(results: ScaleResults): string {
  const m = results.machine;
  const rows = figureRows(results.runs);
  const lines = [
    '# Scale benchmark results',
    '',
    `Generated ${results.generatedAt} by \`npm run bench:scale\` in ${Math.round(results.durationSeconds)} s${results.factor === 1 ? '' : ` (scale factor ${results.factor})`}, service at commit ${results.commit ?? 'unknown'}.`,
    '',
    pairing(results.runs),
    '',
    `Machine: ${m.cores} cores (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.platform}; Node ${m.node}; PostgreSQL ${m.postgres} (${results.database.kind === 'embedded' ? 'the embedded server the product ships, stock settings' : 'BENCH_DATABASE_URL: not the default deployment'}: ${Object.entries(
      results.database.settings,
    )
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}); Redis ${m.redis}. The bench issues no VACUUM, ANALYZE or server setting.`,
    '',
    `Databases: empty (base only: ${Object.entries(results.base)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}), one fresh for each dimension, and each dimension on the base: ${Object.entries(results.shape)
      .map(([k, v]) => `${k} ${v.toLocaleString('en')}`)
      .join(
        ', ',
      )}. Each measurement ${String(results.settings.runs)} runs on one built database; "runs" lists each run's figure, "pooled" is over every sample of every run (rates: all calls over all seconds); a dimension's "Empty" columns are its own empty database's. The drain inserts ${String(results.settings.drainCalls)} due calls on every database (an empty database has none to drain): enough for dozens of claim passes a run.`,
    '',
    '| Dimension | Figure | Empty: runs | Empty: pooled | Dimension: runs | Dimension: pooled | Ratio | Target | Met |',
    '|---|---|---|---:|---|---:|---:|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.dimension} | ${r.name} (${r.unit}) | ${runsCell(r.emptyRuns)} | ${fmt(r.empty)} | ${runsCell(r.runs)} | ${fmt(r.value)} | ${r.ratio === undefined ? '–' : `${r.ratio.toFixed(2)}x`} | ${r.target} | ${yes(r.met)} |`,
    ),
    '',
  ];
  for (const { name, run } of databasesOf(results.runs)) {
    const c = checks(run);
    if (c.length > 0) lines.push(`**${name}**:`, '', ...c.map((x) => `- ${x}`), '');
  }
  const history = results.runs.find((r) => r.label === 'history');
  const retention = history?.retention;
  if (retention) {
    lines.push(
      '## Retention pass under load (history database, warm service)',
      '',
      `Each round: one trigger load at ${retention.rate}/s; one bounded pass (at most ${retention.budget.rows.toLocaleString('en')} rows or ${retention.budget.seconds} s) started part-way through it; the triggers sent while it ran against the same load's before and after. p50 / p99 / max (samples) in ms.`,
      '',
      '| Round | Outcome | Pass (s) | Rows deleted | During the pass | Without | Statuses |',
      '|---:|---|---:|---:|---|---|---|',
      ...retention.rounds.map(
        (r, i) =>
          `| ${i + 1} | ${r.outcome}${r.uncoveredSeconds > 0 ? ` (load ended ${r.uncoveredSeconds} s before it)` : ''} | ${r.seconds} | ${r.total.toLocaleString('en')} | ${pct(r.during)} | ${pct(r.without)} | ${JSON.stringify(r.statuses)} |`,
      ),
      `| pooled | | | ${retention.rounds.reduce((n, r) => n + r.total, 0).toLocaleString('en')} | ${pct(retention.during)} | ${pct(retention.without)} | |`,
      '',
      `Trigger p99 during a pass / without: ${retention.ratio}x (target <= ${RETENTION_TARGET_FACTOR}x: ${yes(retention.ratio <= RETENTION_TARGET_FACTOR)}).`,
      '',
    );
    lines.push(
      `Where the database's time went (pg_stat_activity every ${WAIT_SAMPLE_MS} ms: backends active per sample, and their share on CPU or in each wait):`,
      '',
      '| Round | Window | Samples | Requests | Retention | Autovacuum |',
      '|---:|---|---:|---|---|---|',
      ...retention.rounds.flatMap((r, i) =>
        Object.entries(r.waits).map(
          ([window, w]) =>
            `| ${i + 1} | ${window} | ${w.samples} | ${describeStates(w, 'requests')} | ${describeStates(w, 'retention')} | ${describeStates(w, 'autovacuum')} |`,
        ),
      ),
      '',
    );
  }
  const upgrade = history?.upgrade;
  if (upgrade) {
    const all200 = Object.keys(upgrade.statuses).every((s) => s === '200') && upgrade.errors === 0;
    lines.push(
      '## Online upgrade (history database)',
      '',
      `This release's migrations on the large tables, redone by the project's runner one at a time while triggers arrived at ${upgrade.rate}/s: **${upgrade.seconds} s** in all${upgrade.uncoveredSeconds > 0 ? ` (the load ended ${upgrade.uncoveredSeconds} s before the migrations did)` : ''}. Triggers sent during them: p50 / p99 / max ${pct(upgrade.during)} ms; the whole load's statuses ${JSON.stringify(upgrade.statuses)}, errors ${upgrade.errors} (all 200: ${yes(all200)}).`,
      '',
      '| Migration | What it does | Time (s) | Triggers sent during it: p50 / p99 / max (count), ms |',
      '|---|---|---:|---|',
      ...upgrade.steps.map(
        (s) =>
          `| ${s.migration} | ${s.what}${s.indexBytes === null ? '' : ` (${Math.round(s.indexBytes / 2 ** 20)} MB)`} | ${s.seconds} | ${pct(s.during)} |`,
      ),
      '',
      `Lock waits during each step (pg_stat_activity and pg_blocking_pids every 20 ms, bench/scale/lock-sampler.ts; "waiter <- blockers" x samples): ${upgrade.steps
        .map((s) => `${s.migration}: ${chainsText(s.lockWaits)}`)
        .join('. ')}.`,
      '',
      `A new release's process on that database, spawn to ready (its migrations with nothing to apply, then the service's start): **${upgrade.restartSeconds} s**; the runner alone with nothing to apply: ${upgrade.noOpMigrateSeconds} s.`,
      '',
    );
  }
  lines.push(
    '## Databases',
    '',
    '| Database | Build (s) | Build phases (s) | Dead rows after the build | Autovacuum | Rows | Sizes | Load average at each phase |',
    '|---|---:|---|---|---|---|---|---|',
    ...databasesOf(results.runs).map(
      ({ name, run: r }) =>
        `| ${name} | ${Math.round(r.buildSeconds)} | ${Object.entries(r.buildPhases)
          .map(([k, v]) => `${k}: ${v}`)
          .join('; ')} | ${
          Object.entries(r.deadRowsAfterBuild)
            .map(([k, v]) => `${k} ${v.toLocaleString('en')}`)
            .join(', ') || 'none'
        } | ${r.autovacuum.text} | ${Object.entries(r.counts)
          .filter(([, v]) => v > 0)
          .map(([k, v]) => `${k} ${v.toLocaleString('en')}`)
          .join(', ')} | ${Object.entries(r.sizes)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ')} | ${Object.entries(r.loadAverage)
          .map(([k, v]) => `${k}: ${v}`)
          .join('; ')} |`,
    ),
    '',
  );
  for (const { name, run } of databasesOf(results.runs))
    for (const [phase, error] of Object.entries(run.errors)) lines.push(`**${name}: ${phase} failed**: ${error}`, '');
  for (const [label, error] of Object.entries(results.failed))
    lines.push(`**${label}: the database failed**: ${error}`, '');
  if (results.replicas && 'markdown' in results.replicas)
    lines.push('## Replicas (history database)', '', results.replicas.markdown, '');
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
