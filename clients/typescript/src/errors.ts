// The client's two error types: TriggerCallError (returned by triggerCall, never thrown) and WebhookVerificationError
// (thrown by webhooks.verify).
import type { ErrorResponse } from './types.js';

/** `http`: the server answered with a non-2xx status; `network`: no answer (refused, reset, DNS, TLS, timeout). */
export type TriggerCallErrorKind = 'http' | 'network';

export interface TriggerCallErrorInit {
  kind: TriggerCallErrorKind;
  status: number | null;
  message: string;
  body: ErrorResponse | null;
  retryAfterMs: number | null;
  attempts: number;
  idempotencyKey: string;
  cause?: unknown;
}

/**
 * Why a trigger failed, after the retries it was allowed. `message` is the server's envelope `error` word for word
 * (the envelope has no separate code: `status` and `message` are what to branch on), or the network error's message.
 */
export class TriggerCallError extends Error {
  override readonly name = 'TriggerCallError';
  readonly kind: TriggerCallErrorKind;
  /** The HTTP status of the last answer; null when the last attempt got none. */
  readonly status: number | null;
  /** The error envelope as the server sent it; null for a network failure or a body that is not the envelope. */
  readonly body: ErrorResponse | null;
  /** The last answer's Retry-After in milliseconds (429 and 503), or null. */
  readonly retryAfterMs: number | null;
  /** How many requests were sent, retries included. */
  readonly attempts: number;
  /** The Idempotency-Key every attempt carried: send it again to retry later without a second call. */
  readonly idempotencyKey: string;
  /** Whether a later try may succeed unchanged (429, 503, network), as opposed to a request to fix (other 4xx). */
  readonly retryable: boolean;

  constructor(init: TriggerCallErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.kind = init.kind;
    this.status = init.status;
    this.body = init.body;
    this.retryAfterMs = init.retryAfterMs;
    this.attempts = init.attempts;
    this.idempotencyKey = init.idempotencyKey;
    this.retryable = init.kind === 'network' || init.status === 429 || init.status === 503;
  }
}

/**
 * `missing_headers`: a webhook-id, webhook-timestamp or webhook-signature header is absent; `bad_signature`: no
 * signature matches the body with this secret (a changed body or header, or another secret); `stale_timestamp`: the
 * timestamp is more than 5 minutes from now (a replay, or a skewed clock); `invalid_payload`: signed, but not one of
 * the API's events.
 */
export type WebhookVerificationReason = 'missing_headers' | 'bad_signature' | 'stale_timestamp' | 'invalid_payload';

/** A delivery that must not be trusted: answer it with a 4xx (400 or 401) and do not act on it. */
export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  readonly reason: WebhookVerificationReason;

  constructor(reason: WebhookVerificationReason, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.reason = reason;
  }
}
