// How the dashboard writes things, in one place: times (always UTC, with a call's local time beside it) and durations, the keyset cursors of its
// "Older" links, and statuses, failure reasons, attempts, why a call waits, event sources and endpoint states in a
// person's words.
import { canonicalUuid, UUID_PATTERN } from '../../../schemas/uuid.js';
import {
  LIVE_STATUSES,
  type AnsweredBy,
  type AttemptOutcome,
  type CallStatus,
  type FailureReason,
  type TimezoneSource,
} from '../../../schemas/vocabulary.js';
import { callingWindowsSchemaCheck, CallingWindowError, formatCallingWindow } from '../../domain/calling-window.js';
import { formatMinute, formatTime } from '../../domain/utc-time.js';
import { dialWait } from '../../domain/dial-wait.js';

// ---- Times ----

// The dashboard shows times in UTC, written as callctl writes them (src/domain/utc-time.ts); its pages take
// formatTime from here, with the rest of how the dashboard words things.
export { formatTime };

/** A time in UTC and, when a zone is given and is not UTC, the local time there: "... UTC (09:00 America/New_York)". */
export function formatTimeIn(at: Date, zone: string | null): string {
  if (!zone || zone === 'UTC') return formatTime(at);
  try {
    const local = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    }).format(at);
    return `${formatTime(at)} (${local} ${zone})`;
  } catch {
    return formatTime(at); // a zone stored by hand that Intl does not know
  }
}

/** What a waiting call waits for, as format.ts words it. */
export interface WaitingCall {
  status: CallStatus;
  notBefore: Date;
  nextAttemptAt: Date | null;
  scheduledAt: Date | null;
  attempt: number;
}

/**
 * Why a waiting call has not been dialled, in words; null when it does not wait. In order: its next attempt, its
 * scheduled time, its calling window (which may open after either), else a free slot (it is due). The Calls list's
 * badge reads the same wait (dialWait), so both pages name the same earliest dial.
 */
export function waitingWords(call: WaitingCall, now: Date, zone: string | null = null): string | null {
  const wait = dialWait(call, now);
  if (!wait) return null;
  const at = (d: Date) => formatTimeIn(d, zone);
  const windowAfter = wait.thenWindow ? `; then the calling window, which opens ${at(wait.dialAt)}` : '';
  switch (wait.first) {
    case 'retry':
      return `Attempt ${call.attempt} is due ${at(wait.firstAt)}${windowAfter}`;
    case 'schedule':
      return `Scheduled for ${at(wait.firstAt)}${windowAfter}`;
    case 'window':
      return `The calling window opens ${at(wait.firstAt)}`;
    case 'slot':
      return call.attempt > 1 ? `Attempt ${call.attempt} waits for a free slot` : 'Waits for a free slot';
  }
}

/** Where a call's time zone came from, in words. */
export const TIMEZONE_SOURCE_WORDS: Record<TimezoneSource, string> = {
  request: "the callee's, given by the trigger (recipient_timezone)",
  country: "the callee's, from the number's country (it has one time zone)",
  agent: "the agent's",
};

/** Answering-machine detection's verdict, in words. */
export const ANSWERED_BY_WORDS: Record<AnsweredBy, string> = {
  human: 'A person',
  machine: 'A machine (voicemail)',
  unknown: 'Unknown (detection could not tell)',
};

/** How one attempt ended, in words. */
export const ATTEMPT_OUTCOME_WORDS: Record<AttemptOutcome, string> = {
  completed: 'Completed',
  busy: 'Busy',
  no_answer: 'No answer',
  rejected: 'Rejected',
  provider_error: 'Provider error',
  voicemail: 'Reached voicemail',
};

/** A time, or a dash when there is none (tables). */
export function timeOrDash(at: Date | null): string {
  return at ? formatTime(at) : '-';
}

/** A time, or null when there is none (the template says what "none" means there). */
export function timeOrNull(at: Date | null | undefined): string | null {
  return at ? formatTime(at) : null;
}

/** The UTC day of `at`, `2026-11-23`. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/**
 * A day (`YYYY-MM-DD`) or a minute (`YYYY-MM-DDTHH:MM` or `YYYY-MM-DD HH:MM`, seconds optional), in UTC, as the
 * forms take them (the shape of UTC_MINUTE_PATTERN, a day too): the moment it starts, or with `end` the moment after
 * it (a range to it includes the whole day or minute). Null when there is no such moment (February 30, 24:00).
 */
