// The scale bench's tenants (bench/scale/data.ts): which account plays which part, and the accounts, agents, keys,
// endpoints, dashboard user and waiting calls, written set-based (arrays through unnest) with the service's formats.
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { createUser, setPasswordWithLink } from '../../src/admin/users.js';
import { generateApiKey } from '../../src/domain/api-key.js';
import { nextWindowOpening, type CallingWindow } from '../../src/domain/calling-window.js';
import { generateWebhookSecret } from '../../src/domain/webhook-secret.js';
import { createStorage } from '../../src/storage/index.js';
import { v7IdSql } from '../setup.js';
import { personNameSql, SEARCHED_NAMES } from './names.js';

/** The accounts every database has: what the measurements need (BASE in data.ts). */
export interface BaseShape {
  /** Agencies of clientsPerAgency clients each; account 0 (an agency) is the dashboard's. */
  agencies: number;
  clientsPerAgency: number;
  /**
   * The dashboard's agency's clients in every database: its clientsPerAgency, then the rest after every base agency
   * (not keyed, no endpoint, no calls). Enough that its pages take their large-agency form (BASE in data.ts).
   */
  dashboardClients: number;
  /** The first `keys` accounts have an API key (the trigger load rotates over them). */
  keys: number;
  /** The first `endpoints` accounts have a webhook endpoint; timingOut of them (never account 0) never answer. */
  endpoints: number;
  timingOut: number;
  /** The last drainAccounts of the keyed accounts (all of them by default) take the drain's waiting calls. */
  drainAccounts: number;
}

/** The tenants dimension: more accounts, in agencies of skewed sizes, the dashboard's own agency the largest. */
export interface TenantsShape {
  /** Accounts added to the base ones. */
  accounts: number;
  /** Clients of the largest agency (account 0's); the k-th agency after it has about largestAgency / k. */
  largestAgency: number;
}

/** Every account by number n: the base accounts first (agency, then its clients), then the tenants dimension's. */
export interface Layout {
  accountIds: string[];
  agentIds: string[];
  agentPhones: string[];
  agencyOf: number[];
  /** n = 0: the dashboard's account (an agency), keyed, with an endpoint. */
  big: number;
  keyed: number[];
  /** The accounts of the drain's waiting calls. */
  waiting: number[];
  healthy: number[];
  timingOut: number[];
  /** Second agents with calling windows (the queue dimension's: its calls wait for them). */
  windowed: { agentId: string; owner: number }[];
}

/** `count` members of `pool`, evenly spread over it. */
function spread<T>(pool: readonly T[], count: number): T[] {
  const n = Math.min(count, pool.length);
  return Array.from({ length: n }, (_, i) => pool[Math.floor((i * pool.length) / n)]!);
}

const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);

/**
 * The base accounts (agencies of clientsPerAgency clients, then account 0's further clients up to dashboardClients),
 * then for `tenants` its accounts: account 0's agency grown to largestAgency clients, then agencies whose k-th (k >= 2)
 * has largestAgency / k clients (0 when that is below 1: agencies on their own), until `tenants.accounts` are added.
 * `windowed`: one windowed agent per keyed account.
 */
