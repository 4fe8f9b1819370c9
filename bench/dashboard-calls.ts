// The dashboard's Calls pages with a million calls in one account (`npx tsx bench/dashboard-calls.ts`; not part of
// npm test): a fresh migrated database, an agency with a million calls (and their events) made by set-based SQL and two
// clients with 10,000 each, then the server time of the first page, a deep keyset page, filtered pages and the detail
// view through inject(), as the agency's user (every page covers the three accounts), 50 requests each after a
// warm-up: median and p99. Figures go to bench/README.md ("Dashboard with a million calls"). BENCH_CALLS changes the
// size; BENCH_KEEP=1 keeps the database (its name is printed).
import { performance } from 'node:perf_hooks';
import { createAgency, createClient } from '../src/admin/accounts.js';
import { createAgent } from '../src/admin/agents.js';
import { setWebhook } from '../src/admin/webhooks.js';
import { buildApp, type App } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createPrisma } from '../src/storage/database.js';
import { declaredStatements } from '../src/storage/statements.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor } from '../test/dashboard/helpers.js';
import { connect, freshDatabase, machineFacts } from './setup.js';
import { percentiles } from './stats.js';

const ADMIN_URL = process.env.BENCH_DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
const CALLS = Number(process.env.BENCH_CALLS || 1_000_000);
const CLIENT_CALLS = 10_000;
const REQUESTS = 50;
const WARM_UP = 20;
const TARGET_MS = 50;

const log = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);

/**
 * `count` calls of one account, newest at `newest`, one every 15.5 s on average (pairs share an instant, so pages meet
 * ties): every 20th failed (busy or no answer), the rest completed; 200,000 destination numbers (5 calls each);
 * agents alternating, except every 1,000th call, which has the rare agent; each call with its 3 or 4 events.
 */
async function generateCalls(
  db: Awaited<ReturnType<typeof connect>>,
  input: { accountId: string; agents: string[]; rareAgent: string; count: number; newest: Date },
) {
  const chunk = 100_000;
  for (let start = 0; start < input.count; start += chunk) {
    const end = Math.min(input.count, start + chunk) - 1;
    await db.query(
      `
      WITH made AS (
        INSERT INTO calls (id, account_id, agent_id, phone_number, from_number, name, email, metadata, status, failure_reason, not_before,
                           expires_at, created_at, updated_at, started_at, answered_at, ended_at, duration_seconds)
        SELECT gen_random_uuid(), $1::uuid,
               CASE WHEN g % 1000 = 7 THEN $3::uuid ELSE ($2::uuid[])[1 + g % array_length($2::uuid[], 1)] END,
               '+1415' || lpad((g % 200000)::text, 7, '0'), '+14155550100', 'Caller ' || g, 'caller' || g || '@example.com',
               ('{"order":"' || g || '","n":' || g || ',"vip":' || (g % 2 = 0) || ',"note":null}')::json,
               CASE WHEN g % 20 = 0 THEN 'failed' ELSE 'completed' END::call_status,
               CASE WHEN g % 40 = 0 THEN 'busy' WHEN g % 20 = 0 THEN 'no_answer' END::failure_reason,
               t, t + interval '1 day', t, t + interval '70 seconds', t + interval '1 second',
               CASE WHEN g % 20 <> 0 THEN t + interval '5 seconds' END, t + interval '70 seconds', CASE WHEN g % 20 <> 0 THEN 65 END
          FROM generate_series($4::int, $5::int) AS g,
               LATERAL (SELECT $6::timestamptz - (g / 2) * interval '31 seconds' AS t) AS at
        RETURNING id, status, failure_reason, created_at
      )
      INSERT INTO call_events (id, call_id, from_status, to_status, failure_reason, source, occurred_at)
      SELECT gen_random_uuid(), m.id, e.from_status::call_status, e.to_status::call_status,
             CASE WHEN e.to_status = 'failed' THEN m.failure_reason END, e.source, m.created_at + e.after
        FROM made m CROSS JOIN LATERAL (VALUES
          (NULL, 'initiated', 'api', interval '0'),
          ('initiated', 'dialing', 'dispatcher', interval '1 second'),
          ('dialing', 'in_progress', 'provider', interval '5 seconds'),
          ('in_progress', 'completed', 'provider', interval '70 seconds'),
          ('dialing', 'failed', 'provider', interval '70 seconds')) AS e(from_status, to_status, source, after)
       WHERE e.to_status IN ('initiated', 'dialing')
          OR (m.status = 'completed' AND e.to_status IN ('in_progress', 'completed'))
          OR (m.status = 'failed' AND e.to_status = 'failed')`,
      [input.accountId, input.agents, input.rareAgent, start, end, input.newest],
    );
    log(`  ${end + 1} of ${input.count} calls`);
  }
}

