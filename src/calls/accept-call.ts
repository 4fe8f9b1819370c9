// Accepting a trigger: number check, agent selection and tenancy, calling window, queue bound; then one
// transaction that stores the call, its first event and the idempotent response. Waking the dispatchers is the
// caller's (after commit: see src/plugins/jobs.ts).
import { randomUUID } from 'node:crypto';
import type { AgentSnapshot, Principal } from '../plugins/auth.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { callingWindowsSchemaCheck, isWithinCallingWindow, nextWindowOpening } from '../domain/calling-window.js';
import { isValidE164 } from '../domain/phone-number.js';
import { canUseAgent } from '../domain/tenancy.js';
import { AppError } from '../errors.js';
import type { TriggerBody } from '../schemas/trigger.js';
import { prepareEverySession, sessionsPrepared, sqlPool } from '../storage/database.js';

export const CALLS_CHANNEL = 'oct_calls';
/** What a 429 for a full queue tells the client to wait: about one short call's time. */
export const QUEUE_FULL_RETRY_SECONDS = 30;

export interface AcceptLimits {
  maxQueuedCalls: number;
  queuedCallTtlHours: number;
}

/** Statements that must commit together with the call (the idempotency record); run right after it is stored. */
export interface AcceptTransaction {
  /** `expectRows`: the statement must affect exactly that many rows, else the whole acceptance rolls back. */
  query(text: string, values: unknown[], expectRows?: number): void;
}

export interface AcceptInput {
  principal: Principal;
  body: TriggerBody;
  now: Date;
  limits: AcceptLimits;
  /** Adds statements to the acceptance transaction (the idempotency record). */
  inTransaction?: (tx: AcceptTransaction, callId: string) => Promise<void>;
}

async function selectAgent(prisma: PrismaClient, principal: Principal, requested: string | undefined): Promise<AgentSnapshot & { phoneNumber: string }> {
  const agentId = requested ?? principal.defaultAgentId;
  if (!agentId) throw new AppError('NO_DEFAULT_AGENT');
  // The default agent came with the key (one query fewer); any other agent is read now.
  const agent: AgentSnapshot | null = agentId === principal.defaultAgentId && principal.defaultAgent
    ? principal.defaultAgent
    : await prisma.agent.findUnique({ where: { id: agentId } });
  if (!agent) throw new AppError(requested ? 'AGENT_NOT_FOUND' : 'NO_DEFAULT_AGENT');
  if (!canUseAgent({ id: principal.accountId, kind: principal.accountKind }, agent)) throw new AppError('AGENT_FORBIDDEN');
  if (!agent.phoneNumber) throw new AppError('AGENT_HAS_NO_PHONE');
  return { ...agent, phoneNumber: agent.phoneNumber };
}

/**
 * The acceptance as one server-side function, so that it costs one round trip. It is a temporary function (created
 * once per pooled connection; no migration, nothing left behind) in PL/pgSQL. The account's waiting count is kept by
 * triggers on calls (migration 20261121080000); read with the account's row lock, it includes every call committed
 * while we waited for the lock (a row locked after a wait is read as last committed), and no other acceptance for
 * the account can commit until we do: the per-account bound is exact. Returns the waiting count when the queue is
 * full (nothing stored), else -1.
 */
const ACCEPT_FUNCTION = `
CREATE OR REPLACE FUNCTION pg_temp.oct_accept_call(
  p_account uuid, p_call uuid, p_event uuid, p_agent uuid, p_phone text, p_from text, p_name text, p_email text,
  p_metadata jsonb, p_not_before timestamptz, p_expires_at timestamptz, p_now timestamptz, p_updated_at timestamptz,
  p_max_waiting int
) RETURNS int LANGUAGE plpgsql AS $fn$
DECLARE
  waiting int;
BEGIN
  -- One acceptance at a time per account, so the queue bound is exact rather than approximate.
  SELECT waiting_calls INTO waiting FROM accounts WHERE id = p_account FOR NO KEY UPDATE;
  IF waiting >= p_max_waiting THEN
    RETURN waiting;
  END IF;
  INSERT INTO calls (id, account_id, agent_id, phone_number, from_number, name, email, metadata, status, not_before, expires_at, created_at, updated_at)
  VALUES (p_call, p_account, p_agent, p_phone, p_from, p_name, p_email, p_metadata, 'initiated', p_not_before, p_expires_at, p_now, p_updated_at);
  INSERT INTO call_events (id, call_id, to_status, source, occurred_at) VALUES (p_event, p_call, 'initiated', 'api', p_now);
  RETURN -1;
END
$fn$`;
// The casts pin the one overload whatever types a driver gives the parameters.
const ACCEPT_CALL = `SELECT pg_temp.oct_accept_call($1::uuid, $2::uuid, $3::uuid, $4::uuid, $5::text, $6::text, $7::text, $8::text,
  $9::jsonb, $10::timestamptz, $11::timestamptz, $12::timestamptz, $13::timestamptz, $14::int) AS waiting`;
