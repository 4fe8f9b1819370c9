// The public view of a call: the `data` of every webhook event and what callctl shows (src/calls/call-view.ts maps a
// stored call to it).
import { Type, type Static, type TLiteral } from '@sinclair/typebox';
import { CallResultData } from './agent-runtime.js';
import { ComplianceRecord, Consent } from './compliance.js';
import { Metadata } from './metadata.js';
import { ANSWERED_BY, ATTEMPT_OUTCOMES, CALL_STATUSES, FAILURE_REASONS, TIMEZONE_SOURCES } from './vocabulary.js';

const Timestamp = (description: string) =>
  Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description });

/** A literal union from a vocabulary tuple, literal member by member (a `.map` would widen it to string). */
function literals<const T extends readonly string[]>(values: T): { -readonly [K in keyof T]: TLiteral<T[K]> } {
  return values.map((value) => Type.Literal(value)) as { -readonly [K in keyof T]: TLiteral<T[K]> };
}

export { Metadata };

export const CallStatusSchema = Type.Union(literals(CALL_STATUSES), {
  description: 'initiated -> dialing -> in_progress -> completed, or failed from any non-terminal status',
});
export const FailureReasonSchema = Type.Union([...literals(FAILURE_REASONS), Type.Null()], {
  description: 'Why the call failed; null unless status is failed',
});

export const AttemptOutcomeSchema = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1, description: 'The attempt, from 1' }),
    outcome: Type.Union(literals(ATTEMPT_OUTCOMES), {
      description: 'completed, or why the attempt failed',
    }),
    at: Type.String({ format: 'date-time', description: 'When the attempt ended' }),
  },
  { additionalProperties: false },
);
export type AttemptOutcomeData = Static<typeof AttemptOutcomeSchema>;

export const CallData = Type.Object(
  {
    call_id: Type.String({ description: 'Unique identifier of the call' }),
    status: CallStatusSchema,
    agent_id: Type.String({ format: 'uuid', description: 'The agent placing the call' }),
    phone_number: Type.String({ description: 'Destination, E.164' }),
    name: Type.Union([Type.String(), Type.Null()], { description: 'Caller name given at trigger time' }),
    email: Type.Union([Type.String(), Type.Null()], { description: 'Caller email given at trigger time' }),
    metadata: Metadata,
    created_at: Type.String({ format: 'date-time', description: 'When the trigger was accepted' }),
    started_at: Timestamp('When dialling began'),
    answered_at: Timestamp('When the callee answered'),
    ended_at: Timestamp('When the call ended'),
    duration_seconds: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: 'Talk time, answered to ended',
    }),
    failure_reason: FailureReasonSchema,
    attempt: Type.Integer({
      minimum: 0,
      description:
        "The attempt being made or last made, from 1; 0 when no attempt was dialled (the call ended, or waits, before its first dial). A call retried under its agent's retry policy keeps its call_id; call.started is sent once per attempt. A call that ended while it waited for a retry names the attempt it last dialled",
    }),
    attempts: Type.Integer({
      minimum: 0,
      description: 'How many attempts were dialled (0 when the call ended before its first dial)',
    }),
    attempt_outcomes: Type.Array(AttemptOutcomeSchema, {
      description: 'How each finished attempt ended, oldest first; empty until the first attempt ends',
    }),
    answered_by: Type.Union([...literals(ANSWERED_BY), Type.Null()], {
      description:
        "Answering-machine detection's verdict for the last answered attempt: human, machine or unknown; null when the agent's voicemail detection is off or nobody answered",
    }),
    voicemail_left: Type.Union([Type.Boolean(), Type.Null()], {
      description:
        'When the call ended on a machine (failure_reason voicemail): whether a message was left; otherwise null',
    }),
    scheduled_at: Timestamp('The time the trigger asked for (scheduled_at); null when it asked for none'),
    timezone: Type.Union([Type.String(), Type.Null()], {
      description: "The IANA time zone the agent's calling window is read in for this call",
    }),
    timezone_source: Type.Union([...literals(TIMEZONE_SOURCES), Type.Null()], {
      description:
        "Where timezone came from: request (the trigger's recipient_timezone), country (the number's country has one zone) or agent (the agent's zone)",
    }),
    result: Type.Union([CallResultData, Type.Null()], {
      description:
        'What the voice-agent runtime reported about the call: outcome, summary, data, transcript. The terminal event waits for it after hang-up up to AGENT_RESULT_WAIT_SECONDS (default 10); null when the runtime has reported nothing by then (a later result is kept and shown in the dashboard, never sent as a second event), and always null in call.started',
    }),
    recipient_region: Type.Union([Type.String(), Type.Null()], {
      description: "The trigger's recipient_region as the calling rules spell it (US-FL); null when it gave none",
    }),
    consent: Type.Union([Consent, Type.Null()], {
      description: "The trigger's consent record as it was given; null when it gave none",
    }),
    compliance: Type.Union([ComplianceRecord, Type.Null()], {
      description:
        "The calling rules' decision record of the current attempt: what was checked before it was dialled (or held, or refused) and the verdict; null when the agency's calling rules are off or the attempt has not been checked yet",
    }),
  },
  { $id: 'CallData', additionalProperties: false, description: 'A call as webhooks and operators see it' },
);
export type CallData = Static<typeof CallData>;
