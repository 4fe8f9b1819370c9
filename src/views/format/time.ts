// How the dashboard words times: how long a call waits and what for, durations, the forms' UTC times (the delivery
// log), and the times inside stored texts. Each moment is written by the request's ShownTimes (./shown-times.ts): in
// the user's own zone, or in UTC.
import { type CallStatus } from '../../../schemas/vocabulary.js';
import { dialWait } from '../../domain/dial-wait.js';
import type { ShownTimes } from './shown-times.js';

/** What a waiting call waits for, as format.ts words it. */
export interface WaitingCall {
  status: CallStatus;
  notBefore: Date;
  nextAttemptAt: Date | null;
  scheduledAt: Date | null;
  attempt: number;
  /** Why the calling rules hold it (calls.held_by), and their reason (the last decision record's first), if any. */
  heldBy?: string | null;
  heldReason?: string | null;
}

/**
 * What holds a waiting call the rules hold, with their reason: "Held by calling rules until … (US-FL: 8:00–20:00,
 * 07:42 now in America/New_York)", "Held: cap per number until … (3 of 3 in 24 hours)". `at` writes the moment.
 */
export function heldWords(kind: 'rules' | 'cap', until: string, reason: string | null | undefined): string {
  const lead = kind === 'cap' ? 'Held: cap per number until' : 'Held by calling rules until';
  return `${lead} ${until}${reason ? ` (${reason})` : ''}`;
}

/**
 * Why a waiting call has not been dialled, in words; null when it does not wait. In order: its next attempt, its
 * scheduled time, its calling window (which may open after either), else a free slot (it is due). The Calls list's
 * badge reads the same wait (dialWait), so both pages name the same earliest dial.
 */
export function waitingWords(call: WaitingCall, now: Date, zone: string | null, times: ShownTimes): string | null {
  const wait = dialWait(call, now);
  if (!wait) return null;
  const at = (d: Date) => times.withLocal(d, zone);
  const windowAfter = wait.thenWindow ? `; then the calling window, which opens ${at(wait.dialAt)}` : '';
  switch (wait.first) {
    case 'retry':
      return `Attempt ${call.attempt} is due ${at(wait.firstAt)}${windowAfter}`;
    case 'schedule':
      return `Scheduled for ${at(wait.firstAt)}${windowAfter}`;
    case 'window':
      return `The calling window opens ${at(wait.firstAt)}`;
    case 'rules':
    case 'cap':
      return heldWords(wait.first, at(wait.firstAt), call.heldReason);
    case 'slot':
      return call.attempt > 1 ? `Attempt ${call.attempt} waits for a free slot` : 'Waits for a free slot';
  }
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
export function withShownTimes(text: string, times: ShownTimes): string {
  return text.replace(ISO_TIME, (at) => times.time(new Date(at)));
}

// ---- Keyset cursors ("Older" carries the last row's time and id) ----
