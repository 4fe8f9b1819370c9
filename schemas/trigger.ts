// POST /api/v1/calls/trigger: request body, success response and the headers it reads, as TypeBox schemas.
import { Type, type Static } from '@sinclair/typebox';
import { COMPLIANCE_ERRORS, Consent } from './compliance.js';
import { DATE_TIME_PATTERN, EMAIL_PATTERN, EMAIL_RULE, FreeText, NAME_TEXT, STORABLE_TEXT, Text } from './text.js';

export const METADATA_MAX_KEYS = 50;
export const METADATA_KEY_MAX = 40;
export const METADATA_STRING_MAX = 500;

/** How far ahead scheduled_at may be, and how far behind the server's clock it may be and still mean "now". */
export const SCHEDULE_MAX_DAYS_AHEAD = 30;
export const SCHEDULE_SKEW_MINUTES = 5;
export const TIMEZONE_NAME_MAX = 64;
/** The longest recipient_region read (US-FL is 5; a little room for white space around it). */
export const RECIPIENT_REGION_MAX = 10;

/** The 400s of the two fields' rules no schema can state (they depend on the clock and on the time-zone data). */
export const TRIGGER_FIELD_ERRORS = {
  scheduledAtPast: `scheduled_at must not be in the past (up to ${SCHEDULE_SKEW_MINUTES} minutes behind the server's clock is read as now)`,
  scheduledAtTooFar: `scheduled_at must be at most ${SCHEDULE_MAX_DAYS_AHEAD} days ahead`,
  unknownTimezone: 'recipient_timezone must be an IANA time zone name such as America/New_York',
  consentInFuture: COMPLIANCE_ERRORS.consentInFuture,
} as const;

// In text.ts since the consent record (schemas/compliance.ts, which this file imports) uses it too.
export { DATE_TIME_PATTERN };

const NO_NUL = 'no NUL or unpaired surrogates';

const MetadataValue = Type.Union(
  [FreeText({ maxLength: METADATA_STRING_MAX }), Type.Number(), Type.Boolean(), Type.Null()],
  { description: `a string (at most ${METADATA_STRING_MAX} characters), number, boolean or null` },
);

// Record keys are checked by TypeBox's own regex, without the u flag: a surrogate pair counts as one character here
// as it does under the u flag, so the key rule is the same for us and for a JSON Schema validator. NUL and unpaired
// surrogates in keys are refused after the schema check (validation.ts), as propertyNames states. Each UTF-16 unit
// matches one way only (a pair, a unit that starts no pair, a high surrogate without its low one): with a plain
// [\s\S] beside the pair, a key of 41 emoji can be split in exponentially many ways, all tried before it is refused
// (docs/performance.md#patterns-in-linear-time; test/routes/schema-patterns.test.ts).
export const METADATA_KEY = `^(?:[\\ud800-\\udbff][\\udc00-\\udfff]|[^\\ud800-\\udbff]|[\\ud800-\\udbff](?![\\udc00-\\udfff])){1,${METADATA_KEY_MAX}}$`;

