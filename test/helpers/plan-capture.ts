// Every statement the service sends, phase by phase, and the plans PostgreSQL gives them: captured where Prisma (through
// @prisma/adapter-pg) and our hand-written SQL meet, pg.Client#query; the plans actually run, nested statements included
// (plpgsql functions, triggers, foreign-key cascades), from auto_explain; then each statement EXPLAINed again, with its
// values (custom plan) and, for a named (prepared) statement, as the generic plan PostgreSQL switches to after five runs.
import pg from 'pg';
import { createPrisma } from '../../src/storage/database.js';
import type { Storage } from '../../src/storage/storage.js';
import { freshDatabase, storageOf } from './database.js';

/** The tables that grow without bound: no path may read one of them from end to end. */
export const GROWING_TABLES = ['calls', 'call_events', 'webhook_deliveries', 'webhook_attempts'] as const;

/** The conditions EXPLAIN shows under a node, in the order it shows them. */
const CONDITIONS = ['Index Cond', 'Recheck Cond', 'Filter', 'Join Filter', 'Hash Cond', 'Subplan Name'] as const;

export interface PlanNode extends Partial<Record<(typeof CONDITIONS)[number], string>> {
  'Node Type': string;
  'Relation Name'?: string;
  Alias?: string;
  'Index Name'?: string;
  'Startup Cost': number;
  'Total Cost': number;
  'Plan Rows': number;
  Plans?: PlanNode[];
  [field: string]: unknown;
}

export interface CapturedStatement {
  phase: string;
  name: string | undefined;
  text: string;
  values: unknown[];
}
export interface RuntimePlan {
  phase: string;
  text: string;
  plan: PlanNode;
}

type Query = (...args: unknown[]) => unknown;

export class PlanCapture {
  readonly statements: CapturedStatement[] = [];
  readonly runtimePlans: RuntimePlan[] = [];
  private phase: string | null = null;
  private readonly ignored = new WeakSet<object>();
  private readonly listened = new WeakSet<object>();
  private original: Query | null = null;

  /**
   * Wraps pg.Client.prototype.query (both the pools' clients and the dedicated ones go through it): pg has no hook
   * that sees every statement with its values. One place, undone by stop(); the test that uses it fails if pg stops
   * calling it (nothing captured).
   */
  start(): void {
    const proto = pg.Client.prototype as unknown as { query: Query };
    const original = proto.query;
    this.original = original;
    const record = (client: pg.Client, args: unknown[]) => this.record(client, args);
    proto.query = function (this: pg.Client, ...args: unknown[]) {
      record(this, args);
      return original.apply(this, args);
    };
  }

  stop(): void {
    if (this.original) (pg.Client.prototype as unknown as { query: Query }).query = this.original;
    this.original = null;
  }

  /** The test's own connections (fixtures, probes, the checker) are not the service's. */
  ignore(client: object): void {
    this.ignored.add(client);
  }

  /** Runs `work` as one phase: what is sent meanwhile, by anyone but the ignored, is the phase's. */
  async during<T>(phase: string, work: () => Promise<T>): Promise<T> {
    this.phase = phase;
    try {
      return await work();
    } finally {
      this.phase = null;
    }
  }

  /**
   * Runs `work` as one phase; with its result, the plans of the statements it ran (nested ones included), as
   * auto_explain reported them while it ran.
   */
  async plansDuring<T>(phase: string, work: () => Promise<T>): Promise<{ result: T; plans: PlanNode[] }> {
    const before = this.runtimePlans.length;
    const result = await this.during(phase, work);
    return { result, plans: this.runtimePlans.slice(before).map((p) => p.plan) };
  }

  private record(client: pg.Client, args: unknown[]) {
    if (this.ignored.has(client)) return;
    if (!this.listened.has(client)) {
      this.listened.add(client);
      client.on('notice', (notice: { message?: string }) => this.notice(notice.message ?? ''));
    }
    if (this.phase === null) return;
    const [config, second] = args;
    const query = (typeof config === 'string' ? { text: config } : config) as {
      text?: string;
      name?: string;
      values?: unknown[];
    };
    if (typeof query?.text !== 'string') return;
    const values: unknown[] = Array.isArray(second) ? second : (query.values ?? []);
    this.statements.push({ phase: this.phase, name: query.name || undefined, text: query.text, values: [...values] });
  }

  /** auto_explain's NOTICE: "duration: ... plan:" and the plan as JSON. */
  private notice(message: string) {
    if (this.phase === null || !message.startsWith('duration:')) return;
    const json = JSON.parse(message.slice(message.indexOf('{'))) as { 'Query Text': string; Plan: PlanNode };
    this.runtimePlans.push({ phase: this.phase, text: json['Query Text'], plan: json.Plan });
  }
}

