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

/** The counts a layout needs (ScaleShape's, see data.ts). */
export interface LayoutShape {
  agencies: number;
  clientsPerAgency: number;
  keys: number;
  endpoints: number;
  timingOut: number;
  waitingAccounts: number;
  windowedAgents: number;
}

/** Every account by number n (agency a is n = a * (1 + clientsPerAgency), its clients the numbers after it). */
export interface Layout {
  accountIds: string[];
  agentIds: string[];
  agentPhones: string[];
  agencyOf: number[];
  /** Accounts per agency (the agency and its clients). */
  perAgency: number;
  /** n = 0: the dashboard's account (an agency), with an endpoint and some waiting calls. */
  big: number;
  keyed: number[];
  waiting: number[];
  healthy: number[];
  timingOut: number[];
  windowed: { agentId: string; owner: number }[];
}

/** `count` members of `pool`, evenly spread over it. */
function spread<T>(pool: readonly T[], count: number): T[] {
  const n = Math.min(count, pool.length);
  return Array.from({ length: n }, (_, i) => pool[Math.floor((i * pool.length) / n)]!);
}

const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);

/**
 * Roles by account number: 0 is the big account; 1..keys have keys; the big account and the next waitingAccounts - 1
 * have waiting calls (so the trigger load never meets a full queue); endpoints go to the big account, then half to
 * keyed accounts, a quarter to waiting ones and the rest to accounts with neither; timingOut of them (never the big
 * account's) point at the URL that never answers.
 */
export function planLayout(shape: LayoutShape): Layout {
  const perAgency = 1 + shape.clientsPerAgency;
  const total = shape.agencies * perAgency;
  if (total < 1 + shape.keys + shape.waitingAccounts)
    throw new Error(`${total} accounts cannot hold ${shape.keys} keyed and ${shape.waitingAccounts} waiting ones`);
  const accountIds = range(0, total).map(() => randomUUID());
  const agentIds = range(0, total).map(() => randomUUID());
  const agentPhones = range(0, total).map((n) => `+1415${String(5_000_000 + n).padStart(7, '0')}`);
  const agencyOf = range(0, total).map((n) => n - (n % perAgency));
  const keyed = range(1, 1 + shape.keys);
  const waitingOthers = range(1 + shape.keys, shape.keys + shape.waitingAccounts);
  const others = range(shape.keys + shape.waitingAccounts, total);
  const rest = Math.max(0, shape.endpoints - 1);
  const fromKeyed = spread(keyed, Math.ceil(rest / 2));
  const fromWaiting = spread(waitingOthers, Math.floor(rest / 4));
  const fromOthers = spread(others, rest - fromKeyed.length - fromWaiting.length);
  const withEndpoint = [...fromKeyed, ...fromWaiting, ...fromOthers].sort((a, b) => a - b);
  const stalled = new Set(spread(withEndpoint, shape.timingOut));
  const windowOwners = spread(waitingOthers.length > 0 ? waitingOthers : [0], shape.windowedAgents);
  return {
    accountIds,
    agentIds,
    agentPhones,
    agencyOf,
    perAgency,
    big: 0,
    keyed,
    waiting: [0, ...waitingOthers],
    healthy: [0, ...withEndpoint.filter((n) => !stalled.has(n))],
    timingOut: [...stalled],
    windowed: windowOwners.map((owner) => ({ agentId: randomUUID(), owner })),
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
      all.map((n) => (layout.agencyOf[n] === n ? `Scale Agency ${n / layout.perAgency}` : `Scale Client ${n}`)),
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

export const DASHBOARD_EMAIL = 'scale.bench@dashboard.example.com';
export const DASHBOARD_PASSWORD = 'scale bench: a million calls';

/** The dashboard user of the big account (an agency user), made by the operator functions with a real password hash. */
export async function createDashboardUser(databaseUrl: string, accountId: string): Promise<void> {
  const storage = createStorage(databaseUrl, { max: 2 });
  try {
    const { token } = await createUser(storage, { accountId, email: DASHBOARD_EMAIL, actor: { kind: 'operator' } });
    const set = await setPasswordWithLink(storage, { token, password: DASHBOARD_PASSWORD, ip: null, now: new Date() });
    if (!set.ok) throw new Error(`dashboard user: ${set.problem}`);
  } finally {
    await storage.close();
  }
}

/** Before scheduleWindow: a one-hour window three days ahead, so the windowed calls wait days for it. */
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

/**
 * The waiting calls with their `initiated` events, written as the acceptance writes them and with the triggers on, so
 * that accounts.waiting_calls counts them. Due calls go to the waiting accounts' default agents, accepted over the last
 * ten minutes; windowed ones to the windowed agents, waiting for `distant`'s window.
 */
export async function insertWaitingCalls(
  db: pg.ClientBase,
  layout: Layout,
  counts: { due: number; windowed: number },
  now: Date,
): Promise<void> {
  const { windows, opensAt } = distantWindow(now);
  await db.query(`UPDATE agents SET calling_windows = $2::jsonb WHERE id = ANY($1::uuid[])`, [
    layout.windowed.map((w) => w.agentId),
    JSON.stringify(windows),
  ]);
  const insert = (
    targets: { account: string; agent: string; phone: string }[],
    count: number,
    notBefore: Date | null,
  ) =>
    db.query(
      `
    WITH target AS (
      SELECT row_number() OVER () - 1 AS i, account, agent, phone FROM unnest($1::uuid[], $2::uuid[], $3::text[]) AS t(account, agent, phone)
    ), made AS (
      INSERT INTO calls (id, account_id, agent_id, phone_number, from_number, name, email, metadata, status, not_before, expires_at, created_at, updated_at)
      SELECT ${ROW_ID}(c.at), t.account, t.agent, '+1' || (201 + g % 700) || lpad(((g::bigint * 7919) % 10000000)::text, 7, '0'), t.phone,
             'Lead ' || g, CASE WHEN g % 3 <> 0 THEN 'lead' || g || '@example.com' END,
             ('{"crm_id":"W-' || g || '","campaign":"queue-' || (g % 7) || '","priority":' || (g % 3) || '}')::json,
             'initiated', coalesce($7::timestamptz, c.at), coalesce($7::timestamptz, c.at) + ${TTL}, c.at, c.at
        FROM generate_series(0, $4::int - 1) AS g
        JOIN target t ON t.i = g % $5::int
        CROSS JOIN LATERAL (SELECT $6::timestamptz - (($4::int - g) * 600.0 / $4::int) * interval '1 second' AS at) AS c
      RETURNING id, created_at
    )
    INSERT INTO call_events (id, call_id, to_status, source, occurred_at) SELECT ${ROW_ID}(created_at), id, 'initiated', 'api', created_at FROM made`,
      [
        targets.map((t) => t.account),
        targets.map((t) => t.agent),
        targets.map((t) => t.phone),
        count,
        targets.length,
        now,
        notBefore,
      ],
    );
  if (counts.due > 0) {
    await insert(
      layout.waiting.map((n) => ({
        account: layout.accountIds[n]!,
        agent: layout.agentIds[n]!,
        phone: layout.agentPhones[n]!,
      })),
      counts.due,
      null,
    );
  }
  if (counts.windowed > 0 && layout.windowed.length > 0) {
    await insert(
      layout.windowed.map((w) => ({
        account: layout.accountIds[w.owner]!,
        agent: w.agentId,
        phone: layout.agentPhones[w.owner]!,
      })),
      counts.windowed,
      opensAt,
    );
  }
}