export const TriggerBody = Type.Object(
  {
    phone_number: Text({
      pattern: '^\\+[1-9]\\d{1,14}$',
      errorCode: 'INVALID_PHONE_NUMBER',
      description:
        'Destination number in E.164 format: "+", country code, digits; no spaces, dashes or parentheses. Not normalized. ' +
        'It must also be a possible number for its country (a length the numbering plan allows, per libphonenumber): +1415555 matches the pattern and is refused. ' +
        'Either failure is 400 "Invalid phone number format".',
      examples: ['+14155552671'],
    }),
    agent_id: Type.Optional(
      Type.String({ format: 'uuid', description: 'Agent to use; when omitted, the default agent is used' }),
    ),
    name: Type.Optional(
      Text({
        maxLength: 200,
        pattern: NAME_TEXT,
        description:
          "Caller name, passed to the agent's prompt as context: at most 200 characters (Unicode code points). " +
          'Tab, line feed and carriage return are kept exactly; any other control character (C0, DEL, C1) and unpaired surrogates are refused (400 naming the field).',
      }),
    ),
    email: Type.Optional(
      Text({
        format: 'email',
        pattern: EMAIL_PATTERN,
        maxLength: 254,
        description:
          `Caller email, passed to the agent's prompt as context: at most 254 characters, ${EMAIL_RULE} (the pattern states it; ` +
          'ada@localhost, .ada@example.com, ada.@example.com and a..b@example.com are refused). Anything else is 400 "email must be a valid email address".',
      }),
    ),
    metadata: Type.Optional(
      Type.Record(Type.String({ pattern: METADATA_KEY }), MetadataValue, {
        maxProperties: METADATA_MAX_KEYS,
        additionalProperties: false,
        // The key rule again in standard form: some tools (OpenAPI generators) do not read patternProperties.
        propertyNames: { minLength: 1, maxLength: METADATA_KEY_MAX, pattern: STORABLE_TEXT },
        keyErrorMessage: `keys must be 1 to ${METADATA_KEY_MAX} characters`,
        description:
          `Arbitrary key-value pairs passed through to webhooks and call records: at most ${METADATA_MAX_KEYS} keys of 1-${METADATA_KEY_MAX} characters; ` +
          `values a string (at most ${METADATA_STRING_MAX} characters), number, boolean or null. Lengths are Unicode code points; keys and strings have ${NO_NUL}.`,
      }),
    ),
    scheduled_at: Type.Optional(
      Text({
        format: 'date-time',
        pattern: DATE_TIME_PATTERN,
        description:
          'Dial no earlier than this time: an RFC 3339 date-time with its UTC offset (Z or ±HH:MM, upper-case T and Z, no leap second). ' +
          `At most ${SCHEDULE_MAX_DAYS_AHEAD} days ahead; a time up to ${SCHEDULE_SKEW_MINUTES} minutes in the past (clock skew) means now, one further back is refused (400 naming the field). ` +
          "The call is accepted at once (status initiated) and waits; at that time the agent's calling window applies as to any waiting call, and its time to live counts from then. " +
          'An agent whose outside-window policy is reject refuses a scheduled_at outside its window (400 "Outside the agent\'s calling window").',
        examples: ['2026-12-01T09:30:00-05:00'],
      }),
    ),
    recipient_timezone: Type.Optional(
      Text({
        minLength: 1,
        maxLength: TIMEZONE_NAME_MAX,
        description:
          "The callee's IANA time zone (e.g. America/New_York). Used when the agent reads its calling windows in the recipient's zone " +
          "(window_timezone: recipient); without it that zone is the number's country's when the country has a single zone, else the agent's. " +
          "A name the server's time-zone database does not know (or a UTC offset such as +05:00) is refused (400 naming the field), whatever the agent.",
        examples: ['America/New_York'],
      }),
    ),
    recipient_region: Type.Optional(
      Text({
        minLength: 1,
        maxLength: RECIPIENT_REGION_MAX,
        description:
          'Where the callee is, if the caller knows: an ISO 3166-2 code of a US state or territory or a Canadian province or territory ' +
          '(US-FL, CA-QC; any case), or US or CA. Stored with the call (normalised, e.g. US-FL) and, when the agency has switched its calling rules on, ' +
          "checked beside the places the number's own prefix may be in: a dial happens only at a moment every one of them allows. " +
          'An unknown code is refused (400 naming the field), whether or not the rules are on.',
        examples: ['US-FL'],
      }),
    ),
    consent: Type.Optional(
      Type.Object(Consent.properties, {
        additionalProperties: false,
        description:
          "The callee's consent on record: stored with the call and in every event's payload. obtained_at must not be in the future " +
          `(up to ${SCHEDULE_SKEW_MINUTES} minutes ahead of the server's clock is read as now). ` +
          'Required (400 "Consent is required for this agent") when the agent, or its agency\'s calling rules, say so.',
      }),
    ),
  },
  { $id: 'TriggerRequest', additionalProperties: false, description: 'Trigger an outbound call' },
);
export type TriggerBody = Static<typeof TriggerBody>;

export const TriggerResponse = Type.Object(
  {
    success: Type.Literal(true, { description: 'Always true on success' }),
    call_id: Type.String({ description: 'Unique identifier of the initiated call' }),
    status: Type.Literal('initiated', { description: 'Always initiated' }),
  },
  { $id: 'TriggerResponse', additionalProperties: false, description: 'The call was accepted and durably stored' },
);
export type TriggerResponse = Static<typeof TriggerResponse>;

export const TriggerHeaders = Type.Object(
  {
    'idempotency-key': Type.Optional(
      Text({
        minLength: 1,
        maxLength: 255,
        pattern: '^[\\x21-\\x7e]+$',
        errorCode: 'IDEMPOTENCY_KEY_INVALID',
        description:
          'Optional; 1 to 255 printable ASCII characters. A repeat with the same body within 24 h gets the first response again (Idempotent-Replayed: true); with another body, 422; while the first is in flight, 409.',
      }),
    ),
  },
  { additionalProperties: true },
);