/**
 * Every session opened on `database` from now on reports the plan of every statement it runs, nested ones included,
 * as a NOTICE to its client (auto_explain, a contrib module of PostgreSQL; loading it needs a superuser). `analyze`:
 * with the rows each node returned and filtered out (EXPLAIN ANALYZE's figures).
 */
export async function reportPlansToClients(
  client: pg.Client,
  database: string,
  options: { analyze?: boolean } = {},
): Promise<void> {
  await client.query(`LOAD 'auto_explain'`);
  for (const setting of [
    `session_preload_libraries = 'auto_explain'`,
    'auto_explain.log_min_duration = 0',
    'auto_explain.log_nested_statements = on',
    `auto_explain.log_format = 'json'`,
    `auto_explain.log_level = 'notice'`,
    ...(options.analyze ? ['auto_explain.log_analyze = on'] : []),
  ])
    await client.query(`ALTER DATABASE ${database} SET ${setting}`);
}

export function walk(node: PlanNode, visit: (node: PlanNode, depth: number) => void, depth = 0): void {
  visit(node, depth);
  for (const child of node.Plans ?? []) walk(child, visit, depth + 1);
}

/**
 * The rows and index entries every scan of `table` in an EXPLAIN ANALYZE plan (or in each of several) read (returned
 * or filtered out, by the condition or the recheck of a bitmap), over all its loops.
 */
export function rowsReadFrom(plans: PlanNode | PlanNode[], table: string): number {
  let rows = 0;
  for (const plan of ([] as PlanNode[]).concat(plans))
    walk(plan, (node) => {
      if (node['Relation Name'] === table) rows += rowsReadBy(node);
    });
  return rows;
}

/**
 * As rowsReadFrom, but the rows read from `table` itself: an index-only scan counts only its heap fetches (none once
 * a vacuum has marked the pages all-visible), not the index entries it read.
 */
export function heapRowsReadFrom(plans: PlanNode | PlanNode[], table: string): number {
  let rows = 0;
  for (const plan of ([] as PlanNode[]).concat(plans))
    walk(plan, (node) => {
      if (node['Relation Name'] !== table) return;
      rows += node['Node Type'] === 'Index Only Scan' ? Number(node['Heap Fetches'] ?? 0) : rowsReadBy(node);
    });
  return rows;
}

/** The rows one scan node read, returned or filtered out (by the condition or a bitmap's recheck), over its loops. */
function rowsReadBy(node: PlanNode): number {
  return (
    (Number(node['Actual Rows'] ?? 0) +
      Number(node['Rows Removed by Filter'] ?? 0) +
      Number(node['Rows Removed by Index Recheck'] ?? 0)) *
    Number(node['Actual Loops'] ?? 1)
  );
}

const isGrowing = (relation: string | undefined) => (GROWING_TABLES as readonly string[]).includes(relation ?? '');

export function seqScansOfGrowingTables(plan: PlanNode): string[] {
  const found: string[] = [];
  walk(plan, (node) => {
    if (node['Node Type'] === 'Seq Scan' && isGrowing(node['Relation Name'])) found.push(node['Relation Name']!);
  });
  return found;
}

export function touchesGrowingTables(plan: PlanNode): boolean {
  let touches = false;
  walk(plan, (node) => {
    touches ||= isGrowing(node['Relation Name']);
  });
  return touches;
}

/** The plan as EXPLAIN's text shows it, one node a line with its conditions (for failure messages). */
export function renderPlan(plan: PlanNode): string[] {
  const lines: string[] = [];
  walk(plan, (node, depth) => {
    const pad = '  '.repeat(depth);
    const on = node['Relation Name']
      ? ` on ${node['Relation Name']}${node.Alias && node.Alias !== node['Relation Name'] ? ` ${node.Alias}` : ''}`
      : '';
    const using = node['Index Name'] ? ` using ${node['Index Name']}` : '';
    lines.push(
      `${pad}-> ${node['Node Type']}${using}${on} (cost=${node['Startup Cost']}..${node['Total Cost']} rows=${node['Plan Rows']})`,
    );
    for (const field of CONDITIONS) {
      if (node[field] !== undefined) lines.push(`${pad}     ${field}: ${node[field]}`);
    }
  });
  return lines;
}

export interface Finding {
  mode: 'custom' | 'generic' | 'runtime';
  phases: string[];
  label: string;
  text: string;
  plan: string[];
  /** A generic plan's estimated cost beside the custom plan's for the values captured (PostgreSQL keeps making custom plans while they cost less on average). */
  costs?: { generic: number; custom: number };
}

