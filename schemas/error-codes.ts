// The one table of coded errors: each code's HTTP status and exact message. A leaf (it imports nothing), so the
// schemas (OpenAPI examples, validation codes), src/errors.ts (AppError, which the errors plugin answers with) and the
// tests read the same table.

export const ERRORS = {
  HTTPS_REQUIRED: { status: 400, message: 'HTTPS is required' },
  KEY_IN_URL: { status: 400, message: 'API keys must be sent in the Authorization header' },
  INVALID_API_KEY: { status: 401, message: 'Invalid API key' },
  API_ACCESS_DISABLED: { status: 403, message: 'API access is disabled' },
  PLAN_REQUIRED: { status: 403, message: 'API access requires the agency plan' },
  AGENT_FORBIDDEN: { status: 403, message: 'API key does not have access to this agent' },
  INVALID_CONTEXT_TOKEN: { status: 401, message: 'Invalid context token' },
  RESULT_ALREADY_DELIVERED: { status: 409, message: 'Result already delivered' },
  TWILIO_SIGNATURE_INVALID: { status: 403, message: 'Invalid Twilio signature' },
  RATE_LIMITED: { status: 429, message: 'Rate limit exceeded. Retry after {seconds} seconds.' },
  TOO_MANY_WAITING: { status: 429, message: 'Too many calls waiting. Retry after {seconds} seconds.' },
  TOO_MANY_FAILED_AUTH: {
    status: 429,
    message: 'Too many failed authentication attempts. Retry after {seconds} seconds.',
  },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, message: 'Content-Type must be application/json' },
  BODY_TOO_LARGE: { status: 413, message: 'Request body must not exceed {limit} bytes' },
  MALFORMED_JSON: {
    status: 400,
    message: 'Request body is not valid JSON, or contains a forbidden __proto__ or constructor.prototype key',
  },
  BODY_NOT_OBJECT: { status: 400, message: 'Request body must be a JSON object' },
  VALIDATION: { status: 400, message: '{detail}' },
  INVALID_PHONE_NUMBER: { status: 400, message: 'Invalid phone number format' },
  AGENT_NOT_FOUND: { status: 400, message: 'Agent not found' },
  NO_DEFAULT_AGENT: { status: 400, message: 'No agent specified and no default agent configured' },
  AGENT_HAS_NO_PHONE: { status: 400, message: 'Agent has no phone number assigned' },
  CONSENT_REQUIRED: { status: 400, message: 'Consent is required for this agent' },
  OUTSIDE_CALLING_WINDOW: { status: 400, message: "Outside the agent's calling window" },
  OUTSIDE_PERMITTED_HOURS: { status: 400, message: 'Outside the permitted calling hours for this number' },
  DO_NOT_CALL: { status: 400, message: 'Phone number is on the do-not-call list' },
  IDEMPOTENCY_KEY_INVALID: { status: 400, message: 'Idempotency-Key must be 1 to 255 printable ASCII characters' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, message: 'Idempotency-Key was already used with a different request body' },
  IDEMPOTENCY_IN_FLIGHT: { status: 409, message: 'A request with this Idempotency-Key is still being processed' },
  NOT_FOUND: { status: 404, message: 'Route {method} {path} not found' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'Method {method} not allowed on {path}' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'Service temporarily unavailable' },
  INTERNAL: { status: 500, message: 'Internal server error' },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

function fill(template: string, params: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => String(params[name] ?? `{${name}}`));
}

/** The message of a code, filled in; used by OpenAPI examples and tests so they cannot drift. */
export function errorMessage(code: ErrorCode, params: Record<string, string | number> = {}): string {
  return fill(ERRORS[code].message, params);
}
