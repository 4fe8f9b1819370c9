// End to end (issue 23, point 8): the server as a process with the simulated dialer, a webhook receiver on 127.0.0.1,
// and a busy-then-answered number under a policy of two attempts retried on busy: the receiver hears call.started for
// attempt 1, call.started for attempt 2, call.completed with both attempts' outcomes, and nothing else.
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it, onTestFinished } from 'vitest';
import { setWebhook } from '../../src/admin/webhooks.js';
import { createPrisma } from '../../src/storage/database.js';
import { freshDatabase, storageOf } from '../helpers/database.js';
import { createTenant } from '../helpers/fixtures.js';
import { json, type TriggerResponse, type WebhookEvent } from '../helpers/json.js';
import { startReceiver } from '../helpers/receiver.js';
import { httpsRequest, startServer } from '../helpers/server-process.js';
import { forceAgent } from '../helpers/seed.js';

describe('retries end to end', () => {
  it('a busy-then-answered call through two attempts: the receiver gets started, started, completed and nothing else', async () => {
    const { url } = await freshDatabase();
    const prisma = createPrisma(url, { max: 2 });
    onTestFinished(() => prisma.$disconnect());
    const tenant = await createTenant(prisma);
    // The policy as the agent settings store it; waits of 0 minutes (at once) keep the test short.
    await forceAgent(prisma, tenant.agentId, { maxAttempts: 2, retryOn: ['busy'], retryWaitsMinutes: [0] });
    const receiver = await startReceiver();
    const { secret } = await setWebhook(storageOf(prisma), tenant.accountId, receiver.url, {
      allowPrivate: true,
      now: new Date(),
    });
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'oct-retries-e2e-'));
    const server = await startServer({
      DATA_DIR: dataDir,
      DATABASE_URL: url,
      SIMULATED_RING_MS: '200',
      SIMULATED_TALK_MS: '300',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    });
    onTestFinished(async () => {
      if (server.child.exitCode === null && server.child.signalCode === null) await server.stop('SIGKILL');
    });

    const res = await httpsRequest(server.port, '/api/v1/calls/trigger', {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ phone_number: '+15005550005', metadata: { lead: 'L-42' } }),
    });
    expect(res.status).toBe(200);
    const callId = json<TriggerResponse>(res.body).call_id;

    await receiver.waitFor(3, 30_000);
    // Anything more (a fourth event, a second terminal one) would come within this.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await server.stop('SIGTERM')).toBe(0);

    const events = receiver.received.map((r) => {
      new Webhook(secret).verify(r.body, {
        'webhook-id': String(r.headers['webhook-id']),
        'webhook-timestamp': String(r.headers['webhook-timestamp']),
        'webhook-signature': String(r.headers['webhook-signature']),
      });
      return json<WebhookEvent>(r.body);
    });
    expect(events.map((e) => [e.type, e.data.call_id, e.data.status, e.data.attempt, e.data.attempts])).toEqual([
      ['call.started', callId, 'dialing', 1, 1],
      ['call.started', callId, 'dialing', 2, 2],
      ['call.completed', callId, 'completed', 2, 2],
    ]);
    expect(events[0]!.data.attempt_outcomes).toEqual([]);
    expect(events[1]!.data.attempt_outcomes).toEqual([
      { attempt: 1, outcome: 'busy', at: expect.any(String) as string },
    ]);
    const completed = events[2]!.data;
    expect(completed.attempt_outcomes.map((o) => [o.attempt, o.outcome])).toEqual([
      [1, 'busy'],
      [2, 'completed'],
    ]);
    expect(completed).toMatchObject({ failure_reason: null, metadata: { lead: 'L-42' }, duration_seconds: 0 });
    // The second attempt started after the first ended, and ended after it started.
    const [first, second] = completed.attempt_outcomes;
    expect(Date.parse(events[1]!.data.started_at!)).toBeGreaterThanOrEqual(Date.parse(first!.at));
    expect(Date.parse(second!.at)).toBeGreaterThan(Date.parse(events[1]!.data.started_at!));
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(3);
  }, 90_000);
});