export interface CheckReport {
  findings: Finding[];
  /** Statements the checker could not EXPLAIN: a defect of the checker or of the capture, never ignored. */
  errors: string[];
  /** Per phase: the distinct statements checked, and the labels of those whose plans read a growing table. */
  perPhase: Map<string, { checked: number; growing: Set<string> }>;
}

const EXPLAINABLE = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i;

interface Distinct {
  name: string | undefined;
  text: string;
  phases: Set<string>;
  samples: { phase: string; values: unknown[] }[];
}

/** Up to `perText` executions of each statement text, from different phases first. */
function distinctStatements(statements: CapturedStatement[], perText = 3): Distinct[] {
  const byText = new Map<string, Distinct>();
  for (const s of statements) {
    if (!EXPLAINABLE.test(s.text)) continue;
    let entry = byText.get(s.text);
    if (!entry) byText.set(s.text, (entry = { name: s.name, text: s.text, phases: new Set(), samples: [] }));
    entry.name ??= s.name;
    if (!entry.phases.has(s.phase) && entry.samples.length < perText)
      entry.samples.push({ phase: s.phase, values: s.values });
    entry.phases.add(s.phase);
  }
  return [...byText.values()];
}

/**
 * EXPLAINs each distinct statement on `client` (a connection of the test's own, on the same database), inside one
 * transaction that is rolled back, each statement in a savepoint: with the values it was sent with (the plan an
 * unnamed statement gets, and a prepared one for its first five runs) and, for a prepared one with parameters, the
 * generic plan (plan_cache_mode = force_generic_plan), which PostgreSQL may keep using after that. `setup` runs first
 * in the transaction (a test dropping an index).
 */
export async function checkStatements(
  client: pg.Client,
  statements: CapturedStatement[],
  options: {
    label: (s: { name: string | undefined; text: string }) => string;
    setup?: (client: pg.Client) => Promise<void>;
  },
): Promise<CheckReport> {
  const report: CheckReport = { findings: [], errors: [], perPhase: new Map() };
  const distinct = distinctStatements(statements);
  for (const s of statements)
    if (!report.perPhase.has(s.phase)) report.perPhase.set(s.phase, { checked: 0, growing: new Set() });
  const explain = async (mode: 'custom' | 'generic', entry: Distinct, values: unknown[]): Promise<PlanNode | null> => {
    await client.query('SAVEPOINT oct_check');
    try {
      if (mode === 'custom') {
        const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>({
          text: `EXPLAIN (FORMAT JSON) ${entry.text}`,
          values,
        });
        return rows[0]!['QUERY PLAN'][0]!.Plan;
      }
      await client.query('SET LOCAL plan_cache_mode = force_generic_plan');
      await client.query(`PREPARE oct_check_statement AS ${entry.text}`);
      // A generic plan does not depend on the values: NULLs stand for them.
      const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
        `EXPLAIN (FORMAT JSON) EXECUTE oct_check_statement(${values.map(() => 'NULL').join(', ')})`,
      );
      return rows[0]!['QUERY PLAN'][0]!.Plan;
    } catch (error) {
      report.errors.push(
        `${mode} EXPLAIN of ${options.label(entry)} failed: ${(error as Error).message}\n${entry.text}`,
      );
      return null;
    } finally {
      await client.query('ROLLBACK TO SAVEPOINT oct_check');
      // PREPARE is not undone by a rollback.
      if (mode === 'generic') await client.query('DEALLOCATE ALL');
    }
  };
  const judge = (mode: 'custom' | 'generic', entry: Distinct, plan: PlanNode | null, custom?: PlanNode | null) => {
    if (!plan) return;
    const label = options.label(entry);
    if (touchesGrowingTables(plan)) for (const phase of entry.phases) report.perPhase.get(phase)!.growing.add(label);
    if (seqScansOfGrowingTables(plan).length > 0) {
      const costs = custom ? { generic: plan['Total Cost'], custom: custom['Total Cost'] } : undefined;
      report.findings.push({
        mode,
        phases: [...entry.phases],
        label,
        text: entry.text,
        plan: renderPlan(plan),
        ...(costs ? { costs } : {}),
      });
    }
  };

  await client.query('BEGIN');
  try {
    await options.setup?.(client);
    for (const entry of distinct) {
      for (const phase of entry.phases) report.perPhase.get(phase)!.checked++;
      const custom: (PlanNode | null)[] = [];
      for (const sample of entry.samples) {
        custom.push(await explain('custom', entry, sample.values));
        judge('custom', entry, custom.at(-1)!);
      }
      if (entry.name && entry.samples[0]!.values.length > 0)
        judge('generic', entry, await explain('generic', entry, entry.samples[0]!.values), custom[0]);
    }
  } finally {
    await client.query('ROLLBACK');
  }
  // One finding per statement and mode (its samples usually share a plan).
  const byKey = new Map(report.findings.map((f) => [`${f.mode}\0${f.text}`, f]));
  report.findings = [...byKey.values()];
  return report;
}

