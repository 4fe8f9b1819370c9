// The concurrency-counters plugin: the limits acceptance and the dispatcher use, and each account's live counts
// (active, waiting, and of them for a calling window, a scheduled time or a retry) read from what the database keeps, for metrics and the dashboard.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { createAgent } from '../../src/admin/agents.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant } from '../helpers/fixtures.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { forceCall, forceCalls } from '../helpers/seed.js';

let app: App;
// A Saturday: the weekday window below is closed, so its calls wait for Monday.
const now = new Date('2058-03-09T15:00:00.000Z');

beforeAll(async () => {
  ({ app } = await buildTestApp({
    clock: () => now,
    env: { MAX_CONCURRENT_CALLS: '4', MAX_QUEUED_CALLS: '7', QUEUED_CALL_TTL_HOURS: '3' },
  }));
});

describe('concurrency counters', () => {
  it('exposes the configured limits', () => {
    expect(app.concurrency.limits).toEqual({ maxActive: 4, maxWaiting: 7, queuedCallTtlHours: 3 });
  });

  it('counts active, waiting and waiting-for-window calls per account; other accounts and unknown ids apart', async () => {
    const tenant = await createTenant(app.storage);
    const other = await createTenant(app.storage);
    const weekdays = (
      await createAgent(app.storage, {
        accountId: tenant.accountId,
        name: 'weekdays',
        phone: '+14155550111',
        timezone: 'UTC',
        windows: ['mon-fri 09:00-17:00'],
        outsideWindow: 'queue',
        now: app.now(),
      })
    ).id;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(callIdOf(await trigger(app, tenant.key)));
    for (let i = 0; i < 2; i++)
      expect((await trigger(app, tenant.key, { phone_number: '+14155552671', agent_id: weekdays })).statusCode).toBe(
        200,
      );
    await trigger(app, other.key);
    await forceCalls(prismaOf(app), { id: { in: ids.slice(0, 2) } }, { status: 'dialing' });

    const counts = await app.concurrency.counts([tenant.accountId, other.accountId, randomUUID()]);
    const none = { scheduled: 0, waitingForRetry: 0 };
    expect(counts.get(tenant.accountId)).toEqual({ active: 2, waiting: 3, waitingForWindow: 2, ...none });
    expect(counts.get(other.accountId)).toEqual({ active: 0, waiting: 1, waitingForWindow: 0, ...none });
    expect(counts.size).toBe(2);

    // Of the waiting calls: one scheduled for later, one waiting for its next attempt (each counted once, not as
    // waiting for a window too), and one whose scheduled time has passed and now waits for its window.
    const [scheduled, retrying, late] = await Promise.all([
      trigger(app, other.key),
      trigger(app, other.key),
      trigger(app, other.key),
    ]);
    const hour = (h: number) => new Date(now.getTime() + h * 3_600_000);
    await forceCall(prismaOf(app), callIdOf(scheduled), { scheduledAt: hour(2), notBefore: hour(2) });
    await forceCall(prismaOf(app), callIdOf(retrying), { attempt: 2, nextAttemptAt: hour(1), notBefore: hour(1) });
    await forceCall(prismaOf(app), callIdOf(late), { scheduledAt: hour(-1), notBefore: hour(40) });
    expect((await app.concurrency.counts([other.accountId])).get(other.accountId)).toEqual({
      active: 0,
      waiting: 4,
      waitingForWindow: 1,
      scheduled: 1,
      waitingForRetry: 1,
    });
    await forceCalls(prismaOf(app), { id: ids[0] }, { status: 'in_progress' });
    const all = await prismaOf(app).call.groupBy({ by: ['status'], _count: true });
    const counted = Object.fromEntries(all.map((g) => [g.status, g._count]));
    expect(await app.concurrency.totals()).toEqual({
      initiated: counted.initiated ?? 0,
      dialing: counted.dialing ?? 0,
      in_progress: counted.in_progress ?? 0,
    });
  });

  it('the queue bound at acceptance is its maxWaiting', async () => {
    const tenant = await createTenant(app.storage);
    const answers = [];
    for (let i = 0; i < 9; i++) answers.push((await trigger(app, tenant.key)).statusCode);
    expect(answers).toEqual([200, 200, 200, 200, 200, 200, 200, 429, 429]);
    expect((await app.concurrency.counts([tenant.accountId])).get(tenant.accountId)!.waiting).toBe(7);
  });
});