export function parseUtcTime(value: string, end = false): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(value.trim());
  if (!m) return null;
  const [, y, mo, d, h = '0', mi = '0', s = '0'] = m;
  const at = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)));
  const fields = [
    at.getUTCFullYear(),
    at.getUTCMonth() + 1,
    at.getUTCDate(),
    at.getUTCHours(),
    at.getUTCMinutes(),
    at.getUTCSeconds(),
  ];
  if (fields.join() !== [y, mo, d, h, mi, s].map(Number).join()) return null;
  if (!end) return at;
  const step = m[6] !== undefined ? 1_000 : m[4] !== undefined ? 60_000 : 86_400_000;
  return new Date(at.getTime() + step);
}

/** `42 s`, `3 min 5 s`, `1 h 2 min`; a dash when there is none. */
export function formatDuration(seconds: number | null): string {
  if (seconds === null) return '-';
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min${seconds % 60 ? ` ${seconds % 60} s` : ''}`;
  return `${Math.floor(seconds / 3600)} h${Math.floor((seconds % 3600) / 60) ? ` ${Math.floor((seconds % 3600) / 60)} min` : ''}`;
}

const ISO_TIME = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z\b/g;

/** A stored text with ISO times in it, its times written as every page writes them. */
function withShownTimes(text: string): string {
  return text.replace(ISO_TIME, (at) => formatTime(new Date(at)));
}

// ---- Keyset cursors ("Older" carries the last row's time and id) ----

/** Where a page of a newest-first list starts: the row before which the next page begins. */
export interface KeysetCursor {
  createdAt: Date;
  id: string;
}

const CURSOR = new RegExp(`^(\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z)_(${UUID_PATTERN.slice(1, -1)})$`);

export function encodeCursor(cursor: KeysetCursor): string {
  return `${cursor.createdAt.toISOString()}_${cursor.id}`;
}

/** The cursor an "Older" link carries; null when `value` is not one (hand-edited, or no such time). */
export function decodeCursor(value: string): KeysetCursor | null {
  const match = CURSOR.exec(value);
  if (!match || Number.isNaN(Date.parse(match[1]!))) return null;
  return { createdAt: new Date(match[1]!), id: canonicalUuid(match[2]!) };
}

// ---- Statuses, reasons and events in words ----

/** A call's status on the Calls pages. */
export const STATUS_WORDS: Record<CallStatus, string> = {
  initiated: 'Waiting',
  dialing: 'Dialling',
  in_progress: 'In progress',
  completed: 'Completed',
  failed: 'Failed',
};

/** A call's failure reason on the Calls pages. */
export const REASON_WORDS: Record<FailureReason, string> = {
  busy: 'Busy',
  no_answer: 'No answer',
  rejected: 'Rejected',
  provider_error: 'Provider error',
  expired: 'Expired (still waiting when its time ran out)',
  canceled: 'Canceled',
  voicemail: 'Reached voicemail',
  do_not_call: 'On the do-not-call list',
};

/** A failure reason in the Overview's counts ("busy: 2"). */
export const OVERVIEW_REASON_WORDS: Record<FailureReason, string> = {
  busy: 'busy',
  no_answer: 'no answer',
  rejected: 'rejected',
  provider_error: 'provider error',
  expired: 'expired (waited too long)',
  canceled: 'canceled',
  voicemail: 'voicemail',
  do_not_call: 'do-not-call',
};

const SOURCE_WORDS: Record<string, string> = {
  api: 'through the API',
  dispatcher: 'by the service',
  expiry: 'by the service',
  provider: 'reported by the telephony provider',
  operator: 'by an operator',
  dashboard: 'from the dashboard',
};

/** Who moved a call (a call event's source): "by the service", "through the API". */
export function sourceWords(source: string): string {
  return SOURCE_WORDS[source] ?? `by ${source}`;
}

// ---- Cancelling a waiting call ----

/** Why a call cannot be canceled any more, on its detail view (null: it still waits, or it was canceled). */
export function cannotCancelWords(status: CallStatus, reason: FailureReason | null): string | null {
  if (status === 'dialing' || status === 'in_progress')
    return `This call is already ${status === 'dialing' ? 'being dialled' : 'in progress'}: it can no longer be canceled.`;
  if (status === 'completed' || (status === 'failed' && reason !== 'canceled'))
    return 'This call has ended: only a call that is still waiting can be canceled.';
  return null;
}

/** What cancelling one call did (its detail view's notice). */
export function cancelNotice(
  result: 'canceled' | 'already_canceled' | 'too_late' | 'not_found',
  status: CallStatus | null,
): { kind: 'ok' | 'error'; text: string } {
  switch (result) {
    case 'canceled':
      return {
        kind: 'ok',
        text: 'The call is canceled: it will not be dialled. It ended failed (canceled), and call.failed is sent to the webhook.',
      };
    case 'already_canceled':
      return { kind: 'ok', text: 'This call was already canceled.' };
    default:
      return {
        kind: 'error',
        text:
          status === 'dialing' || status === 'in_progress'
            ? 'Not canceled: the call is already being dialled, so it can no longer be canceled.'
            : 'Not canceled: the call has already ended.',
      };
  }
}

const calls = (n: number) => (n === 1 ? '1 call' : `${n} calls`);

/** What "Cancel selected calls" did, on the Calls list. */
export function cancelManyNotice(counts: { canceled: number; already: number; tooLate: number }): {
  kind: 'ok' | 'error';
  text: string;
} {
  const { canceled, already, tooLate } = counts;
  if (canceled + already + tooLate === 0)
    return { kind: 'error', text: 'No call was selected: tick the waiting calls to cancel, then press the button.' };
  const parts = [
    ...(canceled > 0 ? [`${calls(canceled)} canceled (they will not be dialled).`] : []),
    ...(already > 0 ? [`${calls(already)} had already been canceled.`] : []),
    ...(tooLate > 0
      ? [`Not canceled: ${calls(tooLate)} already being dialled or ended, which can no longer be canceled.`]
      : []),
  ];
  return { kind: tooLate > 0 ? 'error' : 'ok', text: parts.join(' ') };
}

/** A delivery's status as a person reads it ("call.failed delivered", not "call.failed succeeded"); unknown ones as stored. */
const DELIVERY_STATUS_WORDS: Record<string, string> = {
  pending: 'pending',
  succeeded: 'delivered',
  failed: 'failed',
  held: 'held',
};

export function deliveryStatusWords(status: string): string {
  return DELIVERY_STATUS_WORDS[status] ?? status;
}

/** Why an endpoint is disabled, its times written as every page writes them ("answered 410 Gone at 2026-11-23 10:42:07 UTC"). */
export function disabledReasonWords(reason: string | null): string | null {
  return reason && withShownTimes(reason);
}

/** Who made an audit entry. */
export function actorWords(kind: 'user' | 'operator' | 'service', email: string | null): string {
  if (kind === 'user') return email ?? 'a deleted user';
  return kind === 'operator' ? 'operator (callctl)' : 'the service';
}

// ---- The webhook endpoint and the default agent, in the tenant's words (no environment variables or operator
// commands: src/admin's words name callctl, an operator's tool) ----

/** Said when a default agent without a phone number is chosen (allowed: the number may come later). */
export const NO_PHONE_DEFAULT = (name: string) =>
  `${name} is the default agent now, but it has no phone number: every trigger without agent_id gets 400 "Agent has no phone number assigned" until it has one.`;

/** Resending while the endpoint is off, or without one. */
export const ENDPOINT_DISABLED = (reason: string | null) =>
  `The webhook endpoint is disabled (${disabledReasonWords(reason) ?? 'switched off'}): enable it again on the API & Webhooks page first, then resend.`;
export const NO_ENDPOINT = 'There is no webhook endpoint: set a URL first.';

/** "mon-fri 09:00-17:00", and "(into the next day)" when it ends after midnight. */
export function windowWords(stored: unknown): string[] {
  try {
    const windows = callingWindowsSchemaCheck(stored);
    if (windows.length === 0) return ['Always open (no window)'];
    return windows.map((w) => `${formatCallingWindow(w)}${w.end <= w.start ? ' (into the next day)' : ''}`);
  } catch (error) {
    if (error instanceof CallingWindowError) return ['Unreadable (edit to set again)'];
    throw error;
  }
}

export const POLICY_WORDS = { queue: 'Queue until the window opens', reject: 'Reject the trigger' } as const;

// ---- The Calls list: a call's status as one badge with its reason ----

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

/** A time short enough for a badge, in the call's zone: "26 Nov, 09:00 America/New_York", else "2026-11-26 09:00 UTC". */
export function formatShortIn(at: Date, zone: string | null): string {
  const local = zone && zone !== 'UTC' ? shortLocal(at, zone) : null;
  return local ? `${local} ${zone}` : formatMinute(at);
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
  const at = (d: Date) => formatShortIn(d, call.timezone);
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
): { text: string; title: string | null } | null {
  const live = (LIVE_STATUSES as readonly CallStatus[]).includes(call.status);
  const current = live ? call.attempt : dialled;
  const of = allowed === null ? null : Math.max(allowed, current);
  if (current < 1 || (of ?? current) < 2) return null;
  const ended = outcomes.map((o) => ATTEMPT_OUTCOME_SHORT_WORDS[o.outcome] ?? o.outcome).join(', ');
  const times = outcomes.map(
    (o) =>
      `Attempt ${o.attempt}: ${ATTEMPT_OUTCOME_SHORT_WORDS[o.outcome] ?? o.outcome}, ${formatTimeIn(new Date(o.at), call.timezone)}`,
  );
  return {
    text: `Attempt ${current}${of === null ? '' : ` of ${of}`}${ended ? `: ${ended}` : ''}`,
    title: times.length ? times.join('; ') : null,
  };
}
