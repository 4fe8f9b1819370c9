// The data lifecycle: with an injected clock, each kind of row goes just after its retention and not a moment before;
// calls still waiting or in progress and deliveries still pending stay whatever their age; a pass deletes in batches;
// one process at a time deletes (the others skip); rows deleted are counted by table; a failed pass is a warning.
import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import pg from 'pg';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { RetentionJob, retentionPolicy, runRetentionPass } from '../../src/jobs/retention.js';
import { loadConfig } from '../../src/config.js';
import { sqlPool } from '../../src/storage/database.js';
import {
  createRetentionPool,
  RetentionRepository,
  tryRetentionLock,
  type DeletedRows,
} from '../../src/storage/retention.js';
import { useNamedStatements } from '../../src/storage/statements.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { freshDatabase } from '../helpers/database.js';
import { logLines, type LogLine } from '../helpers/json.js';
import { PGBOUNCER, transactionPooler } from '../helpers/pgbouncer.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { bulkInsertIdempotencyRecords, insertEndedCalls, insertRow, type IdempotencyRow } from '../helpers/seed.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const NOW = new Date('2055-06-01T12:00:00.000Z');
const ago = (ms: number, from = NOW) => new Date(from.getTime() - ms);
const later = (ms: number) => new Date(NOW.getTime() + ms);

/** Rows written directly, with the times a test needs (the API would stamp them with its clock). */
function rows(sql: pg.Pool) {
  const insert = (table: string, row: Record<string, unknown>) => insertRow(sql, table, row);
  const STEPS = {
    initiated: ['initiated'],
    dialing: ['initiated', 'dialing'],
    in_progress: ['initiated', 'dialing', 'in_progress'],
    completed: ['initiated', 'dialing', 'in_progress', 'completed'],
    failed: ['initiated', 'failed'],
  } as const;

  return {
    insert,
    endpoint: (tenant: Tenant) =>
      insert('webhook_endpoints', {
        account_id: tenant.accountId,
        url: 'https://hooks.example.com/',
        secret: 'whsec_x',
        updated_at: NOW,
      }),
    /** A call in `status` with one event per step so far; `endedAt` for finished ones. */
    async call(tenant: Tenant, status: keyof typeof STEPS, times: { createdAt: Date; endedAt?: Date }) {
      const id = await insert('calls', {
        account_id: tenant.accountId,
        agent_id: tenant.agentId,
        phone_number: '+14155552671',
        from_number: '+14155550100',
        status,
        failure_reason: status === 'failed' ? 'expired' : null,
        not_before: times.createdAt,
        expires_at: new Date(times.createdAt.getTime() + DAY),
        created_at: times.createdAt,
        updated_at: times.endedAt ?? times.createdAt,
        ended_at: times.endedAt ?? null,
      });
      for (const step of STEPS[status])
        await insert('call_events', {
          call_id: id,
          to_status: step,
          source: 'test',
          occurred_at: times.endedAt ?? times.createdAt,
        });
      return id;
    },
    /** A delivery of the call's first event, with `attempts` attempts. */
    async delivery(
      endpointId: string,
      callId: string,
      status: 'pending' | 'succeeded' | 'failed',
      completedAt: Date | null,
      attempts: number,
      createdAt = completedAt ?? NOW,
    ) {
      const {
        rows: [event],
      } = await sql.query<{ id: string }>('SELECT id FROM call_events WHERE call_id = $1 LIMIT 1', [callId]);
      const id = await insert('webhook_deliveries', {
        endpoint_id: endpointId,
        call_id: callId,
        call_event_id: event!.id,
        event_type: 'call.started',
        payload: '{}',
        status,
        attempt_count: attempts,
        next_attempt_at: createdAt,
        completed_at: completedAt,
        created_at: createdAt,
      });
      for (let n = 1; n <= attempts; n++) {
        await insert('webhook_attempts', {
          delivery_id: id,
          attempt_number: n,
          started_at: createdAt,
          duration_ms: 5,
          response_status: status === 'succeeded' && n === attempts ? 204 : 500,
        });
      }
      return id;
    },
    user: (tenant: Tenant) =>
      insert('users', {
        account_id: tenant.accountId,
        agency_id: tenant.accountId,
        email: `${randomUUID()}@example.com`,
      }),
    session: (userId: string | null, times: { lastSeenAt: Date; expiresAt: Date }) =>
      insert('sessions', {
        digest: randomBytes(32),
        user_id: userId,
        created_at: ago(HOUR),
        last_seen_at: times.lastSeenAt,
        expires_at: times.expiresAt,
      }),
    token: (userId: string, times: { expiresAt: Date; usedAt?: Date }) =>
      insert('one_time_tokens', {
        user_id: userId,
        digest: randomBytes(32),
        purpose: 'set_password',
        created_at: ago(HOUR),
        expires_at: times.expiresAt,
        used_at: times.usedAt ?? null,
      }),
    idempotency: (tenant: Tenant, expiresAt: Date) =>
      insert('idempotency_records', {
        account_id: tenant.accountId,
        key: randomUUID(),
        request_hash: 'x',
        created_at: ago(DAY, expiresAt),
        expires_at: expiresAt,
      }),
    audit: (tenant: Tenant, createdAt: Date) =>
      insert('audit_log', {
        account_id: tenant.accountId,
        agency_id: tenant.accountId,
        actor_kind: 'operator',
        action: 'key_generated',
        created_at: createdAt,
      }),
    async ids(table: string): Promise<string[]> {
      const { rows: found } = await sql.query<{ id: string }>(`SELECT id FROM ${table}`);
      return found.map((r) => r.id).sort();
    },
    async count(table: string): Promise<number> {
      const {
        rows: [row],
      } = await sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
      return row!.n;
    },
  };
}
const none = (): DeletedRows => ({
  idempotency_records: 0,
  sessions: 0,
  one_time_tokens: 0,
  webhook_deliveries: 0,
  webhook_attempts: 0,
  calls: 0,
  call_events: 0,
  audit_log: 0,
});
const total = (deleted: DeletedRows) => Object.values(deleted).reduce((a, b) => a + b, 0);

