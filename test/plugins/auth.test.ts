// Authentication and access: one indexed lookup per request for a key that may work and no cache of working keys, so
// rotation and the switch hold on the very next request on every replica; malformed keys never reach the database,
// nor do keys already found unknown or revoked; failures are limited per client IP.
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { App } from '../../src/app.js';
import { apiKeyDigest, generateApiKey } from '../../src/domain/api-key.js';
import { buildTestApp, prismaOf, poolsOf } from '../helpers/app.js';
import { createClientTenant, createTenant, generateKey, keyWithTypo, setApiAccess } from '../helpers/fixtures.js';
import { trigger } from '../helpers/trigger.js';

let replicaA: App;
let replicaB: App;

beforeAll(async () => {
  const first = await buildTestApp({ pools: true });
  replicaA = first.app;
  replicaB = (await buildTestApp({ databaseUrl: first.databaseUrl })).app;
});

afterEach(() => vi.restoreAllMocks());

/**
 * Every statement of the app goes through its two pools (requests, background): Prisma's (pool.query; transactions
 * check a connection out with pool.connect, which pool.query also calls) and the plain ones of the hot path. Returns
 * one mock per method that sees the calls of both pools.
 */
function spyOnPools(app: App) {
  const statements = vi.fn();
  const checkouts = vi.fn();
  for (const pool of [poolsOf(app).requests, poolsOf(app).background]) {
    for (const [method, seen] of [
      ['query', statements],
      ['connect', checkouts],
    ] as const) {
      const original = pool[method].bind(pool) as (...args: unknown[]) => unknown;
      vi.spyOn(pool, method).mockImplementation(((...args: unknown[]) => {
        seen(...args);
        return original(...args);
      }) as never);
    }
  }
  return { statements, checkouts };
}

