// Every failed webhook attempt and every endpoint switched off by a 410 is a warning an operator can act on:
// account, endpoint and delivery ids, the status or the error, what happens next; never the secret or the body.
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp, type App } from '../../src/app.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import { applyCallUpdate } from '../../src/calls/transition.js';
import { loadConfig } from '../../src/config.js';
import { loggerOptions } from '../../src/logger.js';
import { freshDatabase, testSecretsKey } from '../helpers/database.js';
import { logLines, type LogLine } from '../helpers/json.js';
import { match } from '../helpers/matchers.js';
import { createTenant } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/receiver.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { prismaOf } from '../helpers/app.js';
import { forceEndpoint } from '../helpers/seed.js';

const apps: App[] = [];
afterAll(async () => {
  for (const app of apps.splice(0)) await app.close();
});

describe('webhook failure logs', () => {
  it('warn on each failed attempt (status or error) and on an endpoint disabled by 410, without secret or body', async () => {
    const lines: LogLine[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(...logLines(chunk.toString()));
        done();
      },
    });
    const { url } = await freshDatabase();
    const clock = { now: new Date('2054-12-01T10:00:00Z') };
    const config = loadConfig({
      DATABASE_URL: url,
      DATA_DIR: '.data/test',
      SECRETS_KEY: testSecretsKey(),
      LOG_LEVEL: 'info',
      DISPATCH_ENABLED: 'false',
      WEBHOOK_DELIVERY_ENABLED: 'true',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    });
    const app = await buildApp({
      config,
      databaseUrl: url,
      clock: () => clock.now,
      logger: pino(loggerOptions('info') as pino.LoggerOptions, sink),
      jobs: { webhooks: { pollMs: 3_600_000, random: () => 0.5 } },
    });
    apps.push(app);
    const tenant = await createTenant(app.storage);
    const receiver = await startReceiver();
    const { secret } = await setWebhook(app.storage, tenant.accountId, receiver.url, {
      allowPrivate: true,
      now: app.now(),
    });
    const endpoint = await prismaOf(app).webhookEndpoint.findUniqueOrThrow({ where: { accountId: tenant.accountId } });
    const metadataValue = 'body-must-not-be-logged-41';
    const event = async () => {
      const call_id = callIdOf(
        await trigger(app, tenant.key, { phone_number: '+14155552671', metadata: { crm: metadataValue } }),
      );
      await applyCallUpdate(
        app.storage,
        call_id,
        { kind: 'failed', reason: 'canceled' },
        { now: clock.now, source: 'operator' },
      );
      return prismaOf(app).webhookDelivery.findFirstOrThrow({ where: { callId: call_id } });
    };
    const warnings = () => lines.filter((l) => l.level === 40);

    receiver.respond = () => ({ status: 500 });
    const first = await event();
    await app.deliveryWorker!.settle();
    expect(warnings()).toEqual([
      expect.objectContaining({
        msg: 'webhook attempt failed; will retry',
        accountId: tenant.accountId,
        endpointId: endpoint.id,
        deliveryId: first.id,
        attempt: 1,
        status: 500,
        nextAttemptAt: new Date(clock.now.getTime() + 5_000).toISOString(),
      }),
    ]);

    // No answer at all: the error instead of a status.
    await forceEndpoint(prismaOf(app), { id: endpoint.id }, { url: 'http://127.0.0.1:1/hooks' });
    clock.now = new Date(clock.now.getTime() + 5_000);
    await app.deliveryWorker!.settle();
    expect(warnings()[1]).toMatchObject({
      msg: 'webhook attempt failed; will retry',
      accountId: tenant.accountId,
      deliveryId: first.id,
      attempt: 2,
      error: match.stringContaining('ECONNREFUSED'),
    });
    expect(warnings()[1]).not.toHaveProperty('status');

    await forceEndpoint(prismaOf(app), { id: endpoint.id }, { url: receiver.url });
    receiver.respond = () => ({ status: 410 });
    const gone = await event();
    await app.deliveryWorker!.settle();
    expect(warnings()[2]).toMatchObject({
      msg: match.stringMatching(/^webhook endpoint disabled: it answered 410 Gone/),
      accountId: tenant.accountId,
      endpointId: endpoint.id,
      deliveryId: gone.id,
      status: 410,
    });
    expect(warnings()).toHaveLength(3);

    const text = JSON.stringify(lines);
    expect(text).not.toContain(secret);
    expect(text).not.toContain('whsec_');
    expect(text).not.toContain(metadataValue);
  });
});
