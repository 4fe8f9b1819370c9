// The tests' writes straight to the database, through the test's own Prisma client (prismaOf(app), freshPrisma):
// many rows at once, where the API or src/admin one by one would be too slow (calls with their events, deliveries),
// and the states no user or operator can make (a call the dispatcher left mid-dial, a delivery's past attempts, a
// setting outside what the forms accept), each named for what it makes. Whatever a user or operator could do goes
// through test/helpers/fixtures.ts (src/admin) instead.
import type { QueryConfig, QueryResultRow } from 'pg';
import type { Prisma, PrismaClient } from '../../src/generated/prisma/client.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import { sqlPool } from '../../src/storage/database.js';
import { storageOf } from './database.js';

/**
 * A bulk statement on the client's pool, without the service's 1.5 s read timeout (createPrisma's): a seed of many rows
 * on a busy machine may take longer, and it is no request.
 */
async function bulk<R extends QueryResultRow = QueryResultRow>(
  prisma: PrismaClient,
  text: string,
  values: unknown[],
): Promise<R[]> {
  // pg reads query_timeout from a query's config too (Client.query), though its types list it for the client only.
  const query = { text, values, query_timeout: 300_000 } as QueryConfig;
  return (await sqlPool(prisma).query<R>(query)).rows;
}

export interface FixtureCalls {
  accountId: string;
  agentId: string;
  count: number;
  createdAt: Date;
  phoneNumber?: string;
  /** The metadata's JSON text, stored as is (the trigger only accepts flat objects; this can be anything). */
  metadataJson?: string;
  status?: 'completed' | 'failed';
}

/** `count` completed (or busy-failed) calls created at the same instant, each with its events; returns their ids. */
export async function insertCalls(prisma: PrismaClient, calls: FixtureCalls): Promise<string[]> {
  const rows = await bulk<{ id: string }>(
    prisma,
    `WITH made AS (
       INSERT INTO calls (id, account_id, agent_id, phone_number, from_number, metadata, status, failure_reason, not_before, expires_at,
                          created_at, updated_at, started_at, answered_at, ended_at, duration_seconds)
       SELECT gen_random_uuid(), $1::uuid, $2::uuid, $3::text, '+14155550100', $4::json, $5::call_status,
              CASE WHEN $5::call_status = 'failed' THEN 'busy'::failure_reason END, $6::timestamptz, $6::timestamptz + interval '1 day',
              $6::timestamptz, $6::timestamptz, $6::timestamptz + interval '1 second',
              CASE WHEN $5::call_status = 'completed' THEN $6::timestamptz + interval '2 seconds' END,
              $6::timestamptz + interval '65 seconds', CASE WHEN $5::call_status = 'completed' THEN 63 END
         FROM generate_series(1, $7::int)
       RETURNING id, status, created_at
     ), events AS (
       INSERT INTO call_events (id, call_id, from_status, to_status, failure_reason, source, occurred_at)
       SELECT gen_random_uuid(), m.id, e.from_status::call_status, e.to_status::call_status, e.reason::failure_reason, e.source, m.created_at + e.after
         FROM made m CROSS JOIN LATERAL (VALUES
           (NULL, 'initiated', NULL, 'api', interval '0'),
           ('initiated', 'dialing', NULL, 'dispatcher', interval '1 second'),
           ('dialing', 'in_progress', NULL, 'provider', interval '2 seconds'),
           ('in_progress', 'completed', NULL, 'provider', interval '65 seconds')) AS e(from_status, to_status, reason, source, after)
        WHERE m.status = 'completed' OR e.to_status IN ('initiated', 'dialing')
       UNION ALL
       SELECT gen_random_uuid(), m.id, 'dialing', 'failed', 'busy', 'provider', m.created_at + interval '65 seconds' FROM made m WHERE m.status = 'failed'
     )
     SELECT id::text FROM made`,
    [
      calls.accountId,
      calls.agentId,
      calls.phoneNumber ?? '+14155552671',
      calls.metadataJson ?? '{}',
      calls.status ?? 'completed',
      calls.createdAt,
      calls.count,
    ],
  );
  return rows.map((r) => r.id);
}