describe('authentication', () => {
  it('a rotated key stops working on the next request on every replica; the new one works at once', async () => {
    const tenant = await createTenant(replicaA.storage);
    expect((await trigger(replicaA, tenant.key)).statusCode).toBe(200);
    expect((await trigger(replicaB, tenant.key)).statusCode).toBe(200);
    const { key: rotated } = await generateKey(replicaA.storage, tenant.accountId, undefined, { now: new Date() });
    expect((await trigger(replicaA, tenant.key)).statusCode).toBe(401);
    expect((await trigger(replicaB, tenant.key)).statusCode).toBe(401);
    expect((await trigger(replicaB, rotated)).statusCode).toBe(200);
    expect(await prismaOf(replicaA).apiKey.count({ where: { accountId: tenant.accountId, revokedAt: null } })).toBe(1);
  });

  it('the API-access switch takes effect on the next request, and the key works again when it is back on', async () => {
    const tenant = await createTenant(replicaA.storage);
    await setApiAccess(replicaA.storage, tenant.accountId, false, undefined, new Date());
    expect((await trigger(replicaB, tenant.key)).json()).toEqual({ success: false, error: 'API access is disabled' });
    await setApiAccess(replicaA.storage, tenant.accountId, true, undefined, new Date());
    expect((await trigger(replicaB, tenant.key)).statusCode).toBe(200);
  });

  it("an agency's switch turns its clients' keys off too", async () => {
    const agency = await createTenant(replicaA.storage);
    const client = await createClientTenant(replicaA.storage, agency.accountId);
    expect((await trigger(replicaA, client.key)).statusCode).toBe(200);
    await setApiAccess(replicaA.storage, agency.accountId, false, undefined, new Date());
    expect((await trigger(replicaA, client.key)).json()).toEqual({ success: false, error: 'API access is disabled' });
  });

  it("a client inherits its agency's plan", async () => {
    const starter = await createTenant(replicaA.storage, { plan: 'starter' });
    const client = await createClientTenant(replicaA.storage, starter.accountId);
    expect((await trigger(replicaA, client.key)).json()).toEqual({
      success: false,
      error: 'API access requires the agency plan',
    });
  });

  it('stores only the digest: the key itself is nowhere in the table', async () => {
    const tenant = await createTenant(replicaA.storage);
    const rows = await prismaOf(replicaA).apiKey.findMany({ where: { accountId: tenant.accountId } });
    expect(Buffer.from(rows[0]!.digest).equals(apiKeyDigest(tenant.key))).toBe(true);
    expect(JSON.stringify(rows)).not.toContain(tenant.key.slice(12));
  });

  it('a malformed or checksum-failing key is refused without a database query; a well-formed one costs exactly one', async () => {
    const tenant = await createTenant(replicaA.storage);
    const { statements, checkouts } = spyOnPools(replicaA);
    for (const key of ['svc_sk_short', keyWithTypo(tenant.key), 'not-a-key'])
      expect((await trigger(replicaA, key)).statusCode).toBe(401);
    expect(statements).not.toHaveBeenCalled();
    expect(checkouts).not.toHaveBeenCalled();
    // A valid key with a bad body stops after auth, access and validation: one statement, the key lookup.
    expect((await trigger(replicaA, tenant.key, { phone_number: 'x' })).statusCode).toBe(400);
    expect(statements).toHaveBeenCalledTimes(1);
    expect(statements.mock.calls[0]![0]).toMatchObject({ name: 'oct_key_lookup' });
    expect(checkouts).toHaveBeenCalledTimes(1);
  });

  it('a working key costs a lookup every time; once revoked or unknown, it costs one more and then none, each failure still counted', async () => {
    const { app } = await buildTestApp({ pools: true, env: { AUTH_FAILURES_PER_MINUTE: '3' } });
    const tenant = await createTenant(app.storage);
    const from = (ip: string, key: string) =>
      app.inject({
        method: 'POST',
        url: '/api/v1/calls/trigger',
        remoteAddress: ip,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload: '{"phone_number":"x"}',
      });
    const { statements, checkouts } = spyOnPools(app);
    const lookups = () =>
      statements.mock.calls.filter(([query]) => (query as { name?: string }).name === 'oct_key_lookup').length;

    // Never remembered while it works: each request looks it up (a bad body stops right after authentication).
    for (let i = 1; i <= 3; i++) {
      expect((await from('198.51.100.1', tenant.key)).statusCode).toBe(400);
      expect(lookups()).toBe(i);
    }
    // So a revoked key is refused on the very next request; that lookup is its last.
    const { key: rotated } = await generateKey(app.storage, tenant.accountId, undefined, { now: app.now() });
    statements.mockClear();
    checkouts.mockClear();
    expect((await from('198.51.100.1', tenant.key)).json()).toEqual({ success: false, error: 'Invalid API key' });
    expect(statements).toHaveBeenCalledTimes(1);
    for (let i = 0; i < 2; i++)
      expect((await from('198.51.100.1', tenant.key)).json()).toEqual({ success: false, error: 'Invalid API key' });
    // Three failures from this address so far, one of them looked up: the fourth is the 429, still without a statement.
    const blocked = await from('198.51.100.1', tenant.key);
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json()).toEqual({
      success: false,
      error: `Too many failed authentication attempts. Retry after ${blocked.headers['retry-after']} seconds.`,
    });
    expect(statements).toHaveBeenCalledTimes(1);
    expect(checkouts).toHaveBeenCalledTimes(1);

    // An unknown well-formed key: one lookup, then none; its failures count for its own address as before.
    const unknown = generateApiKey().key;
    for (let i = 0; i < 3; i++) expect((await from('198.51.100.2', unknown)).statusCode).toBe(401);
    expect((await from('198.51.100.2', unknown)).statusCode).toBe(429);
    expect((await from('198.51.100.3', unknown)).statusCode).toBe(401);
    expect(statements).toHaveBeenCalledTimes(2);
    expect(checkouts).toHaveBeenCalledTimes(2);

    // The new key works, looked up as always, from an address that has not failed.
    expect((await from('198.51.100.4', rotated)).statusCode).toBe(400);
    expect(lookups()).toBe(3);
  });

  it('limits failed attempts per client IP, without touching other clients', async () => {
    const { app } = await buildTestApp({ pools: true, env: { AUTH_FAILURES_PER_MINUTE: '5' } });
    const tenant = await createTenant(app.storage);
    const from = (ip: string, key: string) =>
      app.inject({
        method: 'POST',
        url: '/api/v1/calls/trigger',
        remoteAddress: ip,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        payload: '{"phone_number":"+14155552671"}',
      });
    for (let i = 0; i < 5; i++) expect((await from('203.0.113.9', 'svc_sk_wrong')).statusCode).toBe(401);
    const blocked = await from('203.0.113.9', 'svc_sk_wrong');
    expect(blocked.statusCode).toBe(429);
    const seconds = Number(blocked.headers['retry-after']);
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(blocked.json()).toEqual({
      success: false,
      error: `Too many failed authentication attempts. Retry after ${seconds} seconds.`,
    });
    // Another client is not affected; and a valid key is never slowed by the counter, even from the same address.
    expect((await from('198.51.100.7', 'svc_sk_wrong')).statusCode).toBe(401);
    expect((await from('203.0.113.9', tenant.key)).statusCode).toBe(200);
  });
});
