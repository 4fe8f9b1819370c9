// Webhook event payloads: call.started, call.completed, call.failed. `data` is the call, metadata included; each
// event schema carries its examples (schemas/webhook-examples.ts).
import { Type, type Static } from '@sinclair/typebox';
import { CallData } from './call.js';
import {
  CALL_COMPLETED_EXAMPLE,
  CALL_FAILED_BEFORE_DIAL_EXAMPLE,
  CALL_FAILED_EXAMPLE,
  CALL_STARTED_EXAMPLE,
  type Example,
} from './webhook-examples.js';

const event = <T extends string>(type: T, description: string, examples: Example<T>[]) =>
  Type.Object(
    {
      type: Type.Literal(type, { description: 'Event type' }),
      timestamp: Type.String({ format: 'date-time', description: 'When the event happened' }),
      data: CallData,
    },
    { $id: `Event_${type.replace('.', '_')}`, additionalProperties: false, description, examples },
  );

export const CallStartedEvent = event('call.started', 'Dialling began', [CALL_STARTED_EXAMPLE]);
export const CallCompletedEvent = event('call.completed', 'The call was answered and has ended', [
  CALL_COMPLETED_EXAMPLE,
]);
export const CallFailedEvent = event(
  'call.failed',
  'The call ended without completing; data.failure_reason says why (attempt and attempts are 0 when it ended before its first dial)',
  [CALL_FAILED_EXAMPLE, CALL_FAILED_BEFORE_DIAL_EXAMPLE],
);
export const WebhookEvent = Type.Union([CallStartedEvent, CallCompletedEvent, CallFailedEvent], {
  $id: 'WebhookEvent',
});
export type WebhookEvent = Static<typeof WebhookEvent>;
