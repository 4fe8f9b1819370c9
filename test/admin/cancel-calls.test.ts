// Cancelling waiting calls (src/admin/calls.ts cancelCalls), on a real database: a waiting call ends failed with
// reason canceled, with one call event, one call.failed delivery and one audit entry; a second cancel changes
// nothing; a call already dialling (or ended) is left as it is; and a call the dispatcher claims while the cancel
// waits for its row lock is found dialling, not cancelled.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { cancelCalls } from '../../src/admin/calls.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import { applyCallUpdate } from '../../src/calls/transition.js';
import { sqlPool } from '../../src/storage/database.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant } from '../helpers/fixtures.js';
import { lockWaiters } from '../helpers/seed.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { waitFor } from '../helpers/wait.js';

const OPERATOR = { kind: 'operator' } as const;

async function setup() {
  const now = new Date('2054-12-01T10:00:00Z');
  const { app } = await buildTestApp({ clock: () => now });
  const tenant = await createTenant(app.storage);
  // An endpoint, so that each event makes a delivery (the delivery worker is off: they stay pending).
  await setWebhook(app.storage, tenant.accountId, 'http://127.0.0.1:9/hooks', { allowPrivate: true, now: app.now() });
  const waiting = async () => {
    const res = await trigger(app, tenant.key, { phone_number: '+14155552671', metadata: { crm: 'x-1' } });
    expect(res.statusCode, res.body).toBe(200);
    return callIdOf(res);
  };
  const stateOf = (id: string) =>
    prismaOf(app).call.findUniqueOrThrow({
      where: { id },
      include: {
        events: { orderBy: { occurredAt: 'asc' } },
        deliveries: { select: { eventType: true, payload: true } },
      },
    });
  const auditOf = (id: string) =>
    prismaOf(app).auditEntry.findMany({ where: { action: 'call_canceled', detail: { equals: { call_id: id } } } });
  return { app, now, tenant, waiting, stateOf, auditOf };
}

describe('cancelCalls', () => {
  it('ends a waiting call failed (canceled) with one event, one call.failed delivery and one audit entry', async () => {
    const s = await setup();
    const id = await s.waiting();
    const at = new Date('2054-12-01T10:05:00Z');

    expect(await cancelCalls(s.app.storage, [id], OPERATOR, at)).toEqual([
      { call_id: id, result: 'canceled', status: 'failed' },
    ]);
    const call = await s.stateOf(id);
    expect(call).toMatchObject({ status: 'failed', failureReason: 'canceled', endedAt: at, dialAttempts: 0 });
    expect(call.events.map((e) => [e.fromStatus, e.toStatus, e.failureReason, e.source])).toEqual([
      [null, 'initiated', null, 'api'],
      ['initiated', 'failed', 'canceled', 'operator'],
    ]);
    expect(call.deliveries.map((d) => d.eventType)).toEqual(['call.failed']);
    const payload = JSON.parse(call.deliveries[0]!.payload) as { type: string; data: Record<string, unknown> };
    expect(payload.type).toBe('call.failed');
    expect(payload.data).toMatchObject({ call_id: id, status: 'failed', failure_reason: 'canceled' });
    const entries = await s.auditOf(id);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ accountId: s.tenant.accountId, actorKind: 'operator', createdAt: at });
    // It no longer counts as waiting.
    expect((await prismaOf(s.app).account.findUniqueOrThrow({ where: { id: s.tenant.accountId } })).waitingCalls).toBe(
      0,
    );

    // Again: nothing changes, and it says it was already canceled.
    expect(await cancelCalls(s.app.storage, [id], OPERATOR, new Date('2054-12-01T10:06:00Z'))).toEqual([
      { call_id: id, result: 'already_canceled', status: 'failed' },
    ]);
    expect(await s.stateOf(id)).toEqual(call);
    expect(await s.auditOf(id)).toHaveLength(1);
  });

  it('leaves a call that is dialling, in progress or ended as it is', async () => {
    const s = await setup();
    const dialing = await s.waiting();
    await applyCallUpdate(s.app.storage, dialing, { kind: 'dialing' }, { now: s.now, source: 'dispatcher' });
    const answered = await s.waiting();
    await applyCallUpdate(s.app.storage, answered, { kind: 'dialing' }, { now: s.now, source: 'dispatcher' });
    await applyCallUpdate(s.app.storage, answered, { kind: 'answered' }, { now: s.now, source: 'provider' });
    const busy = await s.waiting();
    await applyCallUpdate(s.app.storage, busy, { kind: 'failed', reason: 'busy' }, { now: s.now, source: 'provider' });
    const before = await Promise.all([dialing, answered, busy].map(s.stateOf));

    expect(await cancelCalls(s.app.storage, [dialing, answered, busy], OPERATOR, s.app.now())).toEqual([
      { call_id: dialing, result: 'too_late', status: 'dialing' },
      { call_id: answered, result: 'too_late', status: 'in_progress' },
      { call_id: busy, result: 'too_late', status: 'failed' },
    ]);
    expect(await Promise.all([dialing, answered, busy].map(s.stateOf))).toEqual(before);
    expect(await prismaOf(s.app).auditEntry.count({ where: { action: 'call_canceled' } })).toBe(0);
  });

  it('says which ids are no call, and cancels the waiting ones among them', async () => {
    const s = await setup();
    const id = await s.waiting();
    const missing = randomUUID();
    expect(await cancelCalls(s.app.storage, [missing, 'not-a-call', id.toUpperCase()], OPERATOR, s.app.now())).toEqual([
      { call_id: missing, result: 'not_found', status: null },
      { call_id: 'not-a-call', result: 'not_found', status: null },
      { call_id: id, result: 'canceled', status: 'failed' },
    ]);
  });

  it('does not cancel a call the dispatcher claims while the cancel waits for its row lock', async () => {
    const s = await setup();
    const id = await s.waiting();
    const pending: { cancel?: ReturnType<typeof cancelCalls> } = {};
    // The claim's transaction: the row locked, then moved to dialing (as the dispatcher's claim does under its lock).
    await prismaOf(s.app).$transaction(
      async (tx) => {
        await tx.$queryRaw`SELECT id FROM calls WHERE id = ${id}::uuid FOR UPDATE`;
        pending.cancel = cancelCalls(s.app.storage, [id], OPERATOR, s.app.now());
        // The cancel is blocked on the row lock before the claim goes on.
        await waitFor(
          () => lockWaiters(sqlPool(prismaOf(s.app))),
          (n) => n > 0,
        );
        await tx.$executeRaw`UPDATE calls SET status = 'dialing', started_at = now(), dial_attempts = 1 WHERE id = ${id}::uuid`;
      },
      { timeout: 30_000 },
    );
    expect(await pending.cancel).toEqual([{ call_id: id, result: 'too_late', status: 'dialing' }]);
    const call = await s.stateOf(id);
    expect(call.status).toBe('dialing');
    expect(call.deliveries).toEqual([]);
    expect(await s.auditOf(id)).toEqual([]);
  });
});