/** A call.started and a call.completed delivery for every 100th call of the account, each with one attempt. */
async function generateDeliveries(db: Awaited<ReturnType<typeof connect>>, accountId: string) {
  await db.query(
    `
    WITH picked AS (
      SELECT c.id, c.created_at, e.id AS endpoint_id FROM calls c JOIN webhook_endpoints e ON e.account_id = c.account_id
       WHERE c.account_id = $1::uuid AND c.status = 'completed' AND abs(hashtext(c.id::text)) % 100 = 0
    ), made AS (
      INSERT INTO webhook_deliveries (id, endpoint_id, call_id, call_event_id, event_type, payload, status, attempt_count, next_attempt_at,
                                      last_attempt_at, completed_at, created_at)
      SELECT gen_random_uuid(), p.endpoint_id, p.id, ev.id, CASE ev.to_status WHEN 'dialing' THEN 'call.started' ELSE 'call.completed' END,
             '{}', 'succeeded', 1, ev.occurred_at, ev.occurred_at, ev.occurred_at, ev.occurred_at
        FROM picked p JOIN call_events ev ON ev.call_id = p.id AND ev.to_status IN ('dialing', 'completed')
      RETURNING id, created_at
    )
    INSERT INTO webhook_attempts (id, delivery_id, attempt_number, started_at, duration_ms, response_status)
    SELECT gen_random_uuid(), id, 1, created_at, 40, 200 FROM made`,
    [accountId],
  );
}

interface Case {
  name: string;
  url: string;
}