/** The plans the service's statements actually ran with (nested ones included) that read a growing table from end to end. */
export function checkRuntimePlans(plans: RuntimePlan[]): Finding[] {
  const byText = new Map<string, Finding>();
  for (const { phase, text, plan } of plans) {
    if (seqScansOfGrowingTables(plan).length === 0) continue;
    const finding = byText.get(text) ?? {
      mode: 'runtime' as const,
      phases: [],
      label: text.replace(/\s+/g, ' ').trim().slice(0, 100),
      text,
      plan: renderPlan(plan),
    };
    if (!finding.phases.includes(phase)) finding.phases.push(phase);
    byText.set(text, finding);
  }
  return [...byText.values()];
}

export function describeFindings(findings: Finding[]): string {
  return findings
    .map((f) =>
      [
        `${f.mode} plan of ${f.label} (${f.phases.join(', ')})${f.costs ? `, estimated cost ${f.costs.generic} (custom plan for the values captured: ${f.costs.custom})` : ''}:`,
        `  ${f.text.replace(/\s+/g, ' ').trim().slice(0, 600)}`,
        ...f.plan.map((line) => `  ${line}`),
      ].join('\n'),
    )
    .join('\n\n');
}

/** A storage over its own pool, named for how its statements are planned. */
export interface PlannedStorage {
  plans: string;
  storage: Storage;
  end: () => Promise<void>;
}

/**
 * Another session on `client`'s database, as the service's are (its plans reported by that database), planning as
 * `mode` says (plan_cache_mode: `auto` as the service, `force_generic_plan` for the plan a prepared statement may keep).
 */
export async function sessionPlanning(client: pg.Client, mode: 'auto' | 'force_generic_plan'): Promise<pg.Client> {
  const { host, port, user, password, database } = client;
  const session = new pg.Client({ host, port, user, password, database, options: `-c plan_cache_mode=${mode}` });
  await session.connect();
  return session;
}

/**
 * A fresh database every session of which reports the plans it runs, with their rows (auto_explain with ANALYZE): its
 * URL, for the storages or the app a test builds over it, and the test's own connection to it (`client`, ignored by
 * `capture`).
 */
export async function clientReportingPlans(capture: PlanCapture): Promise<{ client: pg.Client; url: string }> {
  const { url, name } = await freshDatabase();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  capture.ignore(client);
  await reportPlansToClients(client, name, { analyze: true });
  return { client, url };
}

/**
 * A database reporting its plans (clientReportingPlans), and storages over it: as the service plans (custom plans,
 * then generic ones) and, with `generic`, one whose prepared statements use the generic plan at once.
 */
export async function databaseReportingPlans(
  capture: PlanCapture,
  options: { generic?: boolean } = {},
): Promise<{ client: pg.Client; storages: PlannedStorage[] }> {
  const { client, url } = await clientReportingPlans(capture);
  const generic = new URL(url);
  generic.searchParams.set('options', '-c plan_cache_mode=force_generic_plan');
  const storages = [
    { plans: 'as the service plans', url },
    ...(options.generic ? [{ plans: 'generic plans', url: generic.toString() }] : []),
  ].map(({ plans, url }) => {
    const prisma = createPrisma(url, { max: 2 });
    return { plans, storage: storageOf(prisma), end: () => prisma.$disconnect() };
  });
  return { client, storages };
}

/**
 * `VACUUM (ANALYZE)` of `table`, again until the visibility map marks every page of it all-visible: what an index-only
 * scan and its cost need, as autovacuum keeps it on a service's quiet tables. A VACUUM cannot mark a page whose rows
 * are newer than the oldest snapshot in the database: an autovacuum ANALYZE that started while the test was still
 * inserting (the embedded PostgreSQL runs autovacuum) holds one, and the planner, costing the index-only scan as one
 * that visits the table, chose another index (the waiting breakdown, on a newcomer's run).
 */
export async function vacuumAllVisible(client: pg.Client, table: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await client.query(`VACUUM (ANALYZE) ${table}`);
    const { rows } = await client.query<{ relpages: number; relallvisible: number }>(
      'SELECT relpages, relallvisible FROM pg_class WHERE oid = $1::regclass',
      [table],
    );
    const { relpages, relallvisible } = rows[0]!;
    if (relallvisible >= relpages) return;
    if (Date.now() > deadline)
      throw new Error(`VACUUM left ${relpages - relallvisible} of ${relpages} pages of ${table} not all-visible`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
