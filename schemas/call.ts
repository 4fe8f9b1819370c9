// The public view of a call: the `data` of every webhook event and what callctl shows. One shape, one function.
import { Type, type Static, type TLiteral } from '@sinclair/typebox';
import { CALL_STATUSES, FAILURE_REASONS } from '../src/domain/call-vocabulary.js';
import type { Call } from '../src/generated/prisma/client.js';

const Timestamp = (description: string) =>
  Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description });

/** A literal union from a vocabulary tuple, literal member by member (a `.map` would widen it to string). */
function literals<const T extends readonly string[]>(values: T): { -readonly [K in keyof T]: TLiteral<T[K]> } {
  return values.map((value) => Type.Literal(value)) as { -readonly [K in keyof T]: TLiteral<T[K]> };
}

export const CallStatusSchema = Type.Union(literals(CALL_STATUSES), {
  description: 'initiated -> dialing -> in_progress -> completed, or failed from any non-terminal status',
});
export const FailureReasonSchema = Type.Union([...literals(FAILURE_REASONS), Type.Null()], {
  description: 'Why the call failed; null unless status is failed',
});

export const Metadata = Type.Record(
  Type.String(),
  Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]),
  {
    description: 'Arbitrary key-value pairs given at trigger time, unchanged',
  },
);

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
  },
  { $id: 'CallData', additionalProperties: false, description: 'A call as webhooks and operators see it' },
);
export type CallData = Static<typeof CallData>;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function callView(call: Call): CallData {
  return {
    call_id: call.id,
    status: call.status,
    agent_id: call.agentId,
    phone_number: call.phoneNumber,
    name: call.name,
    email: call.email,
    metadata: (call.metadata ?? {}) as CallData['metadata'],
    created_at: call.createdAt.toISOString(),
    started_at: iso(call.startedAt),
    answered_at: iso(call.answeredAt),
    ended_at: iso(call.endedAt),
    duration_seconds: call.durationSeconds,
    failure_reason: call.failureReason,
  };
}
