// When a key was last used: written after the response, at most once a minute per key and process, never for a
// request the key did not authenticate, and never moved back.
import { describe, expect, it } from 'vitest';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, setApiAccess } from '../helpers/fixtures.js';
import type { ErrorResponse } from '../helpers/json.js';
import { waitFor } from '../helpers/wait.js';

const TRIGGER = { phone_number: '+14155552671' };

describe('key usage', () => {
  it('records when a key authenticated a request, to the minute, and only for that key', async () => {
    let now = new Date('2054-11-23T10:00:00.000Z');
    const { app } = await buildTestApp({
      clock: () => now,
      env: { DISPATCH_ENABLED: 'false', WEBHOOK_DELIVERY_ENABLED: 'false' },
    });
    const used = await createTenant(app.storage);
    const unused = await createTenant(app.storage);
    const lastUsed = async (accountId: string) =>
      (await prismaOf(app).apiKey.findFirstOrThrow({ where: { accountId, revokedAt: null } })).lastUsedAt;
    const send = (key: string, body: object = TRIGGER) =>
      app.inject({
        method: 'POST',
        url: '/api/v1/calls/trigger',
        headers: { authorization: `Bearer ${key}`, 'x-forwarded-proto': 'https' },
        payload: body,
      });

    expect(await lastUsed(used.accountId)).toBeNull();
    // A refused body still used the key: it authenticated the request.
    expect((await send(used.key, { phone_number: 'not a number' })).statusCode).toBe(400);
    expect(
      await waitFor(
        () => lastUsed(used.accountId),
        (at) => at !== null,
      ),
    ).toEqual(now);

    // Within the minute: no write.
    const first = now;
    now = new Date(first.getTime() + 30_000);
    expect((await send(used.key)).statusCode).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await lastUsed(used.accountId)).toEqual(first);

    // A minute later: written again.
    now = new Date(first.getTime() + 61_000);
    expect((await send(used.key)).statusCode).toBe(200);
    expect(
      await waitFor(
        () => lastUsed(used.accountId),
        (at) => at?.getTime() === now.getTime(),
      ),
    ).toEqual(now);

    // A key that does not work touches nothing; the other account's key was never used.
    expect((await send(`${unused.key.slice(0, -8)}AAAAAAAA`)).statusCode).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await lastUsed(unused.accountId)).toBeNull();
  });

  it('a request refused by the access switch or the plan (403) is not a use; one refused by the rate limit (429) is', async () => {
    const now = new Date('2054-11-23T10:00:00.000Z');
    const clock = { now };
    const { app } = await buildTestApp({
      clock: () => clock.now,
      env: { DISPATCH_ENABLED: 'false', WEBHOOK_DELIVERY_ENABLED: 'false', RATE_LIMIT_PER_MINUTE: '1' },
    });
    const lastUsed = async (accountId: string) =>
      (await prismaOf(app).apiKey.findFirstOrThrow({ where: { accountId, revokedAt: null } })).lastUsedAt;
    const send = (key: string) =>
      app.inject({
        method: 'POST',
        url: '/api/v1/calls/trigger',
        headers: { authorization: `Bearer ${key}`, 'x-forwarded-proto': 'https' },
        payload: TRIGGER,
      });
    const settled = () => new Promise((resolve) => setTimeout(resolve, 150));

    const off = await createTenant(app.storage, { apiAccess: false });
    const starter = await createTenant(app.storage, { plan: 'starter' });
    const agencyOff = await createTenant(app.storage);
    const clientOfOff = await createClientTenant(app.storage, agencyOff.accountId);
    await setApiAccess(app.storage, agencyOff.accountId, false, undefined, app.now());
    for (const [tenant, error] of [
      [off, 'API access is disabled'],
      [starter, 'API access requires the agency plan'],
      [clientOfOff, 'API access is disabled'],
    ] as const) {
      const res = await send(tenant.key);
      expect([res.statusCode, res.json<ErrorResponse>().error]).toEqual([403, error]);
    }
    await settled();
    for (const tenant of [off, starter, clientOfOff]) expect(await lastUsed(tenant.accountId)).toBeNull();

    // Switched on again, the key is used. A minute later on the service's clock (the rate limit's window is real time,
    // so still the same one), the next request is rate limited, and it is a use: the key was good and allowed.
    await setApiAccess(app.storage, off.accountId, true, undefined, app.now());
    expect((await send(off.key)).statusCode).toBe(200);
    expect(
      await waitFor(
        () => lastUsed(off.accountId),
        (at) => at !== null,
      ),
    ).toEqual(now);
    const later = new Date(now.getTime() + 61_000);
    clock.now = later;
    expect((await send(off.key)).statusCode).toBe(429);
    expect(
      await waitFor(
        () => lastUsed(off.accountId),
        (at) => at?.getTime() === later.getTime(),
      ),
    ).toEqual(later);
  });
});
