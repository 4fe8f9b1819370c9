// POST /api/v1/calls/trigger: request body, success response and the headers it reads, as TypeBox schemas.
import { Type, type Static } from '@sinclair/typebox';
import { EMAIL_PATTERN, EMAIL_RULE, FreeText, NAME_TEXT, STORABLE_TEXT, Text } from './text.js';

export const METADATA_MAX_KEYS = 50;
export const METADATA_KEY_MAX = 40;
export const METADATA_STRING_MAX = 500;

const NO_NUL = 'no NUL or unpaired surrogates';

const MetadataValue = Type.Union(
  [FreeText({ maxLength: METADATA_STRING_MAX }), Type.Number(), Type.Boolean(), Type.Null()],
  { description: `a string (at most ${METADATA_STRING_MAX} characters), number, boolean or null` },
);

// Record keys are checked by TypeBox's own regex, without the u flag: a surrogate pair counts as one character here
// as it does under the u flag, so the key rule is the same for us and for a JSON Schema validator. NUL and unpaired
// surrogates in keys are refused after the schema check (validation.ts), as propertyNames states.
const METADATA_KEY = `^(?:[\\ud800-\\udbff][\\udc00-\\udfff]|[\\s\\S]){1,${METADATA_KEY_MAX}}$`;

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