export function planLayout(base: BaseShape, tenants: TenantsShape | null, windowed: boolean): Layout {
  const agencyOf: number[] = [];
  for (let a = 0; a < base.agencies; a++) {
    const agency = agencyOf.length;
    for (let c = 0; c <= base.clientsPerAgency; c++) agencyOf.push(agency);
  }
  for (let c = base.clientsPerAgency; c < base.dashboardClients; c++) agencyOf.push(0);
  const baseTotal = agencyOf.length;
  if (baseTotal < base.keys || base.keys < base.endpoints || base.keys < base.drainAccounts)
    throw new Error(`${baseTotal} base accounts cannot hold ${base.keys} keyed ones with their endpoints and drain`);
  if (tenants) {
    const limit = baseTotal + tenants.accounts;
    for (let c = base.dashboardClients; c < tenants.largestAgency && agencyOf.length < limit; c++) agencyOf.push(0);
    for (let k = 2; agencyOf.length < limit; k++) {
      const agency = agencyOf.length;
      agencyOf.push(agency);
      const clients = Math.floor(tenants.largestAgency / k);
      for (let c = 0; c < clients && agencyOf.length < limit; c++) agencyOf.push(agency);
    }
  }
  const total = agencyOf.length;
  const accountIds = range(0, total).map(() => randomUUID());
  const agentIds = range(0, total).map(() => randomUUID());
  const agentPhones = range(0, total).map((n) => `+1415${String(5_000_000 + n).padStart(7, '0')}`);
  const keyed = range(0, base.keys);
  const withEndpoint = range(0, base.endpoints);
  const stalled = new Set(spread(withEndpoint.slice(1), base.timingOut));
  return {
    accountIds,
    agentIds,
    agentPhones,
    agencyOf,
    big: 0,
    keyed,
    waiting: range(base.keys - base.drainAccounts, base.keys),
    healthy: withEndpoint.filter((n) => !stalled.has(n)),
    timingOut: [...stalled],
    windowed: windowed ? keyed.map((owner) => ({ agentId: randomUUID(), owner })) : [],
  };
}

/** The time zones the agents are spread over (the windowed agents use the first). */
const ZONES = ['America/New_York', 'America/Chicago', 'America/Los_Angeles', 'Europe/London', 'UTC'];
export const WINDOWED_ZONE = ZONES[0]!;

/** Accounts, their default agents, the windowed agents, keys and endpoints. Returns the plaintext keys by account number. */
export async function insertTenants(
  db: pg.ClientBase,
  layout: Layout,
  urls: { receiverUrl: string; stallUrl: string },
  now: Date,
): Promise<Map<number, string>> {
  const all = layout.accountIds.map((_, n) => n);
  const since = new Date(now.getTime() - 400 * 86_400_000);
  await db.query(
    `
    INSERT INTO accounts (id, kind, name, agency_id, plan, api_access_enabled, created_at, updated_at)
    SELECT a.id, CASE WHEN a.agency IS NULL THEN 'agency' ELSE 'client' END::account_kind, a.name, a.agency,
           CASE WHEN a.agency IS NULL THEN 'agency' END::plan, true, $4, $4
      FROM unnest($1::uuid[], $2::text[], $3::uuid[]) AS a(id, name, agency)`,
    [
      layout.accountIds,
      all.map((n) => (layout.agencyOf[n] === n ? `Scale Agency ${n}` : `Scale Client ${n}`)),
      all.map((n) => (layout.agencyOf[n] === n ? null : layout.accountIds[layout.agencyOf[n]!])),
      since,
    ],
  );
  await db.query(
    `
    INSERT INTO agents (id, account_id, agency_id, name, phone_number, timezone, calling_windows, outside_window_policy, created_at, updated_at)
    SELECT a.id, a.account, a.agency, a.name, a.phone, a.zone, '[]', 'queue', $7, $7
      FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[]) AS a(id, account, agency, name, phone, zone)`,
    [
      layout.agentIds,
      layout.accountIds,
      all.map((n) => layout.accountIds[layout.agencyOf[n]!]),
      all.map((n) => `Agent ${n}`),
      layout.agentPhones,
      all.map((n) => ZONES[n % ZONES.length]),
      since,
    ],
  );
  await db.query(
    `UPDATE accounts a SET default_agent_id = d.agent FROM unnest($1::uuid[], $2::uuid[]) AS d(account, agent) WHERE a.id = d.account`,
    [layout.accountIds, layout.agentIds],
  );
  const w = layout.windowed;
  await db.query(
    `
    INSERT INTO agents (id, account_id, agency_id, name, phone_number, timezone, calling_windows, outside_window_policy, created_at, updated_at)
    SELECT a.id, a.account, a.agency, 'Evening Agent', a.phone, $5, '[]', 'queue', $6, $6
      FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[]) AS a(id, account, agency, phone)`,
    [
      w.map((x) => x.agentId),
      w.map((x) => layout.accountIds[x.owner]),
      w.map((x) => layout.accountIds[layout.agencyOf[x.owner]!]),
      w.map((x) => layout.agentPhones[x.owner]),
      WINDOWED_ZONE,
      since,
    ],
  );

  const keys = layout.keyed.map((n) => ({ n, ...generateApiKey() }));
  await db.query(
    `
    INSERT INTO api_keys (id, account_id, digest, display_prefix, created_at)
    SELECT gen_random_uuid(), k.account, k.digest, k.prefix, $4 FROM unnest($1::uuid[], $2::bytea[], $3::text[]) AS k(account, digest, prefix)`,
    [keys.map((k) => layout.accountIds[k.n]), keys.map((k) => k.digest), keys.map((k) => k.displayPrefix), since],
  );
  const endpoints = [
    ...layout.healthy.map((n) => ({ n, url: urls.receiverUrl })),
    ...layout.timingOut.map((n) => ({ n, url: urls.stallUrl })),
  ];
  await db.query(
    `
    INSERT INTO webhook_endpoints (id, account_id, url, secret, enabled, created_at, updated_at)
    SELECT gen_random_uuid(), e.account, e.url, e.secret, true, $4, $4 FROM unnest($1::uuid[], $2::text[], $3::text[]) AS e(account, url, secret)`,
    [
      endpoints.map((e) => layout.accountIds[e.n]),
      endpoints.map((e) => e.url),
      endpoints.map(() => generateWebhookSecret()),
      since,
    ],
  );
  return new Map(keys.map((k) => [k.n, k.key]));
}

