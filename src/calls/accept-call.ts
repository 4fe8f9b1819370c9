// Accepting a trigger: number check, agent selection and tenancy, calling window; then one statement that, under the
// account's lock, checks the queue bound and stores the call, its first event and the idempotent response together.
// Waking the dispatchers is the caller's (after commit: see plugins/jobs.ts).
import type { AgentSnapshot, Principal } from '../domain/principal.js';
import type { ConcurrencyLimits } from '../../plugins/concurrency.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { callingWindowsSchemaCheck, isWithinCallingWindow, nextWindowOpening } from '../domain/calling-window.js';
import { newRowId } from '../domain/ids.js';
import { isValidE164 } from '../domain/phone-number.js';
import { canUseAgent } from '../domain/tenancy.js';
import { AppError } from '../errors.js';
import type { TriggerBody } from '../../schemas/trigger.js';
import { findAgentById } from '../storage/accounts.js';
import { insertAcceptedCall } from '../storage/calls.js';
import { sqlPool } from '../storage/database.js';

/** What a 429 for a full queue tells the client to wait: about one short call's time. */
export const QUEUE_FULL_RETRY_SECONDS = 30;

export interface AcceptInput {
  principal: Principal;
  body: TriggerBody;
  /** body.metadata's JSON text as the client wrote it (key order kept); '{}' when absent. */
  metadataJson: string;
  now: Date;
  /** The account's queue bound and how long a call may wait (the concurrency plugin's). */
  limits: Pick<ConcurrencyLimits, 'maxWaiting' | 'queuedCallTtlHours'>;
  /** The request's Idempotency-Key reservation: the response is stored with the call, in the same statement. */
  idempotencyRecordId?: string | undefined;
}

/** The response to an accepted trigger; also what an Idempotency-Key replays. */
export function acceptedResponse(callId: string) {
  return { success: true as const, call_id: callId, status: 'initiated' as const };
}

async function selectAgent(
  prisma: PrismaClient,
  principal: Principal,
  requested: string | undefined,
): Promise<AgentSnapshot & { phoneNumber: string }> {
  const agentId = requested ?? principal.defaultAgentId;
  if (!agentId) throw new AppError('NO_DEFAULT_AGENT');
  // The default agent came with the key (one query fewer); any other agent is read now.
  const agent: AgentSnapshot | null =
    agentId === principal.defaultAgentId && principal.defaultAgent
      ? principal.defaultAgent
      : await findAgentById(prisma, agentId);
  if (!agent) throw new AppError(requested ? 'AGENT_NOT_FOUND' : 'NO_DEFAULT_AGENT');
  if (!canUseAgent({ id: principal.accountId, kind: principal.accountKind }, agent))
    throw new AppError('AGENT_FORBIDDEN');
  if (!agent.phoneNumber) throw new AppError('AGENT_HAS_NO_PHONE');
  return { ...agent, phoneNumber: agent.phoneNumber };
}

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

  const callId = newRowId();
  const waiting = await insertAcceptedCall(sqlPool(prisma), {
    accountId: principal.accountId,
    callId,
    eventId: newRowId(),
    agentId: agent.id,
    phoneNumber: body.phone_number,
    fromNumber: agent.phoneNumber,
    name: body.name ?? null,
    email: body.email ?? null,
    metadataJson: input.metadataJson,
    notBefore,
    expiresAt,
    now,
    maxWaiting: limits.maxWaiting,
    idempotency: input.idempotencyRecordId
      ? { recordId: input.idempotencyRecordId, status: 200, body: acceptedResponse(callId) }
      : null,
  });
  if (waiting !== null) {
    throw new AppError(
      'TOO_MANY_WAITING',
      { seconds: QUEUE_FULL_RETRY_SECONDS },
      { 'retry-after': String(QUEUE_FULL_RETRY_SECONDS) },
    );
  }
  return { callId };
}
