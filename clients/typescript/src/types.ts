// The API's shapes, named: each one is an alias of the type openapi-typescript generated from openapi/openapi.json
// (schema.ts), so a change of the contract changes them.
import type { components } from './schema.js';

type Schemas = components['schemas'];

/** The body of POST /api/v1/calls/trigger. */
export type TriggerRequest = Schemas['TriggerRequest'];
/** Its 200 answer: the call is durably stored and will end in exactly one terminal webhook event. */
export type TriggerResponse = Schemas['TriggerResponse'];
/** The envelope of every non-2xx answer: `{ success: false, error: "<message>" }`. */
export type ErrorResponse = Schemas['ErrorResponse'];
/** A call as webhooks see it, the agent runtime's `result` included (null until and unless it reports). */
export type CallData = Schemas['CallData'];
export type CallResult = NonNullable<CallData['result']>;

export type CallStartedEvent = Schemas['Event_call_started'];
export type CallCompletedEvent = Schemas['Event_call_completed'];
export type CallFailedEvent = Schemas['Event_call_failed'];
/** What a webhook delivery carries; `type` tells the three apart. */
export type WebhookEvent = CallStartedEvent | CallCompletedEvent | CallFailedEvent;
export type WebhookEventType = WebhookEvent['type'];

/** The event types, in the order a call goes through them. */
export const WEBHOOK_EVENT_TYPES = [
  'call.started',
  'call.completed',
  'call.failed',
] as const satisfies readonly WebhookEventType[];