/**
 * The dashboard user's email, new for each build: sign-ins are throttled per email (10 in 15 minutes, in Redis), and
 * runs one after the other would otherwise share one count.
 */
export const dashboardEmail = () => `scale.bench+${randomUUID().slice(0, 8)}@dashboard.example.com`;
export const DASHBOARD_PASSWORD = 'scale bench: a million calls';

/** The dashboard user of the big account (an agency user), made by the operator functions with a real password hash. */
export async function createDashboardUser(databaseUrl: string, accountId: string, email: string): Promise<void> {
  const storage = createStorage(databaseUrl, { max: 2 });
  try {
    const { token } = await createUser(storage, { accountId, email, actor: { kind: 'operator' }, now: new Date() });
    const set = await setPasswordWithLink(storage, { token, password: DASHBOARD_PASSWORD, ip: null, now: new Date() });
    if (!set.ok) throw new Error(`dashboard user: ${set.problem}`);
  } finally {
    await storage.close();
  }
}

/** A one-hour window three days ahead: the queue dimension's windowed calls wait days for it. */
export function distantWindow(now: Date): { windows: CallingWindow[]; opensAt: Date } {
  const weekday = ((new Date(now.getTime() + 3 * 86_400_000).getUTCDay() + 6) % 7) + 1;
  const windows = [{ days: [weekday], start: '03:00', end: '04:00' }];
  return { windows, opensAt: nextWindowOpening(windows, WINDOWED_ZONE, now)! };
}

/** The call's own 24 h to live, counted from when it may first be dialled (QUEUED_CALL_TTL_HOURS' default). */
export const TTL = "interval '24 hours'";

/**
 * The SQL function that gives a generated row the id the service would have given it when it was written: a UUIDv7
 * of that moment (src/domain/ids.ts newRowId; bench/setup.ts v7IdSql). Created for the build and dropped after it.
 */
export const ROW_ID = 'oct_bench_row_id';

export async function createRowIdFunction(db: pg.ClientBase): Promise<void> {
  await db.query(`
    CREATE OR REPLACE FUNCTION ${ROW_ID}(at timestamptz) RETURNS uuid LANGUAGE sql VOLATILE AS $$ SELECT ${v7IdSql('at')} $$`);
}

