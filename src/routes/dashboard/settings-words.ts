// How the dashboard tells a tenant about its webhook endpoint and default agent: in the tenant's words (no environment
// variables or operator commands), with times in the one format the pages use (formatTime).
import { formatTime } from './call-view.js';

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

const ISO_TIME = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z\b/g;

/** Why an endpoint is disabled, its times written as every page writes them ("answered 410 Gone at 2026-11-23 10:42:07 UTC"). */
export function disabledReasonWords(reason: string | null): string | null {
  return reason && reason.replace(ISO_TIME, (at) => formatTime(new Date(at)));
}

/** Said when a default agent without a phone number is chosen (allowed: the number may come later). */
export const NO_PHONE_DEFAULT = (name: string) =>
  `${name} is the default agent now, but it has no phone number: every trigger without agent_id gets 400 "Agent has no phone number assigned" until it has one.`;

/** Resending while the endpoint is off, or without one (src/admin's words name callctl, an operator's tool). */
export const ENDPOINT_DISABLED = (reason: string | null) =>
  `The webhook endpoint is disabled (${disabledReasonWords(reason) ?? 'switched off'}): enable it again on the API & Webhooks page first, then resend.`;
export const NO_ENDPOINT = 'There is no webhook endpoint: set a URL first.';