async function metric(app: App, name: 'retentionRowsDeleted' | 'retentionPasses'): Promise<Record<string, number>> {
  const { values } = (await app.metrics[name].get()) as {
    values: { labels: Record<string, string | number | undefined>; value: number }[];
  };
  return Object.fromEntries(values.map((v) => [String(v.labels.table ?? v.labels.outcome), v.value]));
}

/** An app whose clock the test moves. */
/** `count` idempotency records expired a day ago. */
async function expiredRecords(sql: pg.Pool, tenant: Tenant, count: number) {
  await bulkInsertIdempotencyRecords(
    sql,
    expiredKeys(tenant.accountId, count, () => randomUUID()),
  );
}

/** `count` idempotency records of the account expired a day ago, keyed by `key` of their number (1, 2, ...). */
function expiredKeys(accountId: string, count: number, key = (n: number) => `k${n}`): IdempotencyRow[] {
  return Array.from({ length: count }, (_, i) => ({ accountId, key: key(i + 1), createdAt: ago(DAY) }));
}

/** `count` calls that ended 400 days ago (past CALL_RETENTION_DAYS), each with two events. */
async function oldCallsWithEvents(sql: pg.Pool, tenant: Tenant, count: number) {
  await insertEndedCalls(sql, { ...tenant, count, endedAt: ago(400 * DAY) });
}

async function clockedApp(env: Record<string, string> = {}, databaseUrl?: string) {
  const clock = { now: NOW };
  const built = await buildTestApp({
    clock: () => clock.now,
    env: { RETENTION_PAUSE_MS: '0', ...env },
    ...(databaseUrl ? { databaseUrl } : {}),
  });
  return { ...built, clock, sql: sqlPool(prismaOf(built.app)), retention: built.app.retention! };
}