export async function dropRowIdFunction(db: pg.ClientBase): Promise<void> {
  await db.query(`DROP FUNCTION IF EXISTS ${ROW_ID}(timestamptz)`);
}

/** The accounts `ns`' ids, their default agents' ids and those agents' numbers: three parameters, for unnest. */
function accountsAgentsPhones(layout: Layout, ns: number[]): [string[], string[], string[]] {
  return [
    ns.map((n) => layout.accountIds[n]!),
    ns.map((n) => layout.agentIds[n]!),
    ns.map((n) => layout.agentPhones[n]!),
  ];
}

/**
 * Due waiting calls for the drain, with their `initiated` events, written as the acceptance writes them (one
 * transaction, the triggers on, so that accounts.waiting_calls counts them), spread evenly over the drain's accounts'
 * default agents, accepted over the last minute. Returns their ids. After the build (its row-id function is gone).
 */
export async function insertDrainCalls(db: pg.ClientBase, layout: Layout, count: number, now: Date): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `
    WITH target AS (
      SELECT row_number() OVER () - 1 AS i, account, agent, phone FROM unnest($1::uuid[], $2::uuid[], $3::text[]) AS t(account, agent, phone)
    ), made AS (
      INSERT INTO calls (id, account_id, agent_id, phone_number, from_number, name, email, metadata, status, not_before, expires_at, created_at, updated_at)
      SELECT ${v7IdSql('c.at')}, t.account, t.agent, '+1' || (201 + g % 700) || lpad(((g::bigint * 7919) % 10000000)::text, 7, '0'), t.phone,
             ${personNameSql('g')}, CASE WHEN g % 3 <> 0 THEN 'lead' || g || '@example.com' END,
             ('{"crm_id":"D-' || g || '","campaign":"drain-' || (g % 7) || '"}')::json,
             'initiated', c.at, c.at + ${TTL}, c.at, c.at
        FROM generate_series(0, $4::int - 1) AS g
        JOIN target t ON t.i = g % $5::int
        CROSS JOIN LATERAL (SELECT $6::timestamptz - (($4::int - g) * 60.0 / $4::int) * interval '1 second' AS at) AS c
      RETURNING id, created_at
    ), events AS (
      INSERT INTO call_events (id, call_id, to_status, source, occurred_at) SELECT ${v7IdSql('created_at')}, id, 'initiated', 'api', created_at FROM made
    )
    SELECT id FROM made`,
    [...accountsAgentsPhones(layout, layout.waiting), count, layout.waiting.length, now],
  );
  return rows.map((r) => r.id);
}

/**
 * SQL that follows a CTE `made` of completed calls (id, account, agent, phone, name, k, created, started, answered,
 * ended; k numbers the call, for its number, email and metadata): writes them as the service leaves a completed call,
 * with their four events. Its row count is the events'.
 */
function completedCallsWritten(campaign: string): string {
  return `, calls_written AS (
      INSERT INTO calls (id, account_id, agent_id, phone_number, from_number, name, email, metadata, status, not_before, expires_at,
                         created_at, updated_at, started_at, answered_at, ended_at, duration_seconds, provider_call_id, dial_attempts)
      SELECT c.id, c.account, c.agent, '+1' || (201 + c.k % 700) || lpad(((c.k * 104729) % 10000000)::text, 7, '0'), c.phone, c.name,
             'lead' || c.k || '@example.com', ('{"crm_id":"N-' || c.k || '","campaign":"${campaign}"}')::json, 'completed', c.created,
             c.created + ${TTL}, c.created, c.ended, c.started, c.answered, c.ended,
             extract(epoch FROM c.ended - c.answered)::int, 'sim_' || c.id, 1
        FROM made c
    )
    INSERT INTO call_events (id, call_id, from_status, to_status, source, occurred_at)
    SELECT ${ROW_ID}(e.at), c.id, e.from_status::call_status, e.to_status::call_status, e.source, e.at
      FROM made c CROSS JOIN LATERAL (VALUES
        (NULL, 'initiated', 'api', c.created), ('initiated', 'dialing', 'dispatcher', c.started),
        ('dialing', 'in_progress', 'provider', c.answered), ('in_progress', 'completed', 'provider', c.ended))
        AS e(from_status, to_status, source, at)`;
}

