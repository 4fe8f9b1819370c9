// Accepting a trigger: number check, schedule, recipient zone, region and consent, agent selection and tenancy, consent
// required, the calling window in the call's zone at its first possible dial, the calling rules' hours (reject); then
// one statement that, under the account's lock, checks the queue bound and stores the call, its first event and the
// idempotent response together. Waking the dispatchers is the caller's (after commit: see plugins/jobs.ts).
import type { AgentSnapshot, Principal } from '../domain/principal.js';
import { earliestDial, readScheduledAt } from '../domain/call-schedule.js';
import { callingWindowsSchemaCheck, isWithinCallingWindow, nextWindowOpening } from '../domain/calling-window.js';
import { newRowId } from '../domain/ids.js';
import { parseE164 } from '../domain/phone-number.js';
import { callTimezone, knownTimeZone } from '../domain/recipient-timezone.js';
import { canUseAgent } from '../domain/tenancy.js';
import { callingRulesFor, consentOf, recipientRegionOf } from './accept-compliance.js';
import { AppError } from '../errors.js';
import { TRIGGER_FIELD_ERRORS, type TriggerBody } from '../../schemas/trigger.js';
import type { Storage } from '../storage/index.js';

/** What a 429 for a full queue tells the client to wait: about one short call's time. */
export const QUEUE_FULL_RETRY_SECONDS = 30;

export interface AcceptInput {
  principal: Principal;
  body: TriggerBody;
  /** body.metadata's JSON text as the client wrote it (key order kept); '{}' when absent. */
  metadataJson: string;
  now: Date;
  /** The account's queue bound and how long a call may wait (the concurrency plugin's). */
  /** The account's queue bound and a waiting call's time to live (plugins/concurrency.ts holds the configured ones). */
  limits: { maxWaiting: number; queuedCallTtlHours: number };
  /** The request's Idempotency-Key reservation: the response is stored with the call, in the same statement. */
  idempotencyRecordId?: string | undefined;
}

/** The response to an accepted trigger; also what an Idempotency-Key replays. */
export function acceptedResponse(callId: string) {
  return { success: true as const, call_id: callId, status: 'initiated' as const };
}

async function selectAgent(
  storage: Storage,
  principal: Principal,
  requested: string | undefined,
): Promise<AgentSnapshot & { phoneNumber: string }> {
  const agentId = requested ?? principal.defaultAgentId;
  if (!agentId) throw new AppError('NO_DEFAULT_AGENT');
  // The default agent came with the key (one query fewer); any other agent is read now.
  const agent: AgentSnapshot | null =
    agentId === principal.defaultAgentId && principal.defaultAgent
      ? principal.defaultAgent
      : await storage.accounts.findAgentById(agentId);
  // An archived agent is no agent to a new trigger (a default agent is never archived: src/admin/agents.ts).
  if (!agent || ('archivedAt' in agent && agent.archivedAt !== null))
    throw new AppError(requested ? 'AGENT_NOT_FOUND' : 'NO_DEFAULT_AGENT');
  // A default agent is one of the account's own: one of a client's, picked before that rule (and not yet cleared by
  // migration 20261201160005), would have every trigger of an agency's key call with the client's number.
  if (!requested && agent.accountId !== principal.accountId) throw new AppError('NO_DEFAULT_AGENT');
  if (!canUseAgent({ id: principal.accountId, kind: principal.accountKind }, agent))
    throw new AppError('AGENT_FORBIDDEN');
  if (!agent.phoneNumber) throw new AppError('AGENT_HAS_NO_PHONE');
  return { ...agent, phoneNumber: agent.phoneNumber };
}

/** The trigger's scheduled_at as an instant (null for none); 400 naming the field for one out of range. */
function scheduledAtOf(body: TriggerBody, now: Date): Date | null {
  if (body.scheduled_at === undefined) return null;
  const read = readScheduledAt(body.scheduled_at, now);
  if (!read.ok) throw new AppError('VALIDATION', { detail: read.message });
  return read.at;
}

/** The trigger's recipient_timezone as stored (null for none); 400 naming the field for a zone nobody knows. */
function recipientZoneOf(body: TriggerBody): string | null {
  if (body.recipient_timezone === undefined) return null;
  const zone = knownTimeZone(body.recipient_timezone);
  if (zone === null) throw new AppError('VALIDATION', { detail: TRIGGER_FIELD_ERRORS.unknownTimezone });
  return zone;
}

export async function acceptCall(storage: Storage, input: AcceptInput): Promise<{ callId: string }> {
  const { principal, body, now, limits } = input;
  const number = parseE164(body.phone_number);
  if (!number) throw new AppError('INVALID_PHONE_NUMBER');
  // Both are checked whatever the agent, so a bad value is refused before anything is read or stored.
  const scheduledAt = scheduledAtOf(body, now);
  const requestedZone = recipientZoneOf(body);
  const recipientRegion = recipientRegionOf(body);
  const consent = consentOf(body, now);
  const agent = await selectAgent(storage, principal, body.agent_id);
  // Consent (the agent's setting, or its agency's rules) before the windows: its answer does not depend on the clock.
  const rules = await callingRulesFor(storage, {
    principal,
    agent,
    phoneNumber: body.phone_number,
    recipientRegion,
    consent,
  });
  const zone = callTimezone(agent, { requested: requestedZone, country: number.country });

  // The window is read in the call's zone at its first possible dial: the scheduled time, or now. An agent whose
  // policy is reject refuses a scheduled time outside its window, as it refuses a trigger outside it now.
  const windows = callingWindowsSchemaCheck(agent.callingWindows);
  const earliest = earliestDial(scheduledAt, now);
  let notBefore = earliest;
  if (!isWithinCallingWindow(windows, zone.timezone, earliest)) {
    if (agent.outsideWindowPolicy === 'reject') throw new AppError('OUTSIDE_CALLING_WINDOW');
    notBefore = nextWindowOpening(windows, zone.timezone, earliest) ?? earliest;
  }
  // Then the laws' hours where the callee may be, when the agency's rules are on and the agent rejects (with queue,
  // the dispatcher holds the call until they allow it).
  rules.hours(earliest);
  // The time to live counts from when the call may first be dialled: a call queued for tomorrow's window (or
  // scheduled for next week) is not stale.
  const expiresAt = new Date(notBefore.getTime() + limits.queuedCallTtlHours * 3600_000);

  const callId = newRowId();
  const stored = await storage.calls.insertAcceptedCall({
    accountId: principal.accountId,
    agencyId: principal.agencyId,
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
    scheduledAt,
    timezone: zone.timezone,
    timezoneSource: zone.source,
    // An agency's key on a client's agent: the call stays the agency's (limit, queue, idempotency, endpoint) and is
    // listed for the client too, whose do-not-call list then applies as well.
    listedForAccountId: agent.accountId === principal.accountId ? null : agent.accountId,
    recipientRegion,
    consent,
    idempotency: input.idempotencyRecordId
      ? { recordId: input.idempotencyRecordId, status: 200, body: acceptedResponse(callId) }
      : null,
  });
  if (stored.kind === 'do_not_call') throw new AppError('DO_NOT_CALL');
  if (stored.kind === 'queue_full') {
    throw new AppError(
      'TOO_MANY_WAITING',
      { seconds: QUEUE_FULL_RETRY_SECONDS },
      { 'retry-after': String(QUEUE_FULL_RETRY_SECONDS) },
    );
  }
  return { callId };
}