async function measure(visitor: Visitor, scenario: Case) {
  for (let i = 0; i < WARM_UP; i++) await visitor.get(scenario.url);
  const samples: number[] = [];
  let status = 0;
  let rows = 0;
  for (let i = 0; i < REQUESTS; i++) {
    const started = performance.now();
    const res = await visitor.get(scenario.url);
    samples.push(performance.now() - started);
    status = res.status;
    rows = [...res.body.matchAll(/<tr><td><a href="\/dashboard\/calls\//g)].length;
  }
  return { ...scenario, status, rows, ...percentiles(samples) };
}

async function main() {
  const machine = await machineFacts(ADMIN_URL, REDIS_URL);
  log(`machine: ${machine.cores} cores, ${machine.cpuModel}, PostgreSQL ${machine.postgres}, Node ${machine.node}`);
  const database = await freshDatabase(ADMIN_URL, 'dashboard');
  log(`database ${database.name}`);
  const prisma = createPrisma(database.url, { max: 4 });
  const db = await connect(database.url);
  let app: App | undefined;
  try {
    const { id: agencyId } = await createAgency(prisma, { name: 'Million Calls Agency', plan: 'agency' });
    const clients = [
      (await createClient(prisma, { agencyId, name: 'Client One' })).id,
      (await createClient(prisma, { agencyId, name: 'Client Two' })).id,
    ];
    const agent = async (accountId: string, name: string) =>
      (await createAgent(prisma, { accountId, name, phone: '+14155550100' })).id;
    const agents = [await agent(agencyId, 'Agent A'), await agent(agencyId, 'Agent B')];
    const rareAgent = await agent(agencyId, 'Rare Agent');
    await setWebhook(prisma, agencyId, 'https://hooks.example.com/calls', { allowPrivate: false });
    await createUserWithPassword(prisma, agencyId, 'bench@dashboard.example');

    const newest = new Date(Date.now() - 60_000);
    let started = performance.now();
    log(`generating ${CALLS} calls in the agency and ${CLIENT_CALLS} in each client`);
    await generateCalls(db, { accountId: agencyId, agents, rareAgent, count: CALLS, newest });
    for (const [i, clientId] of clients.entries()) {
      await generateCalls(db, {
        accountId: clientId,
        agents: [await agent(clientId, `Client Agent ${i + 1}`)],
        rareAgent: agents[0]!,
        count: CLIENT_CALLS,
        newest,
      });
    }
    await generateDeliveries(db, agencyId);
    log(`generated in ${((performance.now() - started) / 1000).toFixed(0)} s; VACUUM ANALYZE`);
    started = performance.now();
    await db.query('VACUUM ANALYZE calls, call_events, webhook_deliveries, webhook_attempts, accounts, agents');
    log(`vacuumed in ${((performance.now() - started) / 1000).toFixed(0)} s`);

    const sizes = await db.query<{ relation: string; size: string }>(`
      SELECT c.relname AS relation, pg_size_pretty(pg_relation_size(c.oid)) AS size FROM pg_class c
       WHERE c.relname IN ('calls', 'call_events', 'calls_account_id_created_at_id_idx', 'calls_account_id_status_created_at_idx',
                           'calls_account_id_agent_id_created_at_id_idx', 'calls_account_id_phone_number_created_at_id_idx') ORDER BY 1`);
    const counts = (
      await db.query<{ agency: number; all: number }>(
        'SELECT count(*) FILTER (WHERE account_id = $1)::int AS agency, count(*)::int AS "all" FROM calls',
        [agencyId],
      )
    ).rows[0]!;
    // The cursor of a page near the end of the agency's calls (90% of the way down), and a call to look at.
    const deep = (
      await db.query<{ created_at: Date; id: string }>(
        'SELECT created_at, id FROM calls WHERE account_id = $1 ORDER BY created_at DESC, id DESC OFFSET $2 LIMIT 1',
        [agencyId, Math.floor(CALLS * 0.9)],
      )
    ).rows[0]!;
    const detailId = (
      await db.query<{ id: string }>(
        'SELECT d.call_id AS id FROM webhook_deliveries d JOIN calls c ON c.id = d.call_id WHERE c.account_id = $1 LIMIT 1',
        [agencyId],
      )
    ).rows[0]!.id;
    const middle = new Date(newest.getTime() - (CALLS / 2) * 15.5 * 1000);
    const day = (at: Date) => at.toISOString().slice(0, 10);
    const before = `${deep.created_at.toISOString()}_${deep.id}`;

    const config = loadConfig({
      ...DASHBOARD_ENV,
      LOG_LEVEL: 'silent',
      DATA_DIR: '.data/bench',
      DISPATCH_ENABLED: 'false',
      WEBHOOK_DELIVERY_ENABLED: 'false',
      REDIS_URL,
      DATABASE_URL: database.url,
    });
    app = await buildApp({ config, databaseUrl: database.url });
    const visitor = new Visitor(app);
    if ((await visitor.signIn('bench@dashboard.example')).status !== 303) throw new Error('sign-in failed');

    const cases: Case[] = [
      { name: 'baseline: Account page (reads no calls)', url: '/dashboard/account' },
      { name: 'first page', url: '/dashboard/calls' },
      { name: 'deep keyset page (90% down)', url: `/dashboard/calls?before=${encodeURIComponent(before)}` },
      { name: 'filtered: status=failed', url: '/dashboard/calls?status=failed' },
      {
        name: 'filtered: status=failed, deep',
        url: `/dashboard/calls?status=failed&before=${encodeURIComponent(before)}`,
      },
      { name: 'filtered: rare agent (0.1%)', url: `/dashboard/calls?agent=${rareAgent}` },
      { name: 'filtered: number (5 calls)', url: `/dashboard/calls?number=${encodeURIComponent('+14150012345')}` },
      { name: 'filtered: one day, mid-history', url: `/dashboard/calls?from=${day(middle)}&to=${day(middle)}` },
      { name: 'filtered: client', url: `/dashboard/calls?client=${clients[0]}` },
      { name: 'filtered: call id', url: `/dashboard/calls?call=${detailId}` },
      { name: 'detail view', url: `/dashboard/calls/${detailId}` },
    ];
    const results = [];
    for (const scenario of cases) {
      const result = await measure(visitor, scenario);
      if (result.status !== 200) throw new Error(`${scenario.name}: HTTP ${result.status}`);
      log(`${scenario.name}: median ${result.p50} ms, p99 ${result.p99} ms`);
      results.push(result);
    }

    // The plans PostgreSQL keeps for the prepared statements after a few executions (generic plans), for the record.
    const explain = async (name: string, values: (string | number | Date | string[] | null)[]) => {
      const text = declaredStatements().find((s) => s.name === name)!.text;
      await db.query('SET plan_cache_mode = force_generic_plan');
      await db.query(`PREPARE explained AS ${text}`);
      const literal = (v: string | number | Date | string[] | null) =>
        v === null
          ? 'NULL'
          : `'${(Array.isArray(v) ? `{${v.join(',')}}` : v instanceof Date ? v.toISOString() : String(v)).replace(/'/g, "''")}'`;
      const plan = await db.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) EXECUTE explained(${values.map(literal).join(', ')})`,
      );
      await db.query('DEALLOCATE explained');
      await db.query('RESET plan_cache_mode');
      log(`generic plan of ${name}:\n${plan.rows.map((r) => `    ${r['QUERY PLAN']}`).join('\n')}`);
    };
    const all = [agencyId, ...clients];
    await explain('oct_call_history', [all, 'infinity', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '-infinity', 51]);
    await explain('oct_call_history', [all, deep.created_at, deep.id, '-infinity', 51]);
    await explain('oct_call_history_status', [all, deep.created_at, deep.id, '-infinity', 'failed', 51]);
    await explain('oct_call_history_agent_id', [
      all,
      'infinity',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
      '-infinity',
      rareAgent,
      51,
    ]);
    await explain('oct_call_history_phone_number', [
      all,
      'infinity',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
      '-infinity',
      '+14150012345',
      51,
    ]);

    const lines = [
      `Dashboard Calls pages, ${counts.agency.toLocaleString('en')} calls in the agency (${counts.all.toLocaleString('en')} in its three accounts), ` +
        `${REQUESTS} requests each after ${WARM_UP} warm-up, server time through inject(), in ms:`,
      '',
      '| Request | Rows | Median | p99 | Target |',
      '|---|---:|---:|---:|---|',
      ...results.map(
        (r) =>
          `| ${r.name} | ${r.url.startsWith('/dashboard/calls?') || r.url === '/dashboard/calls' ? r.rows : '-'} | ${r.p50} | ${r.p99} | ${r.p99 < TARGET_MS ? `met (< ${TARGET_MS})` : `missed (< ${TARGET_MS})`} |`,
      ),
      '',
      `Sizes: ${sizes.rows.map((r) => `${r.relation} ${r.size}`).join(', ')}.`,
      `Machine: ${machine.cores} cores (${machine.cpuModel}), ${machine.memoryGiB} GiB, PostgreSQL ${machine.postgres}, Node ${machine.node}; ` +
        `load average before the measurements: ${(await import('node:os'))
          .loadavg()
          .map((n) => n.toFixed(2))
          .join(' ')}.`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await app?.close();
    await db.end();
    await prisma.$disconnect();
    if (process.env.BENCH_KEEP === '1') log(`kept ${database.name}`);
    else await database.drop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