/**
 * The name search's page on every database (names.ts, SEARCHED_NAMES): for each account of the base's dashboard
 * agency, a completed call with each searched name, with its four events, one every two hours over the last three
 * weeks (none among the newest calls, none old enough for retention, none ended today or yesterday, whose outcomes
 * are counted). Without them the empty database's agency had only the drain's few matches, and its search listed a
 * handful of names and rendered a part of a page where the history's listed some 250 and rendered 50 rows: 1.24-1.94x
 * at p50 in every run since the fourteenth session, a measure of the empty side having nothing to find.
 */
export async function insertSearchedNames(
  db: pg.ClientBase,
  layout: Layout,
  base: BaseShape,
  now: Date,
): Promise<number> {
  // The base's agency alone (account 0 and its clients, laid out first): the tenants dimension grows it to a thousand
  // clients, whose calls are its own (insertClientCalls).
  const agency = range(0, base.clientsPerAgency + 1).filter((n) => layout.agencyOf[n] === layout.agencyOf[layout.big]);
  const { rowCount } = await db.query(
    `
    WITH target AS (
      SELECT row_number() OVER () - 1 AS i, account, agent, phone FROM unnest($1::uuid[], $2::uuid[], $3::text[]) AS t(account, agent, phone)
    ), named AS (
      SELECT row_number() OVER () - 1 AS j, name FROM unnest($4::text[]) AS name
    ), made AS MATERIALIZED (
      SELECT ${ROW_ID}(s.created) AS id, t.account, t.agent, t.phone, n.name, t.i * 1000 + n.j AS k, s.created,
             s.created + interval '2 seconds' AS started, s.created + interval '6 seconds' AS answered,
             s.created + interval '96 seconds' AS ended
        FROM target t CROSS JOIN named n
        CROSS JOIN LATERAL (SELECT $5::timestamptz - interval '3 days' - (t.i * $6::int + n.j) * interval '2 hours' AS created) AS s
    )${completedCallsWritten('names')}`,
    [...accountsAgentsPhones(layout, agency), SEARCHED_NAMES, now, SEARCHED_NAMES.length],
  );
  return (rowCount ?? 0) / 4;
}

/** The most calls one client of the grown agency has (insertClientCalls). */
const CLIENT_CALLS_MAX = 200;

/**
 * The tenants dimension: the dashboard's agency's clients beyond the base's first clientsPerAgency are not idle (on
 * the other databases the base's further ones are: BASE in data.ts). Each has completed calls with
 * their events, how many picked with a Zipf-like share from a hash of its id (1 to CLIENT_CALLS_MAX: many clients with
 * a few, a few with many; some 37 on average), over the last 90 days, named as the history's calls are. Until the
 * twenty-fourth session they had none, and no run measured an agency whose clients call: its list reads each client's
 * newest call and its name search each client's names. The other agencies' clients stay idle (no page reads them).
 * Written with the triggers on, as the acceptance and the dispatcher would have left them.
 */