/**
 * A call.completed delivery of `callId` to the account's endpoint (set on first use), already failed after two
 * attempts (a 500, then a timeout): it can be resent.
 */
export async function insertFailedDelivery(prisma: PrismaClient, accountId: string, callId: string): Promise<string> {
  if (!(await prisma.webhookEndpoint.findUnique({ where: { accountId } }))) {
    await setWebhook(storageOf(prisma), accountId, 'http://127.0.0.1:9/hooks', { allowPrivate: true, now: new Date() });
  }
  const endpoint = await prisma.webhookEndpoint.findUniqueOrThrow({ where: { accountId } });
  const event = await prisma.callEvent.findFirstOrThrow({ where: { callId }, orderBy: { occurredAt: 'desc' } });
  const delivery = await prisma.webhookDelivery.create({
    data: {
      endpointId: endpoint.id,
      callId,
      callEventId: event.id,
      eventType: 'call.completed',
      payload: '{}',
      status: 'failed',
      attemptCount: 2,
      completedAt: event.occurredAt,
      attempts: {
        create: [
          { attemptNumber: 1, startedAt: event.occurredAt, durationMs: 37, responseStatus: 500, error: null },
          {
            attemptNumber: 2,
            startedAt: new Date(event.occurredAt.getTime() + 5_000),
            durationMs: 15_000,
            responseStatus: null,
            error: 'timed out after 15000 ms <b>',
          },
        ],
      },
    },
  });
  return delivery.id;
}

/** A call still waiting (status initiated, its window open, a day to live), with its acceptance event; returns its id. */
export async function insertWaitingCall(
  prisma: PrismaClient,
  accountId: string,
  agentId: string,
  phoneNumber = '+14155552671',
): Promise<string> {
  const now = new Date();
  const call = await prisma.call.create({
    data: {
      accountId,
      agentId,
      phoneNumber,
      fromNumber: '+14155550100',
      notBefore: now,
      expiresAt: new Date(now.getTime() + 86_400_000),
      events: { create: { toStatus: 'initiated', source: 'api', occurredAt: now } },
    },
  });
  return call.id;
}

/**
 * A call of `tenant` due now that no acceptance announced (no hint, no NOTIFY): only a dispatcher's poll (its
 * due-accounts query) finds it.
 */
export function waitingCallNobodyAnnounced(prisma: PrismaClient, tenant: { accountId: string; agentId: string }) {
  const now = new Date();
  return prisma.call.create({
    data: {
      accountId: tenant.accountId,
      agentId: tenant.agentId,
      phoneNumber: '+14155552671',
      fromNumber: '+14155550100',
      notBefore: now,
      expiresAt: new Date(now.getTime() + 3_600_000),
    },
  });
}

/** A call row as written, without acceptance (a test's own shape: a row of an older release, an odd combination). */
export function insertCallRow(prisma: PrismaClient, data: Prisma.CallUncheckedCreateInput) {
  return prisma.call.create({ data });
}

/**
 * Puts calls in a state only the service's own work or time reaches (a status, a lease, attempts, a time in the past):
 * where a test starts from that state rather than waiting for it.
 */
export function forceCalls(
  prisma: PrismaClient,
  where: Prisma.CallWhereInput,
  data: Prisma.CallUncheckedUpdateManyInput,
) {
  return prisma.call.updateMany({ where, data });
}

/** One call as forceCalls does; returns the row as it now is. */
export function forceCall(prisma: PrismaClient, id: string, data: Prisma.CallUncheckedUpdateInput) {
  return prisma.call.update({ where: { id }, data });
}

/**
 * Agent values the forms and callctl refuse (a retry wait of zero minutes, the callee's zone for an agent without a
 * window, a time zone stored as an older release wrote it): a test of what the service does with such a row.
 */
