// The Calls list: a call's status as one badge with its reason, its attempts and its metadata cell.
import type { AttemptOutcomeData } from '../../../schemas/call.js';
import {
  LIVE_STATUSES,
  type AttemptOutcome,
  type CallStatus,
  type FailureReason,
  type TimezoneSource,
} from '../../../schemas/vocabulary.js';
import { dialWait } from '../../domain/dial-wait.js';
import type { ShownTimes } from './shown-times.js';
import { REASON_WORDS, STATUS_WORDS, TIMEZONE_SOURCE_WORDS } from './status.js';
import { heldWords, type WaitingCall } from './time.js';

/** A badge's colour, as the stylesheet names them (ok green, bad red, wait amber, info blue, muted grey). */
export type BadgeTone = 'ok' | 'bad' | 'wait' | 'info' | 'muted';

/**
 * Whether any of these calls is still going (LIVE_STATUSES: waiting, dialling or talking): the list is worth
 * refreshing. Not the vocabulary's ACTIVE_STATUSES (dialling or talking, what the concurrency limit counts): a
 * waiting call changes too.
 */
export function hasActiveCall(calls: readonly { status: CallStatus }[]): boolean {
  return calls.some((c) => (LIVE_STATUSES as readonly CallStatus[]).includes(c.status));
}

/** "26 Nov, 09:00" in `zone`; null when Intl does not know the zone (one stored by hand). */
function shortLocal(at: Date, zone: string): string | null {
  try {
    return new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      day: 'numeric',
      month: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    }).format(at);
  } catch {
    return null;
  }
}

/**
 * A time short enough for a badge, in the call's zone: "26 Nov, 09:00 America/New_York", else to the minute as the
 * page shows times ("2026-11-26 09:00 UTC", "2026-11-26 10:00 CET").
 */
export function formatShortIn(at: Date, zone: string | null, times: ShownTimes): string {
  const local = zone && zone !== 'UTC' ? shortLocal(at, zone) : null;
  return local ? `${local} ${zone}` : times.minute(at);
}

/** What the Calls list needs of a call to word its status. */
export interface BadgeCall extends WaitingCall {
  failureReason: FailureReason | null;
  timezone: string | null;
  timezoneSource: TimezoneSource | null;
}

/** Whose zone a call's window is read in, as a badge says it ("callee's zone, America/New_York"). */
const ZONE_OWNER_WORDS: Record<TimezoneSource, string> = {
  request: "callee's zone",
  country: "callee's zone",
  agent: "agent's zone",
};

/**
 * A call's status as one badge: "Completed", "Failed: busy", "Retrying at …", "Scheduled for …", "Waiting for the
 * window until … (callee's zone, America/New_York)", "Scheduled; the window opens …" (the earliest dial, as the call
 * page's waitingWords names it: the same dialWait) (local times in the call's zone; the window's badge says whose
 * zone it is, its `title` why, and its two `parts` may go on two lines where the row is narrow), "Waiting for a slot
 * (#3 in line)"; `position` is the call's place in its account's line when it waits for a slot (unknown: left out).
 */