describe('retention', () => {
  it('deletes each kind of row just past its retention and nothing younger; live calls and pending deliveries stay whatever their age', async () => {
    const { app, clock, sql, retention } = await clockedApp();
    const db = rows(sql);
    const tenant = await createTenant(app.storage);
    const endpoint = await db.endpoint(tenant);

    // Idempotency records: past their expiry (24 h after the first request) or not.
    await db.idempotency(tenant, ago(SECOND));
    const recordKept = await db.idempotency(tenant, later(SECOND));

    // Sessions: past their absolute expiry, idle longer than DASHBOARD_SESSION_IDLE_MINUTES (30), or neither.
    const user = await db.user(tenant);
    await db.session(user, { lastSeenAt: ago(MINUTE), expiresAt: ago(SECOND) });
    await db.session(null, { lastSeenAt: ago(30 * MINUTE + SECOND), expiresAt: later(DAY) });
    const sessionKept = await db.session(user, { lastSeenAt: ago(30 * MINUTE - SECOND), expiresAt: later(SECOND) });

    // One-time links: used, expired, or still usable.
    await db.token(user, { expiresAt: later(DAY), usedAt: ago(SECOND) });
    await db.token(user, { expiresAt: ago(SECOND) });
    const tokenKept = await db.token(user, { expiresAt: later(SECOND) });

    // Webhook deliveries of a call that ended 40 days ago: finished 30 days and a second ago (both outcomes), or a
    // second less; the call is kept (365 days).
    const recent = await db.call(tenant, 'completed', { createdAt: ago(40 * DAY), endedAt: ago(40 * DAY) });
    await db.delivery(endpoint, recent, 'succeeded', ago(30 * DAY + SECOND), 2);
    await db.delivery(endpoint, recent, 'failed', ago(30 * DAY + SECOND), 1);
    const deliveryKept = await db.delivery(endpoint, recent, 'succeeded', ago(30 * DAY - SECOND), 1);

    // Calls: finished 365 days and a second ago (completed; failed as expired), a second less, and calls that are not
    // finished (waiting, dialling, connected) or wait for a delivery, all accepted long ago.
    const old = await db.call(tenant, 'completed', { createdAt: ago(366 * DAY), endedAt: ago(365 * DAY + SECOND) });
    await db.delivery(endpoint, old, 'succeeded', ago(365 * DAY), 1);
    await db.call(tenant, 'failed', { createdAt: ago(366 * DAY), endedAt: ago(365 * DAY + SECOND) });
    const callKept = await db.call(tenant, 'completed', {
      createdAt: ago(366 * DAY),
      endedAt: ago(365 * DAY - SECOND),
    });
    const live = [
      await db.call(tenant, 'initiated', { createdAt: ago(1000 * DAY) }),
      await db.call(tenant, 'dialing', { createdAt: ago(1000 * DAY) }),
      await db.call(tenant, 'in_progress', { createdAt: ago(1000 * DAY) }),
    ];
    const waiting = await db.call(tenant, 'completed', { createdAt: ago(400 * DAY), endedAt: ago(400 * DAY) });
    const pending = await db.delivery(endpoint, waiting, 'pending', null, 3, ago(400 * DAY));

    // Audit entries: 365 days and a second old, or a second less (the tenant's own, made now, stay too).
    const auditOld = await db.audit(tenant, ago(365 * DAY + SECOND));
    const auditKept = await db.audit(tenant, ago(365 * DAY - SECOND));
    const audit = await db.ids('audit_log');

    const first = await retention.runNow();
    expect(first).toEqual({
      outcome: 'completed',
      next: 0,
      deleted: {
        idempotency_records: 1,
        sessions: 2,
        one_time_tokens: 2,
        webhook_deliveries: 3,
        webhook_attempts: 4,
        calls: 2,
        call_events: 6,
        audit_log: 1,
      },
    });
    expect(await db.ids('idempotency_records')).toEqual([recordKept]);
    expect(await db.ids('sessions')).toEqual([sessionKept]);
    expect(await db.ids('one_time_tokens')).toEqual([tokenKept]);
    expect(await db.ids('webhook_deliveries')).toEqual([deliveryKept, pending].sort());
    expect(await db.count('webhook_attempts')).toBe(1 + 3);
    expect(await db.ids('calls')).toEqual([recent, callKept, ...live, waiting].sort());
    expect(await db.count('call_events')).toBe(4 + 4 + 1 + 2 + 3 + 4);
    expect(await db.ids('audit_log')).toEqual(audit.filter((id) => id !== auditOld));
    expect(audit).toContain(auditKept);

    // Counted by table, every table's series present; the pass too.
    expect(await metric(app, 'retentionRowsDeleted')).toEqual(first.deleted);
    expect(await metric(app, 'retentionPasses')).toEqual({ completed: 1 });

    // Nothing more to do at the same moment.
    expect(await retention.runNow()).toEqual({ outcome: 'completed', deleted: none(), next: 0 });

    // Ten years on, every row kept for its age goes; the calls still waiting, dialling or connected, and the call
    // whose delivery is still pending (with the delivery and its attempts), stay.
    clock.now = new Date(NOW.getTime() + 3650 * DAY);
    const decade = await retention.runNow();
    expect(decade.outcome).toBe('completed');
    expect(decade.deleted).toMatchObject({
      idempotency_records: 1,
      sessions: 1,
      one_time_tokens: 1,
      webhook_deliveries: 1,
      webhook_attempts: 1,
      calls: 2,
      call_events: 8,
    });
    expect(
      (await db.count('idempotency_records')) +
        (await db.count('sessions')) +
        (await db.count('one_time_tokens')) +
        (await db.count('audit_log')),
    ).toBe(0);
    expect(await db.ids('calls')).toEqual([...live, waiting].sort());
    expect(await db.ids('webhook_deliveries')).toEqual([pending]);
    expect(await db.count('webhook_attempts')).toBe(3);
    expect(await db.count('call_events')).toBe(1 + 2 + 3 + 4);
    expect((await metric(app, 'retentionRowsDeleted')).calls).toBe(4);
  });

  it("deletes a call's deliveries and attempts with it, and counts them, when they outlive the call's retention", async () => {
    const { app, sql, retention } = await clockedApp({ WEBHOOK_LOG_RETENTION_DAYS: '400', CALL_RETENTION_DAYS: '365' });
    const db = rows(sql);
    const tenant = await createTenant(app.storage);
    const endpoint = await db.endpoint(tenant);
    const old = await db.call(tenant, 'completed', { createdAt: ago(370 * DAY), endedAt: ago(370 * DAY) });
    await db.delivery(endpoint, old, 'succeeded', ago(370 * DAY), 2);
    await db.delivery(endpoint, old, 'failed', ago(369 * DAY), 3);
    const result = await retention.runNow();
    expect(result.deleted).toMatchObject({ calls: 1, call_events: 4, webhook_deliveries: 2, webhook_attempts: 5 });
    expect(await db.count('webhook_attempts')).toBe(0);
    expect(await metric(app, 'retentionRowsDeleted')).toMatchObject({
      calls: 1,
      call_events: 4,
      webhook_deliveries: 2,
      webhook_attempts: 5,
    });
  });

  it('deletes more rows than one batch over a pass, one batch per statement', async () => {
    const { app, sql, databaseUrl } = await clockedApp();
    const tenant = await createTenant(app.storage);
    await expiredRecords(sql, tenant, 1050);
    await oldCallsWithEvents(sql, tenant, 250);

    const pool = createRetentionPool(databaseUrl);
    const batches: Partial<DeletedRows>[] = [];
    try {
      const result = await runRetentionPass({
        retention: new RetentionRepository(pool),
        now: NOW,
        policy: retentionPolicy(loadConfig({})),
        batchSize: 100,
        pauseMs: 1,
        onBatch: (deleted) => {
          batches.push(deleted);
        },
      });
      expect(result.outcome).toBe('completed');
      expect(result.deleted).toMatchObject({ idempotency_records: 1050, calls: 250, call_events: 500 });
    } finally {
      await pool.end();
    }
    // 10 full batches and the rest; 2 full batches of calls and the rest; never more than a batch at once.
    expect(batches.filter((b) => 'idempotency_records' in b).map((b) => b.idempotency_records)).toEqual([
      ...Array<number>(10).fill(100),
      50,
    ]);
    expect(batches.filter((b) => 'calls' in b).map((b) => b.calls)).toEqual([100, 100, 50]);
    const db = rows(sql);
    expect((await db.count('idempotency_records')) + (await db.count('calls')) + (await db.count('call_events'))).toBe(
      0,
    );
  });

  it('pauses after each full batch at least as long as the batch took: a slow database slows the pass', async () => {
    const { app, sql, databaseUrl } = await clockedApp();
    const tenant = await createTenant(app.storage);
    await expiredRecords(sql, tenant, 300);
    // A database where each delete statement takes 300 ms more (as a checkpoint's full-page writes make it slower).
    await sql.query(`
      CREATE FUNCTION slow_statement() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(0.3); RETURN NULL; END $$;
      CREATE TRIGGER slow_delete AFTER DELETE ON idempotency_records FOR EACH STATEMENT EXECUTE FUNCTION slow_statement();`);
    const pool = createRetentionPool(databaseUrl);
    const committed: number[] = [];
    try {
      const result = await runRetentionPass({
        retention: new RetentionRepository(pool),
        now: NOW,
        policy: retentionPolicy(loadConfig({})),
        batchSize: 100,
        pauseMs: 1,
        onBatch: (deleted) => {
          if ('idempotency_records' in deleted) committed.push(performance.now());
        },
      });
      expect(result.deleted.idempotency_records).toBe(300);
    } finally {
      await pool.end();
    }
    // Three full batches and the empty one that ends the range: between two commits, a pause of at least the 300 ms
    // the batch took and the next batch's 300 ms (a pause of RETENTION_PAUSE_MS alone would leave about 300).
    const gaps = committed.slice(1).map((at, i) => at - committed[i]!);
    expect(gaps).toHaveLength(3);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(590);
  });

  it('a pass yields once it deleted RETENTION_PASS_MAX_ROWS rows; the next one resumes at the kind of row it stopped at', async () => {
    const { app, sql } = await clockedApp({ RETENTION_BATCH_SIZE: '100', RETENTION_PASS_MAX_ROWS: '300' });
    const job = app.retention!;
    const tenant = await createTenant(app.storage);
    await expiredRecords(sql, tenant, 1050);
    await oldCallsWithEvents(sql, tenant, 250);
    const pass = async () => {
      const { outcome, deleted } = await job.runNow();
      return { outcome, records: deleted.idempotency_records, calls: deleted.calls, events: deleted.call_events };
    };
    expect(await pass()).toEqual({ outcome: 'limited', records: 300, calls: 0, events: 0 });
    expect(await pass()).toEqual({ outcome: 'limited', records: 300, calls: 0, events: 0 });
    expect(await pass()).toEqual({ outcome: 'limited', records: 300, calls: 0, events: 0 });
    // 150 records left; then a batch of calls (limited to the 150 rows left of the budget, but never split from its
    // events): the pass passes its budget by those cascades and stops at the calls.
    expect(await pass()).toEqual({ outcome: 'limited', records: 150, calls: 100, events: 200 });
    // New expired records meanwhile: the next pass begins with the calls it stopped at, and uses its budget there.
    await expiredRecords(sql, tenant, 500);
    expect(await pass()).toEqual({ outcome: 'limited', records: 0, calls: 100, events: 200 });
    // The rest of the calls, the steps after them, then round to the records.
    expect(await pass()).toEqual({ outcome: 'limited', records: 150, calls: 50, events: 100 });
    expect(await pass()).toEqual({ outcome: 'limited', records: 300, calls: 0, events: 0 });
    expect(await pass()).toEqual({ outcome: 'completed', records: 50, calls: 0, events: 0 });
    const db = rows(sql);
    expect((await db.count('idempotency_records')) + (await db.count('calls')) + (await db.count('call_events'))).toBe(
      0,
    );
  });

  it('a pass yields once it ran RETENTION_PASS_MAX_SECONDS, before its next batch', async () => {
    const { app, sql, databaseUrl } = await clockedApp();
    const tenant = await createTenant(app.storage);
    await expiredRecords(sql, tenant, 1000);
    const pool = createRetentionPool(databaseUrl);
    // Each look at the clock finds a second more gone: before batches 1, 2 and 3 (0, 1 and 2 s) it goes on; before
    // the fourth (3 s) the 2.5 s are over.
    let looks = 0;
    try {
      const result = await runRetentionPass({
        retention: new RetentionRepository(pool),
        now: NOW,
        policy: retentionPolicy(loadConfig({})),
        batchSize: 100,
        pauseMs: 0,
        budget: { rows: 100_000, ms: 2_500 },
        elapsed: () => 1000 * looks++,
      });
      expect(result).toMatchObject({ outcome: 'limited', next: 0 });
      expect(result.deleted.idempotency_records).toBe(300);
    } finally {
      await pool.end();
    }
  });

  it('lets one process at a time delete: a pass started while another runs (even during its pause) skips', async () => {
    const { app, sql, databaseUrl } = await clockedApp();
    const tenant = await createTenant(app.storage);
    await bulkInsertIdempotencyRecords(sql, expiredKeys(tenant.accountId, 300));
    // Two processes: each its own pool.
    const first = createRetentionPool(databaseUrl);
    const second = createRetentionPool(databaseUrl);
    const policy = retentionPolicy(loadConfig({}));
    const during: Awaited<ReturnType<typeof runRetentionPass>>[] = [];
    try {
      const result = await runRetentionPass({
        retention: new RetentionRepository(first),
        now: NOW,
        policy,
        batchSize: 100,
        pauseMs: 20,
        // After the first batch committed, in the pause before the next: the other process's pass.
        onBatch: async () => {
          if (during.length === 0)
            during.push(
              await runRetentionPass({
                retention: new RetentionRepository(second),
                now: NOW,
                policy,
                batchSize: 100,
                pauseMs: 0,
              }),
            );
        },
      });
      expect(during).toEqual([{ outcome: 'skipped', deleted: none(), next: 0 }]);
      expect(result).toMatchObject({ outcome: 'completed', deleted: { idempotency_records: 300 } });
      // Once the lock is free, the other process's pass runs (and finds nothing left).
      expect(
        await runRetentionPass({
          retention: new RetentionRepository(second),
          now: NOW,
          policy,
          batchSize: 100,
          pauseMs: 0,
        }),
      ).toEqual({
        outcome: 'completed',
        deleted: none(),
        next: 0,
      });
    } finally {
      await Promise.all([first.end(), second.end()]);
    }
  });

  it('two replicas passing at once: one deletes everything once, the other nothing; nothing breaks', async () => {
    const a = await clockedApp({ RETENTION_BATCH_SIZE: '50', RETENTION_PAUSE_MS: '5' });
    const b = await clockedApp({ RETENTION_BATCH_SIZE: '50', RETENTION_PAUSE_MS: '5' }, a.databaseUrl);
    const tenant = await createTenant(a.app.storage);
    await bulkInsertIdempotencyRecords(a.sql, expiredKeys(tenant.accountId, 1000));
    const results = await Promise.all([a.retention.runNow(), b.retention.runNow()]);
    expect(results.map((r) => r.deleted.idempotency_records).sort((x, y) => x - y)).toEqual([0, 1000]);
    expect(results.filter((r) => total(r.deleted) > 0)).toHaveLength(1);
    expect(await rows(a.sql).count('idempotency_records')).toBe(0);
    const counted = [await metric(a.app, 'retentionRowsDeleted'), await metric(b.app, 'retentionRowsDeleted')];
    expect(counted.map((m) => m.idempotency_records ?? -1).sort((x, y) => x - y)).toEqual([0, 1000]);
  });

  it('skips while another process holds the lock, deleting nothing, and runs once it is free', async () => {
    const { app, sql, databaseUrl, retention } = await clockedApp();
    const tenant = await createTenant(app.storage);
    const db = rows(sql);
    await db.idempotency(tenant, ago(SECOND));
    const other = createRetentionPool(databaseUrl);
    try {
      const held = await tryRetentionLock(other);
      expect(held).not.toBeNull();
      expect(await retention.runNow()).toEqual({ outcome: 'skipped', deleted: none(), next: 0 });
      expect(await db.count('idempotency_records')).toBe(1);
      await held!.release();
      expect((await retention.runNow()).deleted.idempotency_records).toBe(1);
      expect(await metric(app, 'retentionPasses')).toEqual({ skipped: 1, completed: 1 });
    } finally {
      await other.end();
    }
  });

  it('a failed pass is a warning (throttled) and counted; the job keeps its schedule', async () => {
    const lines: LogLine[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(...logLines(String(chunk)));
        done();
      },
    });
    const log = pino({ level: 'info' }, sink);
    const outcomes: string[] = [];
    // Nothing listens on port 1: every connection is refused at once.
    const pool = createRetentionPool('postgresql://postgres@127.0.0.1:1/none');
    const job = new RetentionJob({
      retention: new RetentionRepository(pool),
      now: () => NOW,
      policy: retentionPolicy(loadConfig({})),
      intervalMs: 60_000,
      batchSize: 10,
      pauseMs: 0,
      budget: { rows: 100_000, ms: 60_000 },
      log,
      onPass: (outcome) => outcomes.push(outcome),
    });
    try {
      await expect(job.runNow()).rejects.toThrow();
      await expect(job.runNow()).rejects.toThrow();
      job.wake();
      await job.settle();
    } finally {
      await job.stop();
      await pool.end();
    }
    expect(outcomes).toEqual(['failed', 'failed', 'failed']);
    const warnings = lines.filter((l) => l.level === 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toMatch(/retention pass failed/);
  });
});