export function forceAgent(prisma: PrismaClient, id: string, data: Prisma.AgentUncheckedUpdateInput) {
  return prisma.agent.update({ where: { id }, data });
}

/** Account values no admin function writes (an agency whose default agent is a client's, as an older release allowed). */
export function forceAccount(prisma: PrismaClient, id: string, data: Prisma.AccountUncheckedUpdateInput) {
  return prisma.account.update({ where: { id }, data });
}

/**
 * An endpoint's state as the delivery worker keeps it (failures in a row, held or disabled since a time, a target the
 * SSRF guard would refuse today): a test that starts from a worker's history.
 */
export function forceEndpoint(
  prisma: PrismaClient,
  where: Prisma.WebhookEndpointWhereUniqueInput,
  data: Prisma.WebhookEndpointUncheckedUpdateInput,
) {
  return prisma.webhookEndpoint.update({ where, data });
}

/** An account whose endpoint is gone after it was set (no admin function removes one; the account keeps its calls). */
export function deleteEndpoint(prisma: PrismaClient, accountId: string) {
  return prisma.webhookEndpoint.delete({ where: { accountId } });
}

/** Deliveries put in a state only the worker or time reaches (due in the past, claimed, failed after attempts). */
export function forceDeliveries(
  prisma: PrismaClient,
  where: Prisma.WebhookDeliveryWhereInput,
  data: Prisma.WebhookDeliveryUncheckedUpdateManyInput,
) {
  return prisma.webhookDelivery.updateMany({ where, data });
}

/** One delivery as forceDeliveries does; returns the row as it now is. */
export function forceDelivery(prisma: PrismaClient, id: string, data: Prisma.WebhookDeliveryUncheckedUpdateInput) {
  return prisma.webhookDelivery.update({ where: { id }, data });
}

/** A delivery row as written (the worker's history of a call event): `data` says its status and attempts. */
export function insertDeliveryRow(prisma: PrismaClient, data: Prisma.WebhookDeliveryUncheckedCreateInput) {
  return prisma.webhookDelivery.create({ data });
}

/**
 * A statement run as written, for what Prisma's types forbid on purpose (a row of an older release without a column a
 * migration added, a value a check constraint was added against, many rows from generate_series): `sql` says it, and
 * the test's comment says why.
 */
export function runSql(prisma: PrismaClient, sql: string, ...values: unknown[]): Promise<number> {
  return prisma.$executeRawUnsafe(sql, ...values);
}

/**
 * `count` numbers on the do-not-call list of `accountId` (+1202 followed by 0000001, 0000002, ...), set-based as
 * bench/ seeds a large list: importing 100,000 through src/admin would take minutes.
 */
export async function seedDoNotCallNumbers(prisma: PrismaClient, accountId: string, count: number): Promise<void> {
  await bulk(
    prisma,
    `INSERT INTO do_not_call_entries (id, account_id, phone_number, reason, added_by)
     SELECT gen_random_uuid(), $1::uuid, '+1202' || lpad(n::text, 7, '0'), NULL, 'seed'
       FROM generate_series(1, $2::int) AS n`,
    [accountId, count],
  );
}

// The writes below take Prisma's own arguments (data, where), so that a test reads as the row it writes.

/** Do-not-call entries as written: many at once, or with an added_by or a date no form writes. */
export function insertDoNotCallEntries(prisma: PrismaClient, args: Prisma.DoNotCallEntryCreateManyArgs) {
  return prisma.doNotCallEntry.createMany(args);
}

/** One do-not-call entry as written (see insertDoNotCallEntries). */
export function insertDoNotCallEntry(prisma: PrismaClient, args: Prisma.DoNotCallEntryCreateArgs) {
  return prisma.doNotCallEntry.create(args);
}

/** Do-not-call entries changed in place (a date moved into the past, a reason an older release wrote). */
export function forceDoNotCallEntries(prisma: PrismaClient, args: Prisma.DoNotCallEntryUpdateManyArgs) {
  return prisma.doNotCallEntry.updateMany(args);
}