export async function insertClientCalls(
  db: pg.ClientBase,
  layout: Layout,
  base: BaseShape,
  now: Date,
): Promise<number> {
  const clients = layout.agencyOf.flatMap((agency, n) =>
    n > base.clientsPerAgency && agency === layout.agencyOf[layout.big] ? [n] : [],
  );
  const { rowCount } = await db.query(
    `
    WITH target AS (
      SELECT row_number() OVER () AS i, account, agent, phone FROM unnest($1::uuid[], $2::uuid[], $3::text[]) AS t(account, agent, phone)
    ), sized AS (
      SELECT t.*, least($5::int, greatest(1, floor(power($5::float8,
               (hashtext(t.account::text) & 2147483647)::float8 / 2147483648.0))::int)) AS calls
        FROM target t
    ), made AS MATERIALIZED (
      SELECT ${ROW_ID}(x.created) AS id, s.account, s.agent, s.phone, ${personNameSql('(s.i * 1000 + g)')} AS name,
             s.i * 1000 + g AS k, x.created, x.created + interval '3 seconds' AS started,
             x.created + interval '9 seconds' AS answered, x.created + (30 + (s.i * 7 + g * 13) % 240) * interval '1 second' AS ended
        FROM sized s CROSS JOIN LATERAL generate_series(1, s.calls) AS g
        CROSS JOIN LATERAL (SELECT $4::timestamptz - interval '1 hour'
                                   - ((hashtext(s.account::text || g) & 2147483647) % (90 * 86400)) * interval '1 second' AS created) AS x
    )${completedCallsWritten('clients')}`,
    [...accountsAgentsPhones(layout, clients), now, CLIENT_CALLS_MAX],
  );
  return (rowCount ?? 0) / 4;
}

/**
 * The queue dimension: `count` calls waiting, none of them due during the run, accepted over the last 7 days by the
 * keyed accounts with a Zipf-like share: 7 in 10 for a windowed agent whose window opens in 3 days, the others
 * scheduled (not_before) 1 to 48 hours ahead on the default agent. Written with the triggers on and every index in
 * place, as the acceptance writes them.
 */
export async function insertQueue(db: pg.ClientBase, layout: Layout, count: number, now: Date): Promise<void> {
  const { windows, opensAt } = distantWindow(now);
  await db.query(`UPDATE agents SET calling_windows = $2::jsonb WHERE id = ANY($1::uuid[])`, [
    layout.windowed.map((w) => w.agentId),
    JSON.stringify(windows),
  ]);
  const owners = layout.windowed.map((w) => w.owner);
  await db.query(
    `
    WITH target AS (
      SELECT row_number() OVER () AS i, account, agent, windowed, phone
        FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[]) AS t(account, agent, windowed, phone)
    ), made AS (
      INSERT INTO calls (id, account_id, agent_id, phone_number, from_number, name, email, metadata, status, not_before, expires_at, created_at, updated_at)
      SELECT ${ROW_ID}(c.at), t.account, CASE WHEN g % 10 < 7 THEN t.windowed ELSE t.agent END,
             '+1' || (201 + g % 700) || lpad(((g::bigint * 7919) % 10000000)::text, 7, '0'), t.phone,
             ${personNameSql('g')}, CASE WHEN g % 3 <> 0 THEN 'lead' || g || '@example.com' END,
             ('{"crm_id":"Q-' || g || '","campaign":"queue-' || (g % 7) || '","priority":' || (g % 3) || '}')::json,
             'initiated', n.at, n.at + ${TTL}, c.at, c.at
        FROM generate_series(0, $5::int - 1) AS g
        CROSS JOIN LATERAL (SELECT least($6::int, greatest(1, floor(power($6::float8, ((g::bigint * 2654435761) % 4294967296) / 4294967296.0))::int)) AS k) AS z
        JOIN target t ON t.i = z.k
        CROSS JOIN LATERAL (SELECT $7::timestamptz - (($5::int - g) * 7 * 86400.0 / $5::int) * interval '1 second' AS at) AS c
        CROSS JOIN LATERAL (SELECT CASE WHEN g % 10 < 7 THEN $8::timestamptz ELSE $7::timestamptz + (1 + g % 48) * interval '1 hour' END AS at) AS n
      RETURNING id, created_at
    )
    INSERT INTO call_events (id, call_id, to_status, source, occurred_at) SELECT ${ROW_ID}(created_at), id, 'initiated', 'api', created_at FROM made`,
    [
      owners.map((n) => layout.accountIds[n]),
      owners.map((n) => layout.agentIds[n]),
      layout.windowed.map((w) => w.agentId),
      owners.map((n) => layout.agentPhones[n]),
      count,
      owners.length,
      now,
      opensAt,
    ],
  );
}
