// Bench data: fresh migrated databases (dropped at the end), tenants made with the operator functions callctl uses,
// machine facts, waiting for the service to go idle, and pre-created webhook deliveries.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { Redis } from 'ioredis';
import pg from 'pg';
import { createAgency, generateKey } from '../src/admin/accounts.js';
import { createAgent, setDefaultAgent } from '../src/admin/agents.js';
import { setWebhook } from '../src/admin/webhooks.js';
import { loadConfig } from '../src/config.js';
import { loadSecrets } from '../src/secrets/keys.js';
import { createStorage } from '../src/storage/index.js';
import { migrate } from '../src/storage/migrate.js';

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function admin<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export interface BenchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** CREATE DATABASE bench_<random>_<label>, migrated with the service's own runner. */
export async function freshDatabase(adminUrl: string, label: string): Promise<BenchDatabase> {
  const name = `oct_bench_${randomBytes(4).toString('hex')}_${label}`;
  await admin(adminUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = withDatabase(adminUrl, name);
  await migrate(url);
  return {
    name,
    url,
    drop: () => admin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/**
 * The baseline's database is the service's schema without the service's own bookkeeping: the triggers that keep
 * accounts.waiting_calls run for the service's acceptance (they replace its count of waiting calls), not for "the
 * fastest possible" insert of the same row. Left in, every baseline insert would update its one account's row and
 * the baseline would measure that row's lock (about 700 inserts/s instead of 5,000).
 */
export async function withoutServiceTriggers(databaseUrl: string) {
  const client = await connect(databaseUrl);
  try {
    const { rows } = await client.query<{ name: string }>(
      `SELECT tgname AS name FROM pg_trigger WHERE tgrelid = 'calls'::regclass AND NOT tgisinternal`,
    );
    for (const { name } of rows) await client.query(`DROP TRIGGER "${name}" ON calls`);
  } finally {
    await client.end();
  }
}

export interface Tenant {
  accountId: string;
  agentId: string;
  key: string;
}

/** A default agent's zone and calling windows, in callctl's words (e.g. `daily 00:00-24:00`). */
export interface AgentHours {
  timezone: string;
  windows: string[];
}

/**
 * Agencies on the agency plan, each with a default agent (with `hours` if given, else none: always open), a key and
 * (optionally) a webhook endpoint.
 */
export async function createTenants(
  databaseUrl: string,
  count: number,
  webhookUrl?: string,
  hours?: AgentHours,
): Promise<Tenant[]> {
  const storage = createStorage(databaseUrl, { max: 8 });
  // The services' key (DATA_DIR/secrets.key of the default DATA_DIR): the webhook secrets are sealed with it.
  storage.secrets.use(loadSecrets(loadConfig({ DATABASE_URL: databaseUrl })).box);
  try {
    const make = async (i: number): Promise<Tenant> => {
      const { id: accountId } = await createAgency(storage, { name: `Bench Agency ${i}`, plan: 'agency' });
      const { id: agentId } = await createAgent(storage, {
        accountId,
        name: 'Bench Agent',
        phone: '+14155550100',
        ...(hours ? { timezone: hours.timezone, windows: hours.windows } : {}),
        now: new Date(),
      });
      await setDefaultAgent(storage, accountId, agentId, undefined, new Date());
      if (webhookUrl) await setWebhook(storage, accountId, webhookUrl, { allowPrivate: true, now: new Date() });
      const { key } = await generateKey(storage, accountId, undefined, { now: new Date() });
      return { accountId, agentId, key };
    };
    const tenants: Tenant[] = [];
    for (let i = 0; i < count; i += 8)
      tenants.push(...(await Promise.all(Array.from({ length: Math.min(8, count - i) }, (_, j) => make(i + j)))));
    return tenants;
  } finally {
    await storage.close();
  }
}

export interface MachineFacts {
  cores: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  postgres: string;
  redis: string;
  platform: string;
}

export async function machineFacts(databaseUrl: string, redisUrl: string): Promise<MachineFacts> {
  const postgres = await admin(databaseUrl, (c) => c.query<{ server_version: string }>('SHOW server_version')).then(
    (r) => r.rows[0]!.server_version,
  );
  const redis = new Redis(redisUrl, { lazyConnect: true });
  await redis.connect();
  const info = await redis.info('server');
  redis.disconnect();
  return {
    cores: os.cpus().length,
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    postgres,
    redis: /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown',
    platform: `${os.type()} ${os.release()} ${os.arch()}`,
  };
}

/** A long-lived connection for the runner's own queries on the service's database. */
export async function connect(databaseUrl: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  return client;
}

async function liveWork(db: pg.Client): Promise<{ live: number; pending: number }> {
  const {
    rows: [row],
  } = await db.query<{ live: number; pending: number }>(`
    SELECT (SELECT count(*)::int FROM calls WHERE status IN ('dialing', 'in_progress') OR status = 'initiated' AND not_before <= now()) AS live,
           (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'pending') AS pending`);
  return row!;
}

/** No call due or in flight, no delivery pending. */
export async function isIdle(db: pg.Client): Promise<boolean> {
  const row = await liveWork(db);
  return row.live === 0 && row.pending === 0;
}

/**
 * Waits until no call is due or in flight and no delivery is pending: each run starts from an idle service. A call
 * waiting for a calling window that has not opened is not work in progress (bench:scale's data has such calls).
 */
export async function waitIdle(db: pg.Client, timeoutMs = 180_000): Promise<number> {
  const started = Date.now();
  for (;;) {
    const row = await liveWork(db);
    if (row.live === 0 && row.pending === 0) return Date.now() - started;
    if (Date.now() - started > timeoutMs)
      throw new Error(
        `service not idle after ${timeoutMs} ms: ${row.live} live calls, ${row.pending} pending deliveries`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * SQL for a UUIDv7 of the moment `at` (an SQL expression), as the service gives its calls, events, deliveries and
 * attempts (src/domain/ids.ts): a random v4 whose first 48 bits become the Unix time in milliseconds and whose version
 * nibble becomes 7. Rows the bench writes for the service get ids of the same kind, or on a large database they would
 * land on cold index pages the service's own never touch.
 */
export function v7IdSql(at: string): string {
  return `encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid()) PLACING substring(int8send(floor(extract(epoch FROM ${at}) * 1000)::bigint) FROM 3) FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid`;
}

/**
 * Inserts `count` completed calls (spread over every account with an endpoint, each with its event), then their
 * due call.completed deliveries in one transaction, and wakes the workers; returns the delivery ids and the commit time.
 */
export async function createPendingDeliveries(
  db: pg.Client,
  count: number,
): Promise<{ ids: Set<string>; committedAt: number }> {
  await db.query(
    `
    WITH endpoints AS (SELECT e.account_id, a.default_agent_id AS agent_id, row_number() OVER (ORDER BY e.id) - 1 AS i, count(*) OVER () AS n
                         FROM webhook_endpoints e JOIN accounts a ON a.id = e.account_id),
         made AS (
           INSERT INTO calls (id, account_id, agent_id, phone_number, from_number, metadata, status, not_before, expires_at, created_at, updated_at,
                              started_at, answered_at, ended_at, duration_seconds)
           SELECT ${v7IdSql('now()')}, e.account_id, e.agent_id, '+14155552671', '+14155550100', '{"bench":"e"}', 'completed', now(), now(),
                  now(), now(), now(), now(), now(), 1
             FROM generate_series(0, $1 - 1) g JOIN endpoints e ON e.i = g % e.n
           RETURNING id)
    INSERT INTO call_events (id, call_id, from_status, to_status, source, occurred_at)
    SELECT ${v7IdSql('now()')}, id, 'in_progress', 'completed', 'bench', now() FROM made`,
    [count],
  );
  await db.query('BEGIN');
  const { rows } = await db.query<{ id: string }>(`
    INSERT INTO webhook_deliveries (id, endpoint_id, call_id, call_event_id, event_type, payload, next_attempt_at)
    SELECT ${v7IdSql('now()')}, e.id, c.id, ev.id, 'call.completed',
           json_build_object('type', 'call.completed', 'timestamp', now(), 'data', json_build_object(
             'call_id', c.id, 'status', 'completed', 'agent_id', c.agent_id, 'phone_number', c.phone_number, 'name', c.name,
             'email', c.email, 'metadata', c.metadata, 'created_at', c.created_at, 'started_at', c.started_at,
             'answered_at', c.answered_at, 'ended_at', c.ended_at, 'duration_seconds', c.duration_seconds, 'failure_reason', NULL))::text,
           now()
      FROM call_events ev
      JOIN calls c ON c.id = ev.call_id
      JOIN webhook_endpoints e ON e.account_id = c.account_id
     WHERE ev.source = 'bench' AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.call_event_id = ev.id)
    RETURNING id`);
  await db.query(`SELECT pg_notify('oct_webhooks', 'bench')`);
  await db.query('COMMIT');
  return { ids: new Set(rows.map((r) => r.id)), committedAt: performance.timeOrigin + performance.now() };
}
