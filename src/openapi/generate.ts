// Generates the published contract from the code: the OpenAPI document (by building the app without a database)
// and standalone JSON Schemas for the request, responses and webhook events.
import { buildApp } from '../app.js';
import { loadConfig } from '../config.js';
import { ErrorResponse } from '../../schemas/error.js';
import { CallData } from '../../schemas/call.js';
import { ResultBody, RuntimeContext } from '../../schemas/agent-runtime.js';
import { TriggerBody, TriggerResponse } from '../../schemas/trigger.js';
import { CallCompletedEvent, CallFailedEvent, CallStartedEvent, WebhookEvent } from '../../schemas/webhook.js';
import { OPENAPI_PATH, withoutPrivateKeywords } from './document.js';

/** A standalone JSON Schema: our validation-only keywords and nested $ids removed, $schema declared. */
export function standalone(schema: object): object {
  return { $schema: 'http://json-schema.org/draft-07/schema#', ...(withoutPrivateKeywords(schema, true) as object) };
}

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

export const PUBLISHED_SCHEMAS = {
  TriggerRequest: TriggerBody,
  TriggerResponse,
  ErrorResponse,
  CallData,
  CallStartedEvent,
  CallCompletedEvent,
  CallFailedEvent,
  WebhookEvent,
  // The voice-agent runtime's side (docs/agent-runtime.md): not operations of the OpenAPI document.
  RuntimeContext,
  RuntimeResult: ResultBody,
};

/** Relative path -> file content. */
export async function generateContract(): Promise<Map<string, string>> {
  const config = loadConfig({
    DATABASE_URL: 'postgresql://unused@127.0.0.1:1/unused',
    DISPATCH_ENABLED: 'false',
    WEBHOOK_DELIVERY_ENABLED: 'false',
    LOG_LEVEL: 'silent',
  });
  const app = await buildApp({ config, databaseUrl: config.DATABASE_URL! });
  try {
    const document = (await app.inject(OPENAPI_PATH)).json<unknown>();
    const files = new Map<string, string>([['openapi/openapi.json', json(document)]]);
    for (const [name, schema] of Object.entries(PUBLISHED_SCHEMAS))
      files.set(`openapi/schemas/${name}.json`, json(standalone(schema)));
    return files;
  } finally {
    await app.close();
  }
}
