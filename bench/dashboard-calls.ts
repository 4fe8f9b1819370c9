// The dashboard's pages with a million calls in one account (`npx tsx bench/dashboard-calls.ts`; not part of npm
// test): a fresh migrated database, an agency with a million calls (and their events) made by set-based SQL and two
// clients with 10,000 each, then the time of the first page, a deep keyset page, filtered pages, the searches (number
// prefix, name, metadata key/value, call id), the detail view and every other page over HTTP (the app listening on a
// local port, a keep-alive connection), as the agency's user (every page covers the three accounts), 200 requests each
// after a warm-up: median, p90, p99 and max per request, and the same pooled over all requests. Figures go to
// bench/README.md ("The dashboard with a million calls").
//
// It runs on the embedded PostgreSQL the product ships, as `npm run bench` does (bench/database.ts; BENCH_DATABASE_URL
// for another server), and issues no VACUUM or ANALYZE: after the bulk load it waits until the database's own
// autovacuum has visited the tables the pages read, as it has in a deployment whose calls came over months. BENCH_CALLS
// changes the size; BENCH_REQUESTS the requests per page; BENCH_KEEP=1 keeps the database (on BENCH_DATABASE_URL's
// server: the embedded one is removed with its data).
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { createAgency, createClient } from '../src/admin/accounts.js';
import { createAgent } from '../src/admin/agents.js';
import { setWebhook } from '../src/admin/webhooks.js';
import { buildApp, type App } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { loadSecrets } from '../src/secrets/keys.js';
import { createStorage } from '../src/storage/index.js';
import { declaredStatements } from '../src/storage/statements.js';
import { CSRF_COOKIE } from '../plugins/dashboard/index.js';
import { SESSION_COOKIE } from '../plugins/dashboard/session.js';
import { createUser } from '../src/admin/users.js';
import { hashPassword } from '../src/domain/password.js';
import { awaitAutovacuum } from './autovacuum.js';
import { benchPostgres, type BenchPostgres } from './database.js';
import { connect, freshDatabase, machineFacts } from './setup.js';
import { percentiles } from './stats.js';

const REDIS_URL = process.env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379';
const CALLS = Number(process.env.BENCH_CALLS || 1_000_000);
const CLIENT_CALLS = 10_000;
const REQUESTS = Number(process.env.BENCH_REQUESTS || 200);
/** How long to wait for autovacuum to visit the loaded tables before measuring anyway (and saying so). */
const AUTOVACUUM_WAIT_MS = 15 * 60_000;
/** The tables the pages read, which autovacuum should have visited (vacuumed and analyzed) first. */
const LOADED_TABLES = ['calls', 'call_events', 'webhook_deliveries', 'webhook_attempts'];
const WARM_UP = 20;
const TARGET_MS = 50;

// Not test/dashboard/helpers.ts: it loads vitest's hooks, which only run under vitest.
const HOST = 'dash.example.test';
const PASSWORD = 'bench dashboard passphrase';

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

interface HttpAnswer {
  status: number;
  body: string;
  cookies: string[];
}