/**
 * Empties do-not-call lists between a file's tests: removing each number through src/admin would audit each and
 * end nothing a test needs.
 */
export function clearDoNotCall(prisma: PrismaClient, args: Prisma.DoNotCallEntryDeleteManyArgs) {
  return prisma.doNotCallEntry.deleteMany(args);
}

/** An import of a do-not-call list left as a crash or an older release leaves it (running, stale, half done). */
export function forceDoNotCallImport(prisma: PrismaClient, args: Prisma.DoNotCallImportUpdateArgs) {
  return prisma.doNotCallImport.update(args);
}

/** An import's row written as it was when it started (see forceDoNotCallImport), made when missing. */
export function upsertDoNotCallImport(prisma: PrismaClient, args: Prisma.DoNotCallImportUpsertArgs) {
  return prisma.doNotCallImport.upsert(args);
}

/** An idempotency record as a request leaves it (in flight, or kept past its time): what a replay then meets. */
export function insertIdempotencyRecord(prisma: PrismaClient, args: Prisma.IdempotencyRecordCreateArgs) {
  return prisma.idempotencyRecord.create(args);
}

/** Many calls at once as written, without acceptance (calls of a given age or state, for a poll to find). */
export function insertCallRows(prisma: PrismaClient, args: Prisma.CallCreateManyArgs) {
  return prisma.call.createMany(args);
}

/** A call's events removed, as a call of an older release kept only its first one. */
export function deleteCallEvents(prisma: PrismaClient, args: Prisma.CallEventDeleteManyArgs) {
  return prisma.callEvent.deleteMany(args);
}

/** Many deliveries at once, as the worker's history leaves them (pages of a delivery log). */
export function insertDeliveryRows(prisma: PrismaClient, args: Prisma.WebhookDeliveryCreateManyArgs) {
  return prisma.webhookDelivery.createMany(args);
}

/** An endpoint row as written: a secret or a target the admin functions would not write (a name that no longer resolves). */
export function insertEndpointRow(prisma: PrismaClient, args: Prisma.WebhookEndpointCreateArgs) {
  return prisma.webhookEndpoint.create(args);
}

/** Many endpoints at once (hundreds of clients with a webhook: setWebhook resolves and audits each). */
export function insertEndpointRows(prisma: PrismaClient, args: Prisma.WebhookEndpointCreateManyArgs) {
  return prisma.webhookEndpoint.createMany(args);
}

/** Endpoints removed (no admin function removes one; see deleteEndpoint). */
export function deleteEndpoints(prisma: PrismaClient, args: Prisma.WebhookEndpointDeleteManyArgs) {
  return prisma.webhookEndpoint.deleteMany(args);
}

/** A key row as written, with a display prefix of the test's choosing (a generated key's is random). */
export function insertApiKeyRow(prisma: PrismaClient, args: Prisma.ApiKeyCreateArgs) {
  return prisma.apiKey.create(args);
}

/** Many accounts at once (hundreds of clients for a paged list: createClient one by one audits each). */
export function insertAccountRows(prisma: PrismaClient, args: Prisma.AccountCreateManyArgs) {
  return prisma.account.createMany(args);
}

/** Many agents at once (see insertAccountRows). */
export function insertAgentRows(prisma: PrismaClient, args: Prisma.AgentCreateManyArgs) {
  return prisma.agent.createMany(args);
}

/** A user row as written: one that never had a password nor a link (no admin function makes one without a link). */
export function insertUserRow(prisma: PrismaClient, args: Prisma.UserUncheckedCreateInput) {
  return prisma.user.create({ data: args });
}

/** Users changed in place (disabled at a given instant without an actor, a state a session must then meet). */
export function forceUsers(prisma: PrismaClient, args: Prisma.UserUpdateManyArgs) {
  return prisma.user.updateMany(args);
}
