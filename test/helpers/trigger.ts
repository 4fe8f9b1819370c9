// Shorthands for calling the trigger through inject().
import type { LightMyRequestResponse } from 'fastify';
import type { TriggerResponse } from '../../schemas/trigger.js';
import type { App } from '../../src/app.js';

export const TRIGGER_URL = '/api/v1/calls/trigger';

export function trigger(
  app: App,
  key: string | null,
  body: unknown = { phone_number: '+14155552671' },
  headers: Record<string, string> = {},
) {
  return app.inject({
    method: 'POST',
    url: TRIGGER_URL,
    headers: {
      'content-type': 'application/json',
      ...(key === null ? {} : { authorization: `Bearer ${key}` }),
      ...headers,
    },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** The call id in the trigger's answer (a test that needs the call to be accepted checks the status itself). */
export function callIdOf(response: LightMyRequestResponse): string {
  return response.json<TriggerResponse>().call_id;
}
