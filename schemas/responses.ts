// Documented responses of the trigger: every status it can return, with the shared error envelope and the exact
// messages (from the one error table) as examples, and the headers each carries.
import { Type, type TSchema } from '@sinclair/typebox';
import { errorMessage, type ErrorCode } from './error-codes.js';
import { ErrorResponse } from './error.js';
import { RATE_LIMIT_HEADERS, REPLAYED_HEADER, RETRY_AFTER_HEADER, UNAVAILABLE_RETRY_AFTER_HEADER } from './headers.js';
import { TRIGGER_FIELD_ERRORS } from './trigger.js';

const envelope = (message: string) => ({ success: false, error: message });

const SAMPLE = { seconds: 30, limit: 32768, method: 'GET', path: '/api/v1/calls/trigger' };

interface Example {
  summary: string;
  value: object;
}

/** The exact messages each status can carry, as OpenAPI example objects (added to the document by the openapi plugin). */
export const TRIGGER_ERROR_EXAMPLES: Record<string, Record<string, Example>> = {};

function errorResponse(
  status: number,
  description: string,
  codes: ErrorCode[],
  headers: Record<string, object> = {},
  extra: string[] = [],
): TSchema {
  TRIGGER_ERROR_EXAMPLES[status] = Object.fromEntries([
    ...codes.map((code): [string, Example] => [code, { summary: code, value: envelope(errorMessage(code, SAMPLE)) }]),
    ...extra.map((message, i): [string, Example] => [
      `VALIDATION_${i + 1}`,
      { summary: 'VALIDATION', value: envelope(message) },
    ]),
  ]);
  return Type.Unsafe({ ...Type.Ref(ErrorResponse), description, ...(Object.keys(headers).length ? { headers } : {}) });
}

export function triggerResponses(success: TSchema) {
  return {
    200: Type.Unsafe({ ...success, headers: { ...RATE_LIMIT_HEADERS, ...REPLAYED_HEADER } }),
    400: errorResponse(
      400,
      'Bad request: HTTPS required, key in the URL, malformed or invalid body, agent selection, consent, calling window, permitted calling hours, a number on the do-not-call list',
      [
        'HTTPS_REQUIRED',
        'KEY_IN_URL',
        'MALFORMED_JSON',
        'BODY_NOT_OBJECT',
        'INVALID_PHONE_NUMBER',
        'AGENT_NOT_FOUND',
        'NO_DEFAULT_AGENT',
        'AGENT_HAS_NO_PHONE',
        'CONSENT_REQUIRED',
        'OUTSIDE_CALLING_WINDOW',
        'OUTSIDE_PERMITTED_HOURS',
        'DO_NOT_CALL',
        'IDEMPOTENCY_KEY_INVALID',
      ],
      {},
      [
        'phone_number is required',
        'name must be at most 200 characters',
        'foo is not a known field',
        'metadata keys must be 1 to 40 characters',
        TRIGGER_FIELD_ERRORS.scheduledAtPast,
        TRIGGER_FIELD_ERRORS.unknownTimezone,
        TRIGGER_FIELD_ERRORS.consentInFuture,
      ],
    ),
    401: errorResponse(401, 'Missing, malformed, unknown or revoked API key', ['INVALID_API_KEY']),
    403: errorResponse(403, 'API access disabled, plan without API access, or an agent of another account', [
      'API_ACCESS_DISABLED',
      'PLAN_REQUIRED',
      'AGENT_FORBIDDEN',
    ]),
    409: errorResponse(
      409,
      'A request with the same Idempotency-Key is still being processed',
      ['IDEMPOTENCY_IN_FLIGHT'],
      RATE_LIMIT_HEADERS,
    ),
    413: errorResponse(413, 'Body larger than 32 KiB', ['BODY_TOO_LARGE']),
    415: errorResponse(415, 'Content-Type is not application/json', ['UNSUPPORTED_MEDIA_TYPE']),
    422: errorResponse(
      422,
      'The Idempotency-Key was used with a different body',
      ['IDEMPOTENCY_KEY_REUSED'],
      RATE_LIMIT_HEADERS,
    ),
    429: errorResponse(
      429,
      'Rate limited (per key), too many failed authentications (per client IP), or too many calls waiting',
      ['RATE_LIMITED', 'TOO_MANY_FAILED_AUTH', 'TOO_MANY_WAITING'],
      RETRY_AFTER_HEADER,
    ),
    500: errorResponse(500, 'Internal error; details are logged, never returned', ['INTERNAL']),
    503: errorResponse(
      503,
      'The database is busy or cannot be reached',
      ['SERVICE_UNAVAILABLE'],
      UNAVAILABLE_RETRY_AFTER_HEADER,
    ),
  };
}
