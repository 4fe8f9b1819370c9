// The package's entry point: createClient, its error types, and the API's types generated from openapi/openapi.json.
export {
  createClient,
  TRIGGER_PATH,
  type Client,
  type ClientOptions,
  type TriggerCallFailure,
  type TriggerCallOptions,
  type TriggerCallResult,
  type TriggerCallSuccess,
  type WebhookHeaders,
} from './client.js';
export {
  TriggerCallError,
  WebhookVerificationError,
  type TriggerCallErrorKind,
  type WebhookVerificationReason,
} from './errors.js';
export { DEFAULT_RETRY, type RetryOptions } from './retry.js';
export { verifyWebhook } from './webhooks.js';
export {
  WEBHOOK_EVENT_TYPES,
  type CallCompletedEvent,
  type CallData,
  type CallFailedEvent,
  type CallResult,
  type CallStartedEvent,
  type ErrorResponse,
  type TriggerRequest,
  type TriggerResponse,
  type WebhookEvent,
  type WebhookEventType,
} from './types.js';
export type { components, paths, webhooks } from './schema.js';
