// The voice-agent runtime's side of a call (PRODUCT.md, "The agent on the line"): an agent's hand-off settings and
// their bounds, the context a runtime fetches with its token, and the result it posts back, which every webhook event
// then carries as `result`. A leaf beside schemas/call.ts and schemas/trigger.ts.
import { Type, type Static } from '@sinclair/typebox';
import {
  DATE_TIME_PATTERN,
  METADATA_KEY,
  METADATA_KEY_MAX,
  METADATA_MAX_KEYS,
  METADATA_STRING_MAX,
} from './trigger.js';
import { FreeText, Text } from './text.js';
import { Metadata } from './metadata.js';

/** At most this many static stream parameters, and as many static SIP headers, per agent. */
export const HANDOFF_STATIC_MAX = 10;
/** A stream parameter's name: what Twilio's <Parameter> and every runtime reads as an identifier. */
export const STREAM_PARAMETER_NAME = '^[A-Za-z0-9_]{1,40}$';
/** A static SIP header's name: an `X-` header of letters, digits and hyphens (at most 40 characters in all). */
export const SIP_HEADER_NAME = '^X-[A-Za-z0-9-]{1,38}$';
/** A static value (a bot's name, a runtime's agent id): printable text, no control characters. */
export const HANDOFF_VALUE_MAX = 200;
/** A stream or SIP address. */
export const HANDOFF_URI_MAX = 255;

/** The runtime's outcome label, e.g. appointment_booked. */
export const RESULT_OUTCOME_PATTERN = '^[a-z0-9_.-]{1,64}$';
export const RESULT_SUMMARY_MAX = 4000;
export const RESULT_TRANSCRIPT_MAX_ENTRIES = 500;
export const RESULT_TRANSCRIPT_TEXT_MAX = 2000;
export const RESULT_URL_MAX = 2000;
/** The largest result body read (a full transcript is about 1 MB of JSON at most). */
export const RESULT_BODY_MAX_BYTES = 2 * 1024 * 1024;

/** How long after the call ended its context token still works, and a result is still accepted. */
export const CONTEXT_TOKEN_GRACE_MINUTES = 15;

/** The static name/value pairs of a hand-off, in order. */
export const HandoffPair = Type.Object(
  {
    name: Type.String({ description: 'Parameter or header name' }),
    value: Type.String({ maxLength: HANDOFF_VALUE_MAX, description: 'Static value' }),
  },
  { additionalProperties: false },
);
export type HandoffPair = Static<typeof HandoffPair>;

/** GET /agent-runtime/v1/calls/{call_id}: what a runtime needs to hold the conversation. */
export const RuntimeContext = Type.Object(
  {
    call_id: Type.String({ format: 'uuid', description: 'The call' }),
    agent_id: Type.String({ format: 'uuid', description: 'The agent placing it' }),
    agent_name: Type.String({ description: "The agent's name" }),
    account_id: Type.String({ format: 'uuid', description: 'The account the call belongs to' }),
    from_number: Type.String({ description: "The agent's caller ID, E.164" }),
    to_number: Type.String({ description: 'The callee, E.164' }),
    attempt: Type.Integer({ minimum: 1, description: 'The attempt this token was issued for' }),
    name: Type.Union([Type.String(), Type.Null()], { description: "The trigger's name" }),
    email: Type.Union([Type.String(), Type.Null()], { description: "The trigger's email" }),
    metadata: Metadata,
    scheduled_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: "The trigger's scheduled_at, or null",
    }),
    timezone: Type.Union([Type.String(), Type.Null()], {
      description: "The IANA zone the call's calling window was read in",
    }),
  },
  { $id: 'RuntimeContext', additionalProperties: false, description: "A call's context for the voice-agent runtime" },
);
export type RuntimeContext = Static<typeof RuntimeContext>;

const HttpsUrl = (description: string) =>
  Text({ maxLength: RESULT_URL_MAX, pattern: '^https://[^\\s]+$', description });

export const TranscriptEntry = Type.Object(
  {
    speaker: Type.Union([Type.Literal('agent'), Type.Literal('callee')], { description: 'Who spoke' }),
    text: FreeText({ minLength: 1, maxLength: RESULT_TRANSCRIPT_TEXT_MAX, description: 'What was said' }),
    at: Text({ format: 'date-time', pattern: DATE_TIME_PATTERN, description: 'When, RFC 3339' }),
  },
  { additionalProperties: false },
);
export type TranscriptEntry = Static<typeof TranscriptEntry>;

/** The fields of a result, each optional in the body the runtime posts. */
const resultFields = {
  outcome: Text({
    pattern: RESULT_OUTCOME_PATTERN,
    description: "The runtime's own label for how the call went, e.g. appointment_booked: 1-64 of a-z 0-9 _ . -",
  }),
  summary: FreeText({ maxLength: RESULT_SUMMARY_MAX, description: 'A summary of the conversation' }),
  data: Type.Record(
    Type.String({ pattern: METADATA_KEY }),
    Type.Union([FreeText({ maxLength: METADATA_STRING_MAX }), Type.Number(), Type.Boolean(), Type.Null()]),
    {
      maxProperties: METADATA_MAX_KEYS,
      additionalProperties: false,
      propertyNames: { minLength: 1, maxLength: METADATA_KEY_MAX },
      description: `Structured data the runtime extracted, under the rules of metadata: at most ${METADATA_MAX_KEYS} keys of 1-${METADATA_KEY_MAX} characters, values a string (at most ${METADATA_STRING_MAX}), number, boolean or null`,
    },
  ),
  transcript: Type.Array(TranscriptEntry, {
    maxItems: RESULT_TRANSCRIPT_MAX_ENTRIES,
    description: `The conversation, in order: at most ${RESULT_TRANSCRIPT_MAX_ENTRIES} entries`,
  }),
  transcript_url: HttpsUrl('Where the full transcript is kept (https)'),
  recording_url: HttpsUrl('Where the recording is kept (https)'),
  opt_out: Type.Boolean({
    description: "The callee asked not to be called again: the number is added to the account's do-not-call list",
  }),
};

/** POST /agent-runtime/v1/calls/{call_id}/result: every field optional. */
export const ResultBody = Type.Object(
  {
    outcome: Type.Optional(resultFields.outcome),
    summary: Type.Optional(resultFields.summary),
    data: Type.Optional(resultFields.data),
    transcript: Type.Optional(resultFields.transcript),
    transcript_url: Type.Optional(resultFields.transcript_url),
    recording_url: Type.Optional(resultFields.recording_url),
    opt_out: Type.Optional(resultFields.opt_out),
  },
  { $id: 'RuntimeResult', additionalProperties: false, description: 'What happened on the call, by the runtime' },
);
export type ResultBody = Static<typeof ResultBody>;

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

/** The result as every webhook event and the dashboard show it: each field present, null when the runtime gave none. */
export const CallResultData = Type.Object(
  {
    outcome: nullable(resultFields.outcome),
    summary: nullable(resultFields.summary),
    data: nullable(resultFields.data),
    transcript: nullable(resultFields.transcript),
    transcript_url: nullable(resultFields.transcript_url),
    recording_url: nullable(resultFields.recording_url),
    opt_out: Type.Boolean({ description: 'The callee asked not to be called again' }),
    received_at: Type.String({ format: 'date-time', description: 'When the service received it' }),
  },
  {
    additionalProperties: false,
    description: 'What the voice-agent runtime reported about the call (POST /agent-runtime/v1/calls/{call_id}/result)',
  },
);
export type CallResultData = Static<typeof CallResultData>;
