// The webhook endpoint, the default agent and calling windows in the tenant's words (no environment variables or
// operator commands: src/admin's words name callctl, an operator's tool).
import { callingWindowsSchemaCheck, CallingWindowError, formatCallingWindow } from '../../domain/calling-window.js';
import { disabledReasonWords } from './notices.js';
import type { ShownTimes } from './shown-times.js';

/** Said when a default agent without a phone number is chosen (allowed: the number may come later). */
export const NO_PHONE_DEFAULT = (name: string) =>
  `${name} is the default agent now, but it has no phone number: every trigger without agent_id gets 400 "Agent has no phone number assigned" until it has one.`;

/** Resending while the endpoint is off, or without one. */
export const ENDPOINT_DISABLED = (reason: string | null, times: ShownTimes) =>
  `The webhook endpoint is disabled (${disabledReasonWords(reason, times) ?? 'switched off'}): enable it again on the API & Webhooks page first, then resend.`;
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
