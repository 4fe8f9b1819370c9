// Webhook event payloads: call.started, call.completed, call.failed. `data` is the call, metadata included.
import { Type, type Static } from '@sinclair/typebox';
import { CallData } from './call.js';

const event = (type: string, description: string) =>
  Type.Object(
    {
      type: Type.Literal(type, { description: 'Event type' }),
      timestamp: Type.String({ format: 'date-time', description: 'When the event happened' }),
      data: CallData,
    },
    { $id: `Event_${type.replace('.', '_')}`, additionalProperties: false, description },
  );

export const CallStartedEvent = event('call.started', 'Dialling began');
export const CallCompletedEvent = event('call.completed', 'The call was answered and has ended');
export const CallFailedEvent = event('call.failed', 'The call ended without completing; data.failure_reason says why');
export const WebhookEvent = Type.Union([CallStartedEvent, CallCompletedEvent, CallFailedEvent], {
  $id: 'WebhookEvent',
});
export type WebhookEvent = Static<typeof WebhookEvent>;
