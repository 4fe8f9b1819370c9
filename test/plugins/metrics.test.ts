// Prometheus metrics (issue 6, point 3): the series /metrics exposes on the internal listener after real requests, dispatches, webhook attempts and Redis outages.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import { buildInternalApp } from '../../src/internal/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant } from '../helpers/fixtures.js';
import type { ErrorResponse } from '../helpers/json.js';
import { startReceiver } from '../helpers/receiver.js';
import { freePort } from '../../src/storage/free-port.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { waitFor } from '../helpers/wait.js';

const TRIGGER = '/api/v1/calls/trigger';

interface Scrape {
  text: string;
  /** Sample lines by their name and labels exactly as exposed, e.g. `oct_calls{status="initiated"}`. */
  samples: Map<string, number>;
}

async function scrape(app: App): Promise<Scrape> {
  const internal = await buildInternalApp(app, app.log);
  try {
    const response = await internal.inject({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const samples = new Map<string, number>();
    for (const line of response.body.split('\n')) {
      if (line === '' || line.startsWith('#')) continue;
      const at = line.lastIndexOf(' ');
      samples.set(line.slice(0, at), Number(line.slice(at + 1)));
    }
    return { text: response.body, samples };
  } finally {
    await internal.close();
  }
}

describe('metrics', () => {
  it('counts requests by route pattern, trigger outcomes by code, and live calls by status', async () => {
    const { app } = await buildTestApp();
    const tenant = await createTenant(app.storage);

    const idempotencyKey = { 'idempotency-key': 'metrics-1' };
    expect((await trigger(app, tenant.key, undefined, idempotencyKey)).statusCode).toBe(200);
    const replay = await trigger(app, tenant.key, undefined, idempotencyKey);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect((await trigger(app, 'svc_sk_not-a-real-key')).statusCode).toBe(401);
    expect((await trigger(app, tenant.key, { phone_number: '+15551234' })).statusCode).toBe(400);
    const notFound = await app.inject({ method: 'GET', url: '/api/v1/no-such-route-4f1c?token=svc_sk_secret' });
    expect(notFound.statusCode).toBe(404);

    const { text, samples } = await scrape(app);
    const http = (status: number, route = TRIGGER, method = 'POST') =>
      `{route="${route}",method="${method}",status="${status}"}`;
    expect(samples.get(`oct_http_requests_total${http(200)}`)).toBe(2);
    expect(samples.get(`oct_http_requests_total${http(401)}`)).toBe(1);
    expect(samples.get(`oct_http_requests_total${http(400)}`)).toBe(1);
    expect(samples.get(`oct_http_requests_total${http(404, 'unmatched', 'GET')}`)).toBe(1);
    expect(samples.get(`oct_http_request_duration_seconds_count${http(200)}`)).toBe(2);
    expect(
      samples.get(`oct_http_request_duration_seconds_bucket{le="+Inf",route="${TRIGGER}",method="POST",status="401"}`),
    ).toBe(1);
    expect([...samples.keys()].filter((k) => k.startsWith('oct_http_requests_total')).sort()).toHaveLength(4);

    expect(samples.get('oct_trigger_outcomes_total{outcome="accepted"}')).toBe(1);
    expect(samples.get('oct_trigger_outcomes_total{outcome="replayed"}')).toBe(1);
    expect(samples.get('oct_trigger_outcomes_total{outcome="INVALID_API_KEY"}')).toBe(1);
    expect(samples.get('oct_trigger_outcomes_total{outcome="INVALID_PHONE_NUMBER"}')).toBe(1);
    expect([...samples.keys()].filter((k) => k.startsWith('oct_trigger_outcomes_total'))).toHaveLength(4);

    expect(samples.get('oct_calls{status="initiated"}')).toBe(1);
    expect(samples.get('oct_calls{status="dialing"}')).toBe(0);
    expect(samples.get('oct_calls{status="in_progress"}')).toBe(0);
    expect(samples.get('oct_calls_queued')).toBe(1);
    expect(samples.get('oct_calls_active')).toBe(0);
    expect(samples.get('oct_rate_limit_store_errors_total')).toBe(0);
    expect(samples.get('oct_dispatch_latency_seconds_count')).toBe(0);
    expect(samples.get('oct_dispatch_pass_duration_seconds_count')).toBe(0);
    // Default process metrics come from the app's own registry.
    expect(samples.get('process_cpu_user_seconds_total')).toBeGreaterThan(0);

    expect(text).not.toContain('no-such-route');
    expect(text).not.toContain('svc_sk_');
    expect(text).not.toContain(tenant.key);
  });

  it('one outcome per message: every refusal with the same message counts under the same outcome', async () => {
    const { app } = await buildTestApp();
    const tenant = await createTenant(app.storage);
    const sent: [string, unknown, Record<string, string>?][] = [
      ['pattern', { phone_number: 'bad' }],
      ['possible number', { phone_number: '+1415555' }],
      ['spaces', { phone_number: '+1 415 555 2671' }],
      ['array body', []],
      ['null body', null],
      ['empty body', ''],
      ['key with a space', undefined, { 'idempotency-key': 'has space' }],
      ['key too long', undefined, { 'idempotency-key': 'k'.repeat(256) }],
      ['a field rule', { phone_number: '+14155552671', name: 'x'.repeat(201) }],
    ];
    const outcomesByMessage = new Map<string, Set<string>>();
    for (const [what, body, headers] of sent) {
      const before = new Map((await scrape(app)).samples);
      const res = await trigger(app, tenant.key, body, headers);
      expect(res.statusCode, what).toBe(400);
      const after = (await scrape(app)).samples;
      const counted = [...after]
        .filter(([k, v]) => k.startsWith('oct_trigger_outcomes_total') && v !== (before.get(k) ?? 0))
        .map(([k]) => k);
      expect(counted, what).toHaveLength(1);
      const message = res.json<ErrorResponse>().error;
      outcomesByMessage.set(message, new Set([...(outcomesByMessage.get(message) ?? []), counted[0]!]));
    }
    expect(Object.fromEntries([...outcomesByMessage].map(([m, o]) => [m, [...o]]))).toEqual({
      'Invalid phone number format': ['oct_trigger_outcomes_total{outcome="INVALID_PHONE_NUMBER"}'],
      'Request body must be a JSON object': ['oct_trigger_outcomes_total{outcome="BODY_NOT_OBJECT"}'],
      'Idempotency-Key must be 1 to 255 printable ASCII characters': [
        'oct_trigger_outcomes_total{outcome="IDEMPOTENCY_KEY_INVALID"}',
      ],
      'name must be at most 200 characters': ['oct_trigger_outcomes_total{outcome="VALIDATION"}'],
    });
  });

  it('two apps in one process keep separate registries', async () => {
    const a = (await buildTestApp()).app;
    const b = (await buildTestApp()).app;
    await a.inject({ method: 'GET', url: '/nowhere' });
    expect(a.metrics.register).not.toBe(b.metrics.register);
    expect((await scrape(a)).samples.get('oct_http_requests_total{route="unmatched",method="GET",status="404"}')).toBe(
      1,
    );
    expect(
      (await scrape(b)).samples.get('oct_http_requests_total{route="unmatched",method="GET",status="404"}'),
    ).toBeUndefined();
  });

  it('a scrape never fails on the database: the call gauges keep their last values while the query fails or hangs', async () => {
    const { app, databaseUrl } = await buildTestApp();
    const tenant = await createTenant(app.storage);
    await trigger(app, tenant.key);
    expect((await scrape(app)).samples.get('oct_calls_queued')).toBe(1);
    await trigger(app, tenant.key);

    // Hangs: another session holds an exclusive lock on calls; the scrape answers within its bound anyway.
    const blocker = new pg.Client({ connectionString: databaseUrl });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE calls IN ACCESS EXCLUSIVE MODE');
      const started = Date.now();
      expect((await scrape(app)).samples.get('oct_calls_queued')).toBe(1);
      expect(Date.now() - started).toBeLessThan(3_000);
      await blocker.query('ROLLBACK');
      await waitFor(
        async () => (await scrape(app)).samples.get('oct_calls_queued'),
        (n) => n === 2,
      );

      // Fails: the table is gone for a moment.
      await trigger(app, tenant.key);
      await blocker.query('ALTER TABLE calls RENAME TO calls_away');
      try {
        const { samples } = await scrape(app);
        expect(samples.get('oct_calls_queued')).toBe(2);
        expect(samples.get('oct_calls{status="initiated"}')).toBe(2);
      } finally {
        await blocker.query('ALTER TABLE calls_away RENAME TO calls');
      }
      expect((await scrape(app)).samples.get('oct_calls_queued')).toBe(3);
    } finally {
      await blocker.end();
    }
  });

  it('observes dispatch latency once per dialled call, and the claim pass that dialled it', async () => {
    const { app } = await buildTestApp({
      env: { DISPATCH_ENABLED: 'true', SIMULATED_RING_MS: '10', SIMULATED_TALK_MS: '10' },
    });
    const tenant = await createTenant(app.storage);
    const call_id = callIdOf(await trigger(app, tenant.key));
    await waitFor(
      () => prismaOf(app).call.findUniqueOrThrow({ where: { id: call_id } }),
      (c) => c.status === 'completed',
    );

    const { samples } = await scrape(app);
    expect(samples.get('oct_dispatch_latency_seconds_count')).toBe(1);
    expect(samples.get('oct_dispatch_latency_seconds_sum')).toBeGreaterThanOrEqual(0);
    expect(samples.get('oct_dispatch_latency_seconds_bucket{le="+Inf"}')).toBe(1);
    // Passes that found no account due are not observed: at least the one that claimed the call.
    expect(samples.get('oct_dispatch_pass_duration_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(samples.get('oct_dispatch_pass_duration_seconds_sum')).toBeGreaterThan(0);
    // Buckets at most a third apart where a busy host's passes fall (0.1-0.5 s), so that a quantile means something.
    const bounds = [...samples.keys()]
      .map((k) => /^oct_dispatch_pass_duration_seconds_bucket\{le="([\d.]+)"\}$/.exec(k)?.[1])
      .filter((le) => le !== undefined)
      .map(Number);
    for (const [i, le] of bounds.entries()) if (i > 0) expect(le / bounds[i - 1]!).toBeLessThanOrEqual(4 / 3 + 1e-9);
    expect(bounds[0]).toBeLessThanOrEqual(0.001);
    expect(bounds.at(-1)).toBeGreaterThanOrEqual(2.5);
    expect(samples.get('oct_calls_active')).toBe(0);
    expect(samples.get('oct_calls_queued')).toBe(0);
  });

  it('counts webhook attempts by outcome, with their duration', async () => {
    const { app } = await buildTestApp({
      env: {
        DISPATCH_ENABLED: 'true',
        WEBHOOK_DELIVERY_ENABLED: 'true',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        SIMULATED_RING_MS: '10',
        SIMULATED_TALK_MS: '10',
      },
    });
    const tenant = await createTenant(app.storage);
    const receiver = await startReceiver();
    await setWebhook(app.storage, tenant.accountId, receiver.url, { allowPrivate: true, now: app.now() });
    expect((await trigger(app, tenant.key)).statusCode).toBe(200);
    await receiver.waitFor(2); // call.started and call.completed
    await app.deliveryWorker!.settle();

    const { samples } = await scrape(app);
    expect(samples.get('oct_webhook_attempts_total{outcome="succeeded"}')).toBeGreaterThanOrEqual(1);
    expect(samples.get('oct_webhook_attempt_duration_seconds_count{outcome="succeeded"}')).toBe(
      samples.get('oct_webhook_attempts_total{outcome="succeeded"}'),
    );
    expect(samples.get('oct_webhook_attempts_total{outcome="retry"}')).toBeUndefined();
  });

  it('counts rate-limit store errors while Redis is down (REDIS_URL at a closed port)', async () => {
    const { app } = await buildTestApp({ env: { REDIS_URL: `redis://127.0.0.1:${await freePort()}` } });
    const tenant = await createTenant(app.storage);
    for (let i = 0; i < 3; i++) expect((await trigger(app, tenant.key)).statusCode).toBe(200);

    expect((await scrape(app)).samples.get('oct_rate_limit_store_errors_total')).toBe(3);
    // The counter tracks the count on every scrape, not a snapshot from the first one.
    await trigger(app, tenant.key);
    expect((await scrape(app)).samples.get('oct_rate_limit_store_errors_total')).toBe(4);
  });
});
