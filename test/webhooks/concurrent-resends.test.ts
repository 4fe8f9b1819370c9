// Resends racing each other (issue 45, point 9), through the real app, storage, worker and callctl: many resends of
// one delivery at once (admin, dashboard, callctl) send it exactly once, and every other one is told it is being
// sent already; "resend every failed delivery since" racing itself and single resends sends each delivery once.
import { beforeAll, describe, expect, it } from 'vitest';
import { AdminError } from '../../src/admin/errors.js';
import { replayDelivery, resendFailedDeliveries, setWebhook } from '../../src/admin/webhooks.js';
import type { App } from '../../src/app.js';
import { applyCallUpdate } from '../../src/calls/transition.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { callctl } from '../helpers/cli.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor } from '../dashboard/helpers.js';
import { forceDeliveries } from '../helpers/seed.js';

/** How a resend that lost the race is answered: the delivery is pending again, sent once. */
const TOLD =
  /is still pending; it will be sent without a replay|is already being sent again \(another resend came first\)/;
const OPERATOR = { kind: 'operator' as const };

let app: App;
let databaseUrl: string;
let receiver: Receiver;
let tenant: Tenant;

beforeAll(async () => {
  ({ app, databaseUrl } = await buildTestApp({
    env: { ...DASHBOARD_ENV, WEBHOOK_DELIVERY_ENABLED: 'true', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
    jobs: { webhooks: { pollMs: 3_600_000, random: () => 0.5 } },
  }));
  receiver = await startReceiver();
  tenant = await createTenant(app.storage);
  await setWebhook(app.storage, tenant.accountId, receiver.url, { now: app.now(), allowPrivate: true });
});

/** `n` deliveries whose attempts ran out (a first attempt answered 500, then marked failed). */
async function failedDeliveries(n: number): Promise<string[]> {
  receiver.respond = () => ({ status: 500 });
  const calls: string[] = [];
  for (let i = 0; i < n; i++) {
    const callId = callIdOf(
      await trigger(app, tenant.key, { phone_number: '+14155552671' }, { 'x-forwarded-proto': 'https' }),
    );
    await applyCallUpdate(
      app.storage,
      callId,
      { kind: 'failed', reason: 'canceled' },
      { now: app.now(), source: 'operator' },
    );
    calls.push(callId);
  }
  await app.deliveryWorker!.settle();
  const where = { callId: { in: calls } };
  await forceDeliveries(prismaOf(app), where, { status: 'failed', completedAt: app.now() });
  receiver.respond = () => ({ status: 204 });
  return (await prismaOf(app).webhookDelivery.findMany({ where, select: { id: true } })).map((d) => d.id);
}

/** After the resends: the worker sends what is due; how many times each delivery reached the receiver then. */
async function sentAfter(ids: string[], from: number): Promise<number[]> {
  await app.deliveryWorker!.settle();
  const got = receiver.received.slice(from).map((r) => r.headers['webhook-id']);
  return ids.map((id) => got.filter((g) => g === id).length);
}

const resentEntries = (id: string) =>
  prismaOf(app).auditEntry.count({
    where: { action: 'deliveries_resent', detail: { path: ['delivery_id'], equals: id } },
  });

describe('concurrent resends of one delivery', () => {
  it('twenty at once through the admin API: one sends it, nineteen are told it is being sent already', async () => {
    const [id] = (await failedDeliveries(1)) as [string];
    const from = receiver.received.length;
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, () => replayDelivery(app.storage, id, OPERATOR, { now: app.now() })),
    );
    const done = outcomes.filter((o) => o.status === 'fulfilled');
    const refused = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []));
    expect(done).toHaveLength(1);
    expect(refused).toHaveLength(19);
    for (const error of refused) {
      expect(error).toBeInstanceOf(AdminError);
      expect((error as Error).message).toMatch(TOLD);
    }
    expect(await resentEntries(id)).toBe(1);
    expect(await sentAfter([id], from)).toEqual([1]);
  });

  it('six users pressing Resend at once in the dashboard: one is sent, five are told why not', async () => {
    const [id] = (await failedDeliveries(1)) as [string];
    const LOG = '/dashboard/settings/api-webhooks/deliveries';
    // One user each: the race is between requests, whatever caps one user's requests at a time.
    const visitors: Visitor[] = [];
    for (let i = 0; i < 6; i++) {
      const email = `resend${i}@race.example`;
      await createUserWithPassword(app.storage, tenant.accountId, email);
      const visitor = new Visitor(app);
      visitor.ip = `198.51.100.${i + 10}`;
      expect((await visitor.signIn(email)).status).toBe(303);
      expect((await visitor.get(LOG)).body).toContain(`${LOG}/${id}/resend`);
      visitors.push(visitor);
    }
    const from = receiver.received.length;
    const answers = await Promise.all(
      visitors.map((v) => v.request('POST', `${LOG}/${id}/resend`, { _csrf: v.lastCsrf! })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([303, 400, 400, 400, 400, 400]);
    for (const refused of answers.filter((a) => a.status === 400)) expect(refused.body).toMatch(TOLD);
    expect(await resentEntries(id)).toBe(1);
    expect(await sentAfter([id], from)).toEqual([1]);
  });

  it('six callctl deliveries replay at once: one exits 0, five exit 1 saying it is being sent already', async () => {
    const [id] = (await failedDeliveries(1)) as [string];
    const from = receiver.received.length;
    const runs = await Promise.all(
      Array.from({ length: 6 }, () => callctl(databaseUrl, ['deliveries', 'replay', id, '--json'])),
    );
    expect(runs.map((r) => r.code).sort()).toEqual([0, 1, 1, 1, 1, 1]);
    for (const run of runs.filter((r) => r.code !== 0))
      expect((JSON.parse(run.stderr) as { error: string }).error).toMatch(TOLD);
    expect(await resentEntries(id)).toBe(1);
    expect(await sentAfter([id], from)).toEqual([1]);
  });
});

