// POST /api/v1/calls/trigger: request body, success response and the headers it reads, as TypeBox schemas.
import { Type, type Static } from '@sinclair/typebox';
import { errorMessage } from '../errors.js';

export const METADATA_MAX_KEYS = 50;
export const METADATA_KEY_MAX = 40;
export const METADATA_STRING_MAX = 500;

const MetadataValue = Type.Union(
  [Type.String({ maxLength: METADATA_STRING_MAX }), Type.Number(), Type.Boolean(), Type.Null()],
  { description: `a string (at most ${METADATA_STRING_MAX} characters), number, boolean or null` },
);

export const TriggerBody = Type.Object(
  {
    phone_number: Type.String({
      pattern: '^\\+[1-9]\\d{1,14}$',
      errorMessage: errorMessage('INVALID_PHONE_NUMBER'),
      description: 'Destination number in E.164 format: "+", country code, digits; no spaces, dashes or parentheses. Not normalized.',
      examples: ['+14155552671'],
    }),
    agent_id: Type.Optional(Type.String({ format: 'uuid', description: 'Agent to use; when omitted, the default agent is used' })),
    name: Type.Optional(Type.String({ maxLength: 200, description: "Caller name, passed to the agent's prompt as context" })),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254, description: "Caller email, passed to the agent's prompt as context" })),
    metadata: Type.Optional(
      Type.Record(Type.String({ pattern: `^[\\s\\S]{1,${METADATA_KEY_MAX}}$` }), MetadataValue, {
        maxProperties: METADATA_MAX_KEYS,
        additionalProperties: false,
        // The key rule again in standard form: some tools (OpenAPI generators) do not read patternProperties.
        propertyNames: { minLength: 1, maxLength: METADATA_KEY_MAX },
        keyErrorMessage: `keys must be 1 to ${METADATA_KEY_MAX} characters`,
        description: `Arbitrary key-value pairs passed through to webhooks and call records: at most ${METADATA_MAX_KEYS} keys of 1-${METADATA_KEY_MAX} characters`,
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
    'idempotency-key': Type.Optional(Type.String({ description: 'Optional; 1 to 255 printable ASCII characters. A repeat with the same body within 24 h gets the first response again (Idempotent-Replayed: true); with another body, 422; while the first is in flight, 409.' })),
  },
  { additionalProperties: true },
);
