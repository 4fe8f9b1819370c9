// Calls made fast for dashboard tests, without the trigger and the dialer (the tests of the real path trigger
// calls through the API): finished calls with their events in one statement, waiting ones, and a delivery with its
// attempts.
import type { PrismaClient } from '../../src/generated/prisma/client.js';
import { createAgent } from '../../src/admin/agents.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import { storageOf } from '../helpers/database.js';

/** An agent of `accountId` (made on first use per account and prisma). */
const agents = new Map<string, Promise<string>>();
export function agentOf(prisma: PrismaClient, accountId: string): Promise<string> {
  if (!agents.has(accountId))
    agents.set(
      accountId,
      createAgent(storageOf(prisma), { accountId, name: 'Fixture Agent', phone: '+14155550100', now: new Date() }).then(
        (a) => a.id,
      ),
    );
  return agents.get(accountId)!;
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
  const rows = await prisma.$queryRawUnsafe<{ id: string }[]>(
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
    calls.accountId,
    calls.agentId,
    calls.phoneNumber ?? '+14155552671',
    calls.metadataJson ?? '{}',
    calls.status ?? 'completed',
    calls.createdAt,
    calls.count,
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