describe('"resend every failed delivery since" racing itself and single resends', () => {
  it('four users pressing "Resend failed" at once: their counts add up, each delivery is sent once', async () => {
    const ids = await failedDeliveries(3);
    const LOG = '/dashboard/settings/api-webhooks/deliveries';
    const since = new Date(app.now().getTime() - 3_600_000).toISOString().slice(0, 16);
    const visitors: Visitor[] = [];
    for (let i = 0; i < 4; i++) {
      const email = `resend-failed${i}@race.example`;
      await createUserWithPassword(app.storage, tenant.accountId, email);
      const visitor = new Visitor(app);
      visitor.ip = `198.51.100.${i + 30}`;
      expect((await visitor.signIn(email)).status).toBe(303);
      await visitor.get(LOG);
      visitors.push(visitor);
    }
    const from = receiver.received.length;
    const answers = await Promise.all(
      visitors.map((v) => v.request('POST', `${LOG}/resend-failed`, { _csrf: v.lastCsrf!, since })),
    );
    const flashes = await Promise.all(
      answers.map(async (answer, i) => {
        expect(answer.status).toBe(303);
        return /<p class="notice ok" role="status">([^<]*)<\/p>/.exec(
          (await visitors[i]!.get(answer.location!)).body,
        )?.[1];
      }),
    );
    // "1 failed delivery since ...", "3 failed deliveries since ...", or none left.
    const counted = flashes.map((f) => Number(/^(\d+) failed deliver/.exec(f ?? '')?.[1] ?? 0));
    expect(counted.reduce((a, b) => a + b, 0)).toBe(ids.length);
    for (const [i, flash] of flashes.entries())
      if (counted[i] === 0)
        expect(flash).toMatch(
          /^No failed delivery since .* is left to send again \(none failed, or a resend made at the same time took them\)\.$/,
        );
    expect(await sentAfter(ids, from)).toEqual([1, 1, 1]);
  });

  it('sends each failed delivery once, however the resends interleave; the counts add up to one each', async () => {
    const ids = await failedDeliveries(3);
    const since = new Date(app.now().getTime() - 3_600_000);
    const from = receiver.received.length;
    const all = Array.from({ length: 4 }, () =>
      resendFailedDeliveries(app.storage, tenant.accountId, since, OPERATOR, app.now()).then((r) => r.resent),
    );
    const singles = ids.flatMap((id) =>
      Array.from({ length: 4 }, () =>
        replayDelivery(app.storage, id, OPERATOR, { now: app.now() }).then(
          () => 1,
          (error: unknown) => {
            expect((error as Error).message).toMatch(TOLD);
            return 0;
          },
        ),
      ),
    );
    const counts = await Promise.all([...all, ...singles]);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(ids.length);
    expect(await sentAfter(ids, from)).toEqual([1, 1, 1]);
  });
});