/** The pooler's URL with ?pgbouncer=true: the service's switch to unnamed statements. */
async function pooledWithSwitch(url: string, name: string): Promise<string> {
  const pooled = new URL(await transactionPooler(url, name));
  pooled.searchParams.set('pgbouncer', 'true');
  return pooled.toString();
}

// Last in the file: unnamed statements (as behind a pooler) are a switch for the whole process.
describe.skipIf(!PGBOUNCER)('retention behind a transaction pooler', () => {
  it('holds the lock for the whole pass through PgBouncer (transaction mode): a second pass skips; the batches run', async () => {
    const { url, name } = await freshDatabase();
    const pooledUrl = await pooledWithSwitch(url, name);
    useNamedStatements(false);
    const direct = new pg.Pool({ connectionString: url, max: 1 });
    const first = createRetentionPool(pooledUrl);
    const second = createRetentionPool(pooledUrl);
    try {
      const agency = await insertRow(direct, 'accounts', {
        kind: 'agency',
        name: 'A',
        plan: 'agency',
        updated_at: new Date(),
      });
      await bulkInsertIdempotencyRecords(direct, expiredKeys(agency, 300));
      const policy = retentionPolicy(loadConfig({}));
      const during: Awaited<ReturnType<typeof runRetentionPass>>[] = [];
      const result = await runRetentionPass({
        retention: new RetentionRepository(first),
        now: NOW,
        policy,
        batchSize: 100,
        pauseMs: 20,
        // The lock's transaction keeps its server connection; the other pass gets the pooler's other one.
        onBatch: async () => {
          if (during.length === 0)
            during.push(
              await runRetentionPass({
                retention: new RetentionRepository(second),
                now: NOW,
                policy,
                batchSize: 100,
                pauseMs: 0,
              }),
            );
        },
      });
      expect(during).toEqual([{ outcome: 'skipped', deleted: none(), next: 0 }]);
      expect(result).toMatchObject({ outcome: 'completed', deleted: { idempotency_records: 300 } });
      // Released at the end of the pass, whichever server connection the next pass lands on.
      for (let i = 0; i < 3; i++)
        expect(
          (
            await runRetentionPass({
              retention: new RetentionRepository(second),
              now: NOW,
              policy,
              batchSize: 100,
              pauseMs: 0,
            })
          ).outcome,
        ).toBe('completed');
    } finally {
      await Promise.all([first.end(), second.end(), direct.end()]);
    }
  });
});
