// What a waiting call waits for and when it can first be dialled, from its stored times: the one reading behind the
// Calls list's badge and the call page's "Waiting" line, so that the two never name different times.
import type { CallStatus } from '../../schemas/vocabulary.js';

/** What the reading needs of a call. */
export interface WaitingTimes {
  status: CallStatus;
  /** The earliest dial the calling window allows: set when the call is accepted, when its agent's windows change and
   * when the dispatcher finds the window shut (src/calls/accept-call.ts, src/dispatch/claim-plan.ts). */
  notBefore: Date;
  nextAttemptAt: Date | null;
  scheduledAt: Date | null;
  /** Why the calling rules hold it (calls.held_by: 'calling_rules' or 'cap'; null or absent: they do not). While
   * they hold it, notBefore is the moment they next allow a dial (src/dispatch writes both). */
  heldBy?: string | null;
}

/**
 * Why a waiting call is not dialled yet, in the order it waits: its next attempt (`retry`) or its scheduled time
 * (`schedule`), each followed by the calling window when the window opens after it (`thenWindow`), or the window
 * alone (`window`); `rules` or `cap` when the calling rules hold it (held_by) until a moment after all of those;
 * `slot` when nothing holds it back but a free slot. `dialAt` is the earliest dial all of them allow.
 */
export type DialWait =
  | { first: 'retry' | 'schedule' | 'window'; firstAt: Date; thenWindow: boolean; dialAt: Date }
  | { first: 'rules' | 'cap'; firstAt: Date; thenWindow: false; dialAt: Date }
  | { first: 'slot'; firstAt: null; thenWindow: false; dialAt: null };

/** A waiting call's wait, or null when the call does not wait (it is dialling, talking or has ended). */
export function dialWait(call: WaitingTimes, now: Date): DialWait | null {
  if (call.status !== 'initiated') return null;
  const later = (d: Date | null): d is Date => d !== null && d.getTime() > now.getTime();
  const first = later(call.nextAttemptAt)
    ? { first: 'retry' as const, firstAt: call.nextAttemptAt }
    : later(call.scheduledAt)
      ? { first: 'schedule' as const, firstAt: call.scheduledAt }
      : null;
  // Held by the rules until after its schedule or next attempt (or with neither): the rules decide its first dial.
  if (call.heldBy && later(call.notBefore) && (!first || call.notBefore.getTime() > first.firstAt.getTime()))
    return {
      first: call.heldBy === 'cap' ? 'cap' : 'rules',
      firstAt: call.notBefore,
      thenWindow: false,
      dialAt: call.notBefore,
    };
  if (first) {
    const thenWindow = call.notBefore.getTime() > first.firstAt.getTime();
    return { ...first, thenWindow, dialAt: thenWindow ? call.notBefore : first.firstAt };
  }
  if (later(call.notBefore))
    return { first: 'window', firstAt: call.notBefore, thenWindow: false, dialAt: call.notBefore };
  return { first: 'slot', firstAt: null, thenWindow: false, dialAt: null };
}
