// The app with the dispatcher and the webhook worker on, one tenant and its webhook to a receiver on 127.0.0.1: the
// setup of every test that follows a trigger to the events a customer's endpoint gets.
import type { App } from '../../src/app.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import { buildTestApp } from './app.js';
import { createTenant, type Tenant } from './fixtures.js';
import { startReceiver, type Receiver } from './receiver.js';

export interface WebhookApp {
  app: App;
  tenant: Tenant;
  receiver: Receiver;
  /** The endpoint's signing secret. */
  secret: string;
}

/** Simulated calls ring 20 ms and talk `talkMs`; `env` adds to (or overrides) those settings. */
export async function buildWebhookApp(talkMs: number, env: Record<string, string> = {}): Promise<WebhookApp> {
  const { app } = await buildTestApp({
    env: {
      DISPATCH_ENABLED: 'true',
      WEBHOOK_DELIVERY_ENABLED: 'true',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      SIMULATED_RING_MS: '20',
      SIMULATED_TALK_MS: String(talkMs),
      ...env,
    },
  });
  const tenant = await createTenant(app.storage);
  const receiver = await startReceiver();
  const { secret } = await setWebhook(app.storage, tenant.accountId, receiver.url, {
    allowPrivate: true,
    now: app.now(),
  });
  return { app, tenant, receiver, secret };
}
