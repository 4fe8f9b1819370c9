// What the published contract holds beside the routes: the shared components, the webhook events as OpenAPI
// webhooks, and the clean-up of the document @fastify/swagger generates (private keywords out, inlined copies of a
// component made $refs, the exact error messages as examples). Used by plugins/openapi.ts and by `npm run openapi`.
import { ErrorResponse } from '../../schemas/error.js';
import { TRIGGER_ERROR_EXAMPLES } from '../../schemas/responses.js';
import { CallData } from '../../schemas/call.js';
import { TriggerBody, TriggerResponse } from '../../schemas/trigger.js';
import { CallCompletedEvent, CallFailedEvent, CallStartedEvent } from '../../schemas/webhook.js';
import { stableStringify } from '../domain/stable-json.js';

export const OPENAPI_PATH = '/api/v1/openapi.json';
export const SHARED_SCHEMAS = [
  ErrorResponse,
  CallData,
  TriggerBody,
  TriggerResponse,
  CallStartedEvent,
  CallCompletedEvent,
  CallFailedEvent,
];

const WEBHOOK_HEADERS = [
  ['webhook-id', 'Identifies the event; the same on every retry of it (use it to drop duplicates)'],
  ['webhook-timestamp', 'Seconds since the epoch when this attempt was signed'],
  [
    'webhook-signature',
    'v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>"> keyed with the whsec_ secret',
  ],
] as const;

export function webhook(event: { $id?: string; description?: string }, operationId: string, summary: string) {
  return {
    post: {
      operationId,
      summary,
      description: `${event.description}. Delivered per Standard Webhooks, at least once; answer 2xx within 15 s.`,
      parameters: WEBHOOK_HEADERS.map(([name, description]) => ({
        name,
        in: 'header',
        required: true,
        description,
        schema: { type: 'string' },
      })),
      requestBody: {
        required: true,
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${event.$id}` } } },
      },
      responses: {
        '2XX': { description: 'Received. Anything else is retried (410 Gone disables the endpoint).' },
      },
    },
  };
}

/** Our validation-only keywords (and, below the top, $ids) are not part of the published contract. */
const PRIVATE_KEYWORDS = new Set(['errorCode', 'keyErrorMessage']);

export function withoutPrivateKeywords(value: unknown, dropNestedIds = false, top = true): unknown {
  if (Array.isArray(value)) return value.map((v) => withoutPrivateKeywords(v, dropNestedIds, false));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !PRIVATE_KEYWORDS.has(k) && !(dropNestedIds && !top && k === '$id'))
      .map(([k, v]) => [k, withoutPrivateKeywords(v, dropNestedIds, false)]),
  );
}

/**
 * A schema written out in full where it is one of the published components becomes a $ref to it: @fastify/swagger
 * inlines a route's body and a nested TypeBox schema (the events' data), which left TriggerRequest and CallData as
 * unused copies. Compared without $id and key order, so only the very same schema is replaced.
 */
export function referenceComponents(
  doc: { components?: { schemas?: Record<string, unknown> } } & Record<string, unknown>,
) {
  const byShape = new Map<string, string>();
  for (const [name, schema] of Object.entries(doc.components?.schemas ?? {}))
    byShape.set(stableStringify(withoutId(schema)), name);
  const visit = (value: unknown, isComponent: boolean): unknown => {
    if (Array.isArray(value)) return value.map((v) => visit(v, false));
    if (value === null || typeof value !== 'object') return value;
    const name = isComponent ? undefined : byShape.get(stableStringify(withoutId(value)));
    if (name) return { $ref: `#/components/schemas/${name}` };
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, visit(v, false)]));
  };
  const schemas = doc.components?.schemas ?? {};
  const components = {
    ...doc.components,
    schemas: Object.fromEntries(Object.entries(schemas).map(([name, schema]) => [name, visit(schema, true)])),
  };
  return { ...(visit({ ...doc, components: undefined }, false) as object), components } as typeof doc;
}

function withoutId(schema: unknown): unknown {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const rest = { ...schema } as Record<string, unknown>;
  delete rest.$id;
  return rest;
}

/** Adds the exact error messages as examples of each response (a $ref'd schema cannot carry them itself). */
export function publishable(document: Record<string, unknown>) {
  const doc = referenceComponents(withoutPrivateKeywords(document) as Record<string, unknown>) as {
    paths?: Record<
      string,
      Record<
        string,
        { operationId?: string; responses?: Record<string, { content?: Record<string, { examples?: unknown }> }> }
      >
    >;
  };
  const trigger = doc.paths?.['/api/v1/calls/trigger']?.post;
  for (const [status, examples] of Object.entries(TRIGGER_ERROR_EXAMPLES)) {
    const media = trigger?.responses?.[status]?.content?.['application/json'];
    if (media) media.examples = examples;
  }
  return doc;
}
