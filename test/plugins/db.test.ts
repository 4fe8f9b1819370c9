// Two connection pools (requests, background work): requests are never starved by background work, requests fail
// fast when their own pool is exhausted while background work waits its turn, and the background work a request
// starts (the dispatcher pass it wakes, an API-only replica's NOTIFY) runs on the background pool.
import type pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BACKGROUND_POOL, REQUEST_POOL } from '../../src/storage/database.js';
import { buildTestApp, prismaOf, poolsOf } from '../helpers/app.js';
import { createTenant } from '../helpers/fixtures.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { waitFor } from '../helpers/wait.js';

afterEach(() => vi.restoreAllMocks());

const checkOutAll = (pool: pg.Pool, count: number) => Promise.all(Array.from({ length: count }, () => pool.connect()));

/** The names of the statements sent through a pool from now on (unnamed ones as ''). */
function statementNames(pool: pg.Pool): string[] {
  const names: string[] = [];
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  vi.spyOn(pool, 'query').mockImplementation((...args: unknown[]) => {
    names.push((args[0] as { name?: string }).name ?? '');
    return query(...args);
  });
  return names;
}

describe('connection pools', () => {
  it('a trigger is answered while background work holds every background connection and has hundreds of statements queued', async () => {
    const { app } = await buildTestApp({ pools: true });
    const tenant = await createTenant(app.storage);
    const background = poolsOf(app).background;
    const held = await checkOutAll(background, BACKGROUND_POOL.max);
    const queued = Array.from({ length: 300 }, () => background.query('SELECT 1'));
    try {
      const response = await trigger(app, tenant.key);
      expect(response.statusCode, response.body).toBe(200);
    } finally {
      for (const client of held) client.release();
    }
    // The background statements waited, and none failed for it.
    expect(await Promise.all(queued)).toHaveLength(300);
  });

  it('a request fails fast (503) when its pool is exhausted; background work waits longer than that, and runs', async () => {
    const { app } = await buildTestApp({ pools: true });
    const tenant = await createTenant(app.storage);
    const requests = await checkOutAll(poolsOf(app).requests, REQUEST_POOL.max);
    const background = await checkOutAll(poolsOf(app).background, BACKGROUND_POOL.max);
    try {
      const waiting = poolsOf(app).background.query<{ ok: number }>('SELECT 1 AS ok');
      const refused = await trigger(app, tenant.key);
      expect(refused.statusCode).toBe(503);
      expect(refused.json()).toEqual({ success: false, error: 'Service temporarily unavailable' });
      expect(refused.headers['retry-after']).toBe('5');
      // The background statement has waited as long as the request did, and is still waiting, not failed.
      for (const client of background.splice(0)) client.release();
      expect((await waiting).rows).toEqual([{ ok: 1 }]);
    } finally {
      for (const client of [...requests, ...background]) client.release();
    }
    expect((await trigger(app, tenant.key)).statusCode).toBe(200);
  });

  it('the dispatcher pass a request wakes runs on the background pool: the request pool sees only the lookup and the acceptance', async () => {
    const { app } = await buildTestApp({
      pools: true,
      env: { DISPATCH_ENABLED: 'true', SIMULATED_RING_MS: '30', SIMULATED_TALK_MS: '60000' },
      // No poll during the test: the pass that dials is the one the acceptance wakes.
      jobs: { dispatcher: { pollMs: 60_000 } },
    });
    const tenant = await createTenant(app.storage);
    await app.dispatcher!.settle();
    const onRequests = statementNames(poolsOf(app).requests);
    const onBackground = statementNames(poolsOf(app).background);
    const response = await trigger(app, tenant.key);
    expect(response.statusCode, response.body).toBe(200);
    // The woken pass, and any it chains, are over once settle() returns (it waits for their dials too).
    await app.dispatcher!.settle();
    expect(onRequests).toEqual(['oct_key_lookup', 'oct_accept_call_v4']);
    // The claim runs in a transaction on a client of the background pool; the dial's intent after it, on the pool.
    expect(onBackground).toContain('oct_record_intents');
    vi.restoreAllMocks();
    const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: callIdOf(response) } });
    expect(call.dialAttempts).toBe(1);
  });

  it("an API-only replica's NOTIFY after an acceptance runs on the background pool", async () => {
    const { app } = await buildTestApp({ pools: true });
    const tenant = await createTenant(app.storage);
    const onRequests = statementNames(poolsOf(app).requests);
    const onBackground = statementNames(poolsOf(app).background);
    expect((await trigger(app, tenant.key)).statusCode).toBe(200);
    await waitFor(
      () => onBackground,
      (names) => names.includes('oct_notify'),
    );
    expect(onRequests).toEqual(['oct_key_lookup', 'oct_accept_call_v4']);
  });
});
