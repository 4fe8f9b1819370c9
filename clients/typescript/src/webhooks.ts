// Webhook verification with the `standardwebhooks` package (the one the server signs with): the signature over the
// raw body, id and timestamp, the timestamp within 5 minutes, then the event's type.
import { Webhook, WebhookVerificationError as LibraryError } from 'standardwebhooks';
import { WebhookVerificationError } from './errors.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEvent } from './types.js';

/** Node's IncomingHttpHeaders, a fetch Headers, or a plain object of header names (any case) to values. */
export type WebhookHeaders = Headers | Record<string, string | readonly string[] | undefined>;

function plainHeaders(headers: WebhookHeaders): Record<string, string> {
  const plain: Record<string, string> = {};
  const entries = headers instanceof Headers ? headers.entries() : Object.entries(headers);
  for (const [name, value] of entries) {
    if (value === undefined) continue;
    plain[name.toLowerCase()] = typeof value === 'string' ? value : value.join(', ');
  }
  return plain;
}

/** The library's messages (standardwebhooks 1.1.1) by what they mean. */
function reasonOf(message: string): WebhookVerificationError['reason'] {
  if (message === 'Missing required headers') return 'missing_headers';
  if (message.startsWith('Message timestamp too')) return 'stale_timestamp';
  return 'bad_signature';
}

/**
 * The event of a genuine delivery. `body` must be the request body exactly as received (a string or the raw bytes:
 * parsed and serialized again, it no longer matches its signature); `secret` is the endpoint's `whsec_…` signing
 * secret. Throws WebhookVerificationError when a header is missing, the signature does not match, the timestamp is
 * more than 5 minutes away from now, or the signed body is not one of the API's events.
 */
export function verifyWebhook(body: string | Uint8Array, headers: WebhookHeaders, secret: string): WebhookEvent {
  const payload = typeof body === 'string' ? body : new TextDecoder().decode(body);
  let event: unknown;
  try {
    event = new Webhook(secret).verify(payload, plainHeaders(headers));
  } catch (cause) {
    if (cause instanceof LibraryError)
      throw new WebhookVerificationError(reasonOf(cause.message), cause.message, cause);
    // Signed (the signature matched) but not JSON.
    if (cause instanceof SyntaxError) throw new WebhookVerificationError('invalid_payload', cause.message, cause);
    throw cause;
  }
  const type = (event as { type?: unknown } | null)?.type;
  if (typeof event !== 'object' || event === null || !WEBHOOK_EVENT_TYPES.includes(type as WebhookEvent['type'])) {
    throw new WebhookVerificationError('invalid_payload', `not an event of this API: type ${JSON.stringify(type)}`);
  }
  return event as WebhookEvent;
}