prepareEverySession(ACCEPT_FUNCTION);

/**
 * The same acceptance where the function could not be created (sessionsPrepared() false), run after the account
 * lock in the caller's transaction: a statement of its own, so under READ COMMITTED it sees every call committed
 * while we waited for the lock. Same parameters, same answer.
 */
const ACCEPT_AFTER_LOCK = `
  WITH queue AS (
    SELECT waiting_calls AS waiting FROM accounts WHERE id = $1::uuid
  ), call AS (
    INSERT INTO calls (id, account_id, agent_id, phone_number, from_number, name, email, metadata, status, not_before, expires_at, created_at, updated_at)
    SELECT $2::uuid, $1::uuid, $4::uuid, $5::text, $6::text, $7::text, $8::text, $9::jsonb, 'initiated', $10::timestamptz, $11::timestamptz,
           $12::timestamptz, $13::timestamptz
      FROM queue WHERE waiting < $14::int
    RETURNING id
  ), event AS (
    INSERT INTO call_events (id, call_id, to_status, source, occurred_at) SELECT $3::uuid, id, 'initiated', 'api', $12::timestamptz FROM call
  )
  SELECT CASE WHEN (SELECT count(*) FROM call) > 0 THEN -1 ELSE waiting END AS waiting FROM queue`;

export async function acceptCall(prisma: PrismaClient, input: AcceptInput): Promise<{ callId: string }> {
  const { principal, body, now, limits } = input;
  if (!isValidE164(body.phone_number)) throw new AppError('INVALID_PHONE_NUMBER');
  const agent = await selectAgent(prisma, principal, body.agent_id);

  const windows = callingWindowsSchemaCheck(agent.callingWindows);
  let notBefore = now;
  if (!isWithinCallingWindow(windows, agent.timezone, now)) {
    if (agent.outsideWindowPolicy === 'reject') throw new AppError('OUTSIDE_CALLING_WINDOW');
    notBefore = nextWindowOpening(windows, agent.timezone, now) ?? now;
  }
  // The time to live counts from when the call may first be dialled: a call queued for tomorrow's window is not stale.
  const expiresAt = new Date(notBefore.getTime() + limits.queuedCallTtlHours * 3600_000);

  const callId = randomUUID();
  const extra: { text: string; values: unknown[]; expectRows: number | undefined }[] = [];
  await input.inTransaction?.({ query: (text, values, expectRows) => void extra.push({ text, values, expectRows }) }, callId);
  const values = [
    principal.accountId, callId, randomUUID(), agent.id, body.phone_number, agent.phoneNumber, body.name ?? null, body.email ?? null,
    JSON.stringify(body.metadata ?? {}), notBefore, expiresAt, now, new Date(), limits.maxQueuedCalls,
  ];

  // Nothing else to commit with it: the function call is the whole transaction (autocommit), one round trip, on
  // the pool under Prisma (a plain statement, prepared once per connection, costs a fraction of a Prisma query's CPU).
  if (extra.length === 0 && sessionsPrepared()) {
    const { rows } = await sqlPool(prisma).query<{ waiting: number }>({ name: 'oct_accept_call', text: ACCEPT_CALL, values });
    if (rows[0]!.waiting >= 0) throw queueFull();
    return { callId };
  }
  return prisma.$transaction(async (tx) => {
    let waiting: number;
    if (sessionsPrepared()) {
      [{ waiting }] = await tx.$queryRawUnsafe<[{ waiting: number }]>(ACCEPT_CALL, ...values);
    } else {
      await tx.$executeRawUnsafe('SELECT 1 FROM accounts WHERE id = $1::uuid FOR NO KEY UPDATE', principal.accountId);
      [{ waiting }] = await tx.$queryRawUnsafe<[{ waiting: number }]>(ACCEPT_AFTER_LOCK, ...values);
    }
    if (waiting >= 0) throw queueFull();
    for (const statement of extra) {
      const changed = await tx.$executeRawUnsafe(statement.text, ...statement.values);
      if (statement.expectRows !== undefined && changed !== statement.expectRows) {
        throw new Error(`expected ${statement.expectRows} row(s) changed, got ${changed}: ${statement.text.slice(0, 60)}`);
      }
    }
    return { callId };
  });
}

function queueFull() {
  return new AppError('TOO_MANY_WAITING', { seconds: QUEUE_FULL_RETRY_SECONDS }, { 'retry-after': String(QUEUE_FULL_RETRY_SECONDS) });
}
