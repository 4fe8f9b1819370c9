// Logs: pino JSON with the request id on every request line, one line per request with route, status and latency,
// and never a key, a webhook secret or a metadata value, whatever the request did.
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import { loadConfig } from '../../src/config.js';
import { loggerOptions } from '../../src/logger.js';
import { freshDatabase, testSecretsKey } from '../helpers/database.js';
import { json, type LogLine } from '../helpers/json.js';
import { createTenant, keyWithTypo } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/receiver.js';
import { trigger } from '../helpers/trigger.js';

describe('logs', () => {
  it('carry request ids and outcomes, and no key, secret or metadata value', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    const { url } = await freshDatabase();
    const config = loadConfig({
      DATABASE_URL: url,
      DATA_DIR: '.data/test',
      SECRETS_KEY: testSecretsKey(),
      LOG_LEVEL: 'debug',
      DISPATCH_ENABLED: 'true',
      WEBHOOK_DELIVERY_ENABLED: 'true',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      SIMULATED_RING_MS: '10',
      SIMULATED_TALK_MS: '10',
    });
    const app = await buildApp({
      config,
      databaseUrl: url,
      logger: pino(loggerOptions('debug') as pino.LoggerOptions, sink),
    });
    try {
      const tenant = await createTenant(app.storage);
      const receiver = await startReceiver();
      const { secret } = await setWebhook(app.storage, tenant.accountId, receiver.url, {
        allowPrivate: true,
        now: app.now(),
      });
      const metadataValue = 'do-not-log-this-7f3a';

      const ok = await trigger(
        app,
        tenant.key,
        { phone_number: '+14155552671', metadata: { crm: metadataValue } },
        { 'x-request-id': 'req-visible-1' },
      );
      expect(ok.statusCode).toBe(200);
      await trigger(app, tenant.key, { phone_number: 'bad', metadata: { crm: metadataValue } });
      await app.inject({ method: 'POST', url: `/api/v1/calls/trigger?api_key=${tenant.key}&token=${secret}` });
      await trigger(app, keyWithTypo(tenant.key));
      await app.inject({ method: 'GET', url: `/nope/${tenant.key}` });
      app.log.info(
        { note: `a careless line with ${tenant.key} and ${secret}`, metadata: { crm: metadataValue } },
        `key ${tenant.key}`,
      );
      await receiver.waitFor(2);
      await new Promise((r) => setTimeout(r, 100));
    } finally {
      await app.close();
    }

    const text = lines.join('\n');
    expect(lines.length).toBeGreaterThan(5);
    for (const line of lines) expect(() => json<LogLine>(line)).not.toThrow();
    expect(text).not.toContain('svc_sk_');
    expect(text).not.toContain('whsec_');
    expect(text).not.toContain('do-not-log-this-7f3a');
    expect(text).not.toMatch(/authorization/i);

    const requests = lines.map((l) => json<LogLine>(l)).filter((l) => l.msg === 'request completed');
    expect(requests).toHaveLength(5);
    for (const r of requests) {
      expect(r.reqId).toBeTruthy();
      expect(typeof r.statusCode).toBe('number');
      expect(typeof r.responseTimeMs).toBe('number');
    }
    expect(requests.find((r) => r.reqId === 'req-visible-1')).toMatchObject({
      statusCode: 200,
      route: '/api/v1/calls/trigger',
      req: { method: 'POST' },
    });
    expect(requests.map((r) => r.statusCode).sort()).toEqual([200, 400, 400, 401, 404]);
  });
});
