// Response headers the API documents: rate-limit headers on every authenticated response, Retry-After on 429s and 503s,
// Idempotent-Replayed on replays.
const integer = (description: string) => ({ type: 'integer', description });
const string = (description: string) => ({ type: 'string', description });

export const RATE_LIMIT_HEADERS = {
  'x-ratelimit-limit': integer('Requests allowed per window for this API key'),
  'x-ratelimit-remaining': integer('Requests left in the current window'),
  'x-ratelimit-reset': integer('Seconds until the window resets'),
  'ratelimit-policy': string('IETF draft: "per-key";q=<limit>;w=60'),
  ratelimit: string('IETF draft: "per-key";r=<remaining>;t=<seconds to reset>'),
} as const;

export const RETRY_AFTER_HEADER = {
  'retry-after': integer('Seconds to wait before retrying; the same number as in the error message'),
} as const;

/** How long a client waits after a 503 (the database busy or unreachable): the API's and the dashboard's. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

export const UNAVAILABLE_RETRY_AFTER_HEADER = {
  'retry-after': integer(`Seconds to wait before retrying (${UNAVAILABLE_RETRY_AFTER_SECONDS})`),
} as const;

export const REPLAYED_HEADER = {
  'idempotent-replayed': string(
    '"true" when this is the stored response to an earlier request with the same Idempotency-Key',
  ),
} as const;