/** A request over HTTP on one kept-alive connection, as a browser sends it (its cookies, the proxy's https header). */
function httpRequest(
  port: number,
  agent: http.Agent,
  path: string,
  cookie: string,
  form?: Record<string, string>,
): Promise<HttpAnswer> {
  const body = form ? new URLSearchParams(form).toString() : undefined;
  const headers: Record<string, string> = { host: HOST, 'x-forwarded-proto': 'https', cookie };
  if (body !== undefined)
    Object.assign(headers, { origin: `https://${HOST}`, 'content-type': 'application/x-www-form-urlencoded' });
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path, agent, method: body === undefined ? 'GET' : 'POST', headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            cookies: (res.headers['set-cookie'] ?? []).map((line) => line.split(';')[0]!),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Signs in through the sign-in form over HTTP; the Cookie header a browser then sends. */
async function signInOverHttp(port: number, agent: http.Agent, email: string): Promise<string> {
  const form = await httpRequest(port, agent, '/dashboard/sign-in', '');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body)?.[1];
  const csrfCookie = form.cookies.find((c) => c.startsWith(`${CSRF_COOKIE}=`));
  if (!csrf || !csrfCookie) throw new Error(`no sign-in form: ${form.status}`);
  const signedIn = await httpRequest(port, agent, '/dashboard/sign-in', csrfCookie, {
    _csrf: csrf
      .replace(/&#39;/g, "'")
      .replace(/&quot;/g, '"')
      .replace(/&amp;/g, '&'),
    email,
    password: PASSWORD,
  });
  const session = signedIn.cookies.find((c) => c.startsWith(`${SESSION_COOKIE}=`));
  if (signedIn.status !== 303 || !session) throw new Error(`sign-in failed: ${signedIn.status}`);
  return `${session}; ${csrfCookie}`;
}

/**
 * The server's time for each request it answers, from the request's arrival (its headers read) to the response handed
 * to the socket: what the 50 ms target is about. Over HTTP adds this process's own client, on a shared machine.
 */
function serverClock(server: http.Server): { last: () => number } {
  let last = 0;
  server.on('request', (_request: http.IncomingMessage, response: http.ServerResponse) => {
    const arrived = performance.now();
    response.once('finish', () => {
      last = performance.now() - arrived;
    });
  });
  return { last: () => last };
}

async function measure(
  get: (path: string) => Promise<{ status: number; body: string }>,
  clock: { last: () => number },
  scenario: Case,
) {
  for (let i = 0; i < WARM_UP; i++) await get(scenario.url);
  const samples: number[] = [];
  const overHttp: number[] = [];
  let status = 0;
  let rows = 0;
  for (let i = 0; i < REQUESTS; i++) {
    const started = performance.now();
    const res = await get(scenario.url);
    overHttp.push(performance.now() - started);
    samples.push(clock.last());
    status = res.status;
    rows = [...res.body.matchAll(/<td class="primary" data-label="Number"><a href="\/dashboard\/calls\//g)].length;
  }
  return { ...scenario, status, rows, samples, overHttp, ...percentiles(samples), http: percentiles(overHttp) };
}

async function main() {
  const postgres = await benchPostgres(log);
  // Interrupted (Ctrl-C): stop and remove the embedded server before leaving.
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => void postgres.stop().finally(() => process.exit(130)));
  try {
    await measureAll(postgres);
  } finally {
    await postgres.stop();
  }
}

const verdict = (p99: number) => (p99 < TARGET_MS ? `met (< ${TARGET_MS})` : `missed (< ${TARGET_MS})`);

async function measureAll(postgres: BenchPostgres) {
  const ADMIN_URL = postgres.adminUrl;
  const machine = await machineFacts(ADMIN_URL, REDIS_URL);
  log(`machine: ${machine.cores} cores, ${machine.cpuModel}, PostgreSQL ${machine.postgres}, Node ${machine.node}`);
  const database = await freshDatabase(ADMIN_URL, 'dashboard');
  log(`database ${database.name}`);
  const storage = createStorage(database.url, { max: 4 });
  // The app's key below (DATA_DIR .data/bench): the webhook secret is sealed with it.
  storage.secrets.use(loadSecrets(loadConfig({ DATA_DIR: '.data/bench', DATABASE_URL: database.url })).box);
  const db = await connect(database.url);
  let app: App | undefined;
  try {
    const { id: agencyId } = await createAgency(storage, { name: 'Million Calls Agency', plan: 'agency' });
    const clients = [
      (await createClient(storage, { agencyId, name: 'Client One', now: new Date() })).id,
      (await createClient(storage, { agencyId, name: 'Client Two', now: new Date() })).id,
    ];
    const agent = async (accountId: string, name: string) =>
      (await createAgent(storage, { accountId, name, phone: '+14155550100', now: new Date() })).id;
    const agents = [await agent(agencyId, 'Agent A'), await agent(agencyId, 'Agent B')];
    const rareAgent = await agent(agencyId, 'Rare Agent');
    await setWebhook(storage, agencyId, 'https://hooks.example.com/calls', { allowPrivate: false, now: new Date() });
    const { id: userId } = await createUser(storage, {
      accountId: agencyId,
      email: 'bench@dashboard.example',
      actor: { kind: 'operator' },
      now: new Date(),
    });
    await storage.users.setPasswordHash(userId, await hashPassword(PASSWORD, { N: 2 ** 10, r: 8, p: 1 }));

    const newest = new Date(Date.now() - 60_000);
    const started = performance.now();
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
    log(`generated in ${((performance.now() - started) / 1000).toFixed(0)} s; waiting for autovacuum`);
    const maintenance = (await awaitAutovacuum(db, { tables: LOADED_TABLES, maxMs: AUTOVACUUM_WAIT_MS })).text;
    log(maintenance);

    const sizes = await db.query<{ relation: string; size: string }>(`
      SELECT c.relname AS relation, pg_size_pretty(pg_relation_size(c.oid)) AS size FROM pg_class c
       WHERE c.relname IN ('calls', 'call_events', 'calls_account_id_created_at_id_idx', 'calls_account_id_status_created_at_idx',
                           'calls_account_id_agent_id_created_at_id_idx', 'calls_metadata_jsonb_idx', 'calls_account_id_phone_number_prefix_idx',
                           'calls_account_id_name_prefix_idx') ORDER BY 1`);
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
      TLS_MODE: 'proxy',
      LOG_LEVEL: 'silent',
      DATA_DIR: '.data/bench',
      DISPATCH_ENABLED: 'false',
      WEBHOOK_DELIVERY_ENABLED: 'false',
      REDIS_URL,
      DATABASE_URL: database.url,
    });
    app = await buildApp({ config, databaseUrl: database.url });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const clock = serverClock(app.server);
    const address = app.server.address();
    if (!address || typeof address === 'string') throw new Error('no port');
    const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const cookie = await signInOverHttp(address.port, keepAlive, 'bench@dashboard.example');
    const get = (path: string) => httpRequest(address.port, keepAlive, path, cookie);
    const probe = await get('/dashboard/calls');
    if (probe.status !== 200) throw new Error(`over HTTP: ${probe.status} ${probe.body.slice(0, 200)}`);
    // A searched call: its number, name and metadata (order is g as a string, n as a number).
    const searched = (
      await db.query<{ id: string; name: string; n: number }>(
        `SELECT id, name, (metadata::jsonb ->> 'n')::int AS n FROM calls WHERE account_id = $1 ORDER BY created_at DESC OFFSET $2 LIMIT 1`,
        [agencyId, Math.floor(CALLS * 0.7)],
      )
    ).rows[0]!;

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
      {
        name: 'search: number prefix +14150012 (5,000 calls)',
        url: `/dashboard/calls?number=${encodeURIComponent('+14150012')}`,
      },
      {
        name: 'search: number prefix +1415 (every call)',
        url: `/dashboard/calls?number=${encodeURIComponent('+1415')}`,
      },
      {
        name: 'search: name (1 call)',
        url: `/dashboard/calls?name=${encodeURIComponent(searched.name.toUpperCase())}`,
      },
      { name: 'search: name prefix "caller 12" (1.1%)', url: '/dashboard/calls?name=caller%2012' },
      { name: 'search: metadata n = <number> (1 call)', url: `/dashboard/calls?meta_key=n&meta_value=${searched.n}` },
      {
        name: 'search: metadata order = "<text>" (1 call)',
        url: `/dashboard/calls?meta_key=order&meta_value=${searched.n}`,
      },
      { name: 'search: metadata vip = true (half the calls)', url: '/dashboard/calls?meta_key=vip&meta_value=true' },
      { name: 'search: call id', url: `/dashboard/calls?call=${searched.id}` },
      { name: 'filtered: one day, mid-history', url: `/dashboard/calls?from=${day(middle)}&to=${day(middle)}` },
      { name: 'filtered: client', url: `/dashboard/calls?client=${clients[0]}` },
      { name: 'filtered: call id', url: `/dashboard/calls?call=${detailId}` },
      { name: 'detail view', url: `/dashboard/calls/${detailId}` },
      // Every other page, with the million calls in the account (issue 24, point 8).
      { name: 'page: Overview', url: '/dashboard' },
      { name: 'page: Agents', url: '/dashboard/agents' },
      { name: "page: an agent's page", url: `/dashboard/agents/${agents[0]}` },
      { name: 'page: new agent form', url: '/dashboard/agents/new' },
      { name: 'page: Clients', url: '/dashboard/clients' },
      { name: "page: a client's page", url: `/dashboard/clients/${clients[0]}` },
      { name: "page: a client's API & Webhooks", url: `/dashboard/clients/${clients[0]}/api-webhooks` },
      { name: 'page: do-not-call list', url: '/dashboard/do-not-call' },
      { name: 'page: Settings, API & Webhooks', url: '/dashboard/settings/api-webhooks' },
      { name: 'page: delivery log', url: '/dashboard/settings/api-webhooks/deliveries' },
      {
        name: 'page: delivery log, call.completed only',
        url: '/dashboard/settings/api-webhooks/deliveries?event=call.completed',
      },
      { name: 'page: delivery log, failed only', url: '/dashboard/settings/api-webhooks/deliveries?status=failed' },
      { name: 'page: Users', url: '/dashboard/users' },
      { name: 'page: Audit log', url: '/dashboard/audit-log' },
    ];
    const results = [];
    for (const scenario of cases) {
      const result = await measure(get, clock, scenario);
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
    // A search's parameters, then its page's: no bound, no other filter, 51 rows.
    const page = [
      'infinity',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
      '-infinity',
      null,
      null,
      null,
      null,
      null,
      null,
      51,
    ];
    await explain('oct_call_search_number', [all, '+14150012', ...page]);
    await explain('oct_call_search_name', [all, searched.name, ...page]);
    await explain('oct_call_search_name_newest', [
      all,
      'caller 12',
      'infinity',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
      '-infinity',
      51,
    ]);
    await explain('oct_call_search_metadata', [all, `{"n":${searched.n}}`, `{"n":"${searched.n}"}`, ...page]);

    const pooled = percentiles(results.flatMap((r) => r.samples));
    const pooledHttp = percentiles(results.flatMap((r) => r.overHttp));
    keepAlive.destroy();
    const lines = [
      `Dashboard Calls pages, ${counts.agency.toLocaleString('en')} calls in the agency (${counts.all.toLocaleString('en')} in its three accounts), ` +
        `${REQUESTS} requests each after ${WARM_UP} warm-up, over HTTP (one keep-alive connection), in ms: the ` +
        `server's time (request read to response handed to the socket), and the p99 as this process's client saw it:`,
      '',
      '| Request | Rows | Median | p90 | p99 | Max | Over HTTP, p99 | Target (server p99) |',
      '|---|---:|---:|---:|---:|---:|---:|---|',
      ...results.map(
        (r) =>
          `| ${r.name} | ${r.url.startsWith('/dashboard/calls?') || r.url === '/dashboard/calls' ? r.rows : '-'} | ${r.p50} | ${r.p90} | ${r.p99} | ${r.max} | ${r.http.p99} | ${verdict(r.p99)} |`,
      ),
      `| all requests, pooled (${pooled.count}) | - | ${pooled.p50} | ${pooled.p90} | ${pooled.p99} | ${pooled.max} | ${pooledHttp.p99} | ${verdict(pooled.p99)} |`,
      '',
      `Database: ${postgres.kind === 'embedded' ? 'the embedded PostgreSQL (stock settings, autovacuum on)' : 'BENCH_DATABASE_URL'}; ${maintenance}.`,
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
    await storage.close();
    if (process.env.BENCH_KEEP === '1') log(`kept ${database.name}`);
    else await database.drop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