export function callBadge(
  call: BadgeCall,
  now: Date,
  times: ShownTimes,
  position?: number,
): { text: string; tone: BadgeTone; title?: string; parts?: [string, string] } {
  switch (call.status) {
    case 'completed':
      return { text: 'Completed', tone: 'ok' };
    case 'failed': {
      const reason = call.failureReason ? REASON_WORDS[call.failureReason] : null;
      return { text: reason ? `Failed: ${reason.charAt(0).toLowerCase()}${reason.slice(1)}` : 'Failed', tone: 'bad' };
    }
    case 'dialing':
    case 'in_progress':
      return { text: STATUS_WORDS[call.status], tone: 'info' };
    case 'initiated':
      break;
  }
  const wait = dialWait(call, now)!;
  if (wait.first === 'slot')
    return { text: `Waiting for a slot${position ? ` (#${position} in line)` : ''}`, tone: 'wait' };
  const at = (d: Date) => formatShortIn(d, call.timezone, times);
  if (wait.first === 'rules' || wait.first === 'cap') {
    // The reason names the rule and the callee's local time: the badge's second line, and its title in full.
    const text = heldWords(wait.first, at(wait.dialAt), call.heldReason);
    const lead = heldWords(wait.first, at(wait.dialAt), null);
    return call.heldReason
      ? { text, tone: 'wait', title: call.heldReason, parts: [lead, `(${call.heldReason})`] }
      : { text, tone: 'wait' };
  }
  if (wait.first === 'retry' && !wait.thenWindow) return { text: `Retrying at ${at(wait.firstAt)}`, tone: 'wait' };
  if (wait.first === 'schedule' && !wait.thenWindow) return { text: `Scheduled for ${at(wait.firstAt)}`, tone: 'wait' };
  // The window holds it, alone or after its schedule or next attempt: the badge names when it is first dialled.
  const lead = wait.first === 'window' ? 'Waiting for the window until' : `${WAIT_LEAD[wait.first]}; the window opens`;
  const before =
    wait.first === 'window'
      ? ''
      : `${wait.first === 'schedule' ? 'Scheduled for' : `Attempt ${call.attempt} due`} ${at(wait.firstAt)}, outside the calling window. `;
  const { timezone: zone, timezoneSource: source } = call;
  const local = zone && source ? shortLocal(wait.dialAt, zone) : null;
  if (!zone || !source || !local) {
    const text = `${lead} ${at(wait.dialAt)}`;
    return before ? { text, tone: 'wait', title: before.trim() } : { text, tone: 'wait' };
  }
  const parts: [string, string] = [`${lead} ${local}`, `(${ZONE_OWNER_WORDS[source]}, ${zone})`];
  return {
    text: parts.join(' '),
    tone: 'wait',
    title: `${before}Calling hours read in ${zone}: ${TIMEZONE_SOURCE_WORDS[source]}`,
    parts,
  };
}

/** How a badge starts when the window opens after the call's schedule or next attempt. */
const WAIT_LEAD = { schedule: 'Scheduled', retry: 'Retrying' } as const;

/** Whether a waiting call waits only for a free slot (it is due): its badge says its place in line. */
export function waitsForSlot(call: BadgeCall, now: Date): boolean {
  return dialWait(call, now)?.first === 'slot';
}

/** A metadata value in a table cell: a string as it is, anything else as JSON (123, true, null, {"a":1}). */
export function metadataCellWords(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** How an attempt ended, short enough for a list ("busy, no answer"). */
const ATTEMPT_OUTCOME_SHORT_WORDS: Record<AttemptOutcome, string> = {
  completed: 'completed',
  busy: 'busy',
  no_answer: 'no answer',
  rejected: 'rejected',
  provider_error: 'provider error',
  voicemail: 'voicemail',
};

/** One ended attempt, as attempt_outcomes stores it. */
export interface EndedAttempt {
  attempt: number;
  outcome: AttemptOutcome;
  at: string;
}

/**
 * A call's attempts on the Calls list, when more than one was made or the agent's policy allows more than one:
 * "Attempt 2 of 3: busy" (the attempt being made, waited for or, once the call ended, the last one dialled; then the
 * ended attempts' outcomes), with each ended attempt's time for the `title`; null otherwise. `dialled`: the attempts
 * dialled so far (src/calls/call-view.ts); `allowed`: the agent's max_attempts (null when the agent is not listed).
 */
export function attemptsCell(
  call: { status: CallStatus; attempt: number; timezone: string | null },
  outcomes: readonly EndedAttempt[],
  dialled: number,
  allowed: number | null,
  shown: ShownTimes,
): { text: string; title: string | null } | null {
  const live = (LIVE_STATUSES as readonly CallStatus[]).includes(call.status);
  const current = live ? call.attempt : dialled;
  const of = allowed === null ? null : Math.max(allowed, current);
  if (current < 1 || (of ?? current) < 2) return null;
  const ended = outcomes.map((o) => ATTEMPT_OUTCOME_SHORT_WORDS[o.outcome] ?? o.outcome).join(', ');
  const times = outcomes.map(
    (o) =>
      `Attempt ${o.attempt}: ${ATTEMPT_OUTCOME_SHORT_WORDS[o.outcome] ?? o.outcome}, ${shown.withLocal(new Date(o.at), call.timezone)}`,
  );
  return {
    text: `Attempt ${current}${of === null ? '' : ` of ${of}`}${ended ? `: ${ended}` : ''}`,
    title: times.length ? times.join('; ') : null,
  };
}

/** The stored attempt_outcomes, as the payload has them (a value edited by hand into another shape shows none). */
export function storedOutcomes(value: unknown): AttemptOutcomeData[] {
  return Array.isArray(value)
    ? value.filter((o): o is AttemptOutcomeData => typeof o === 'object' && o !== null && 'outcome' in o && 'at' in o)
    : [];
}
