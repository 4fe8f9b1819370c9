// Calls written straight to the database: many with their events at once, or in states only the service's own
// work or time reaches (test/helpers/seed.ts says when a test writes directly).
import { bulk } from './bulk.js';
import type { Prisma, PrismaClient } from '../../../src/generated/prisma/client.js';

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

/** Many calls at once as written, without acceptance (calls of a given age or state, for a poll to find). */
export function insertCallRows(prisma: PrismaClient, args: Prisma.CallCreateManyArgs) {
  return prisma.call.createMany(args);
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

/** A call's events removed, as a call of an older release kept only its first one. */
export function deleteCallEvents(prisma: PrismaClient, args: Prisma.CallEventDeleteManyArgs) {
  return prisma.callEvent.deleteMany(args);
}

/** Call events moved (to another time: a call's history as it stood a while ago). */
export function forceCallEvents(
  prisma: PrismaClient,
  where: Prisma.CallEventWhereInput,
  data: Prisma.CallEventUncheckedUpdateManyInput,
) {
  return prisma.callEvent.updateMany({ where, data });
}

/** An idempotency record as a request leaves it (in flight, or kept past its time): what a replay then meets. */
export function insertIdempotencyRecord(prisma: PrismaClient, args: Prisma.IdempotencyRecordCreateArgs) {
  return prisma.idempotencyRecord.create(args);
}

/** The callee's name on calls written in bulk (insertCalls writes none): what a name search finds. */
export async function nameCalls(prisma: PrismaClient, ids: string[], name: string): Promise<void> {
  await bulk(prisma, 'UPDATE calls SET name = $2 WHERE id = ANY($1::uuid[])', [ids, name]);
}

/** Calls created at `at` in `statuses` (under way or waiting, as acceptance and the dispatcher leave them). */
export async function insertLiveCalls(
  prisma: PrismaClient,
  calls: { accountId: string; agentId: string; statuses: ('dialing' | 'initiated')[]; at: Date },
): Promise<void> {
  await bulk(
    prisma,
    `INSERT INTO calls (id, account_id, agent_id, phone_number, from_number, metadata, status, not_before, expires_at,
                        created_at, updated_at)
     SELECT gen_random_uuid(), $1::uuid, $2::uuid, '+14155552671', '+14155550100', '{}'::json, s::call_status, $4,
            $4::timestamptz + interval '1 day', $4, $4
       FROM unnest($3::text[]) AS s`,
    [calls.accountId, calls.agentId, calls.statuses, calls.at],
  );
}
