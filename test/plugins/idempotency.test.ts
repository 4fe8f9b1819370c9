// Idempotency-Key on the trigger (issue 3, point 7): replay, 422 on another body, 409 while in flight, abandoned and expired reservations, per-account scope, key shape, concurrent duplicates, and refusals that release the key.
import { createHash, randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { App } from '../../src/app.js';
import { stableStringify } from '../../src/domain/stable-json.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { match } from '../helpers/matchers.js';
import { trigger } from '../helpers/trigger.js';
import { insertIdempotencyRecord } from '../helpers/seed.js';

const BODY = { phone_number: '+14155552671' };
const HOUR_MS = 3600_000;
const REUSED = { success: false, error: 'Idempotency-Key was already used with a different request body' };
const IN_FLIGHT = { success: false, error: 'A request with this Idempotency-Key is still being processed' };
const INVALID_KEY = { success: false, error: 'Idempotency-Key must be 1 to 255 printable ASCII characters' };

let app: App;
/** A replica on the same database whose clock the tests move. */
let clocked: App;
let currentTime = new Date('2058-03-06T15:00:00.000Z');

beforeAll(async () => {
  // A high limit: 50 concurrent duplicates must reach the idempotency check, not the rate limiter.
  const env = { RATE_LIMIT_PER_MINUTE: '10000' };
  const first = await buildTestApp({ env });
  app = first.app;
  clocked = (await buildTestApp({ env, databaseUrl: first.databaseUrl, clock: () => currentTime })).app;
});
afterEach(() => vi.restoreAllMocks());

const send = (target: App, tenant: Tenant, key: string, body: unknown = BODY) =>
  trigger(target, tenant.key, body, { 'idempotency-key': key });

const freshKey = () => `order-${randomUUID()}`;
const callsOf = (tenant: Tenant) => prismaOf(app).call.count({ where: { accountId: tenant.accountId } });
const recordsOf = (tenant: Tenant) =>
  prismaOf(app).idempotencyRecord.findMany({ where: { accountId: tenant.accountId } });
/** What the plugin stores to tell a replay from another request: SHA-256 of the body with sorted keys. */
const hashOf = (body: unknown) => createHash('sha256').update(stableStringify(body)).digest('hex');

function expectAccepted(response: LightMyRequestResponse): string {
  expect(response.statusCode, response.body).toBe(200);
  const body = response.json<{ success: boolean; call_id: string; status: string }>();
  expect(body).toEqual({ success: true, call_id: match.any(String), status: 'initiated' });
  return body.call_id;
}

function expectFirst(response: LightMyRequestResponse): string {
  const callId = expectAccepted(response);
  expect(response.headers['idempotent-replayed']).toBeUndefined();
  return callId;
}

function expectReplay(response: LightMyRequestResponse, callId: string) {
  expect(response.statusCode, response.body).toBe(200);
  expect(response.json()).toEqual({ success: true, call_id: callId, status: 'initiated' });
  expect(response.headers['idempotent-replayed']).toBe('true');
}

function expectRefused(response: LightMyRequestResponse, status: number, body: unknown) {
  expect(response.statusCode).toBe(status);
  expect(response.json()).toEqual(body);
  expect(response.headers['idempotent-replayed']).toBeUndefined();
}

/** The reservation a request still in flight would hold: the same body's hash, no response yet. */
async function reserve(tenant: Tenant, key: string, createdAt: Date, body: unknown = BODY) {
  return insertIdempotencyRecord(prismaOf(app), {
    data: {
      accountId: tenant.accountId,
      key,
      requestHash: hashOf(body),
      responseStatus: null,
      createdAt,
      expiresAt: new Date(createdAt.getTime() + 24 * HOUR_MS),
    },
  });
}

describe('Idempotency-Key', () => {
  it('the same key and body replays the first response with Idempotent-Replayed: true; one call exists', async () => {
    const tenant = await createTenant(app.storage);
    const key = freshKey();
    const callId = expectFirst(await send(app, tenant, key));
    expectReplay(await send(app, tenant, key), callId);
    expectReplay(await send(app, tenant, key), callId);
    expect(await callsOf(tenant)).toBe(1);
    const [record, ...others] = await recordsOf(tenant);
    expect(others).toHaveLength(0);
    expect(record).toMatchObject({
      key,
      responseStatus: 200,
      responseBody: { success: true, call_id: callId, status: 'initiated' },
    });
  });

  it('the order of body fields does not matter, at any depth: a reordered body replays, it is not a 422', async () => {
    const tenant = await createTenant(app.storage);
    const key = freshKey();
    const callId = expectFirst(
      await send(app, tenant, key, '{"phone_number":"+14155552671","name":"Ada","metadata":{"a":1,"b":"x"}}'),
    );
    expectReplay(
      await send(app, tenant, key, '{"metadata":{"b":"x","a":1},"name":"Ada","phone_number":"+14155552671"}'),
      callId,
    );
    expect(await callsOf(tenant)).toBe(1);
  });

  it('the same key with a different body is 422, and the first response is kept', async () => {
    const tenant = await createTenant(app.storage);
    const key = freshKey();
    const callId = expectFirst(await send(app, tenant, key));
    expectRefused(await send(app, tenant, key, { phone_number: '+14155552672' }), 422, REUSED);
    expectRefused(await send(app, tenant, key, { ...BODY, name: 'Ada' }), 422, REUSED);
    expectReplay(await send(app, tenant, key), callId);
    expect(await callsOf(tenant)).toBe(1);
  });

  it('a repeat while the first request is still in flight is 409 and creates nothing', async () => {
    const tenant = await createTenant(clocked.storage);
    const key = freshKey();
    await reserve(tenant, key, currentTime);
    expectRefused(await send(clocked, tenant, key), 409, IN_FLIGHT);
    // Still in flight 59 s later: a slow request is not taken over.
    currentTime = new Date(currentTime.getTime() + 59_000);
    expectRefused(await send(clocked, tenant, key), 409, IN_FLIGHT);
    expect(await callsOf(tenant)).toBe(0);
    const [record] = await recordsOf(tenant);
    expect(record?.responseStatus).toBeNull();
  });

  it('a reservation older than 60 s without a response is abandoned: the next request takes it over', async () => {
    const tenant = await createTenant(clocked.storage);
    const key = freshKey();
    const abandoned = await reserve(tenant, key, new Date(currentTime.getTime() - 61_000));
    const callId = expectFirst(await send(clocked, tenant, key));
    expectReplay(await send(clocked, tenant, key), callId);
    expect(await callsOf(tenant)).toBe(1);
    const records = await recordsOf(tenant);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ key, responseStatus: 200, responseBody: { call_id: callId } });
    expect(records[0]!.id).not.toBe(abandoned.id);
    expect(records[0]!.createdAt.getTime()).toBe(currentTime.getTime());
  });

  it('is scoped to the account: the same key used by another account creates its own call', async () => {
    const first = await createTenant(app.storage);
    const second = await createTenant(app.storage);
    const key = freshKey();
    const firstCall = expectFirst(await send(app, first, key));
    const secondCall = expectFirst(await send(app, second, key));
    expect(secondCall).not.toBe(firstCall);
    // Even with another body: the other account's use of the key is invisible.
    const third = await createTenant(app.storage);
    expectFirst(await send(app, third, key, { phone_number: '+14155552672' }));
    expect(await callsOf(first)).toBe(1);
    expect(await callsOf(second)).toBe(1);
    expect(await callsOf(third)).toBe(1);
    expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: secondCall } })).accountId).toBe(
      second.accountId,
    );
  });

  it('accepts 1 to 255 printable ASCII characters; 256 characters, a space, a control or a non-ASCII character is 400', async () => {
    const tenant = await createTenant(app.storage);
    expectFirst(await send(app, tenant, 'k'.repeat(255)));
    expectFirst(await send(app, tenant, '!~"#$%&\'()*+,-./09:;<=>?@AZ[\\]^_`az{|}'));
    for (const key of ['k'.repeat(256), 'order 1', ' ', 'tab\there', 'del\x7f', 'clé-1', 'ключ', '']) {
      expectRefused(await send(app, tenant, key), 400, INVALID_KEY);
    }
    expect(await callsOf(tenant)).toBe(2);
    expect(await recordsOf(tenant)).toHaveLength(2);
  });

  it('is race-free: 50 concurrent duplicates make exactly one call; each answer is 200 with its call_id or 409', async () => {
    const tenant = await createTenant(app.storage);
    const key = freshKey();
    const responses = await Promise.all(Array.from({ length: 50 }, () => send(app, tenant, key)));
    const accepted = responses.filter((r) => r.statusCode === 200);
    const inFlight = responses.filter((r) => r.statusCode === 409);
    expect(accepted.length + inFlight.length, responses.map((r) => `${r.statusCode} ${r.body}`).join('\n')).toBe(50);
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    const callIds = new Set(accepted.map((r) => expectAccepted(r)));
    expect(callIds.size).toBe(1);
    expect(accepted.filter((r) => r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    for (const r of inFlight) expect(r.json()).toEqual(IN_FLIGHT);
    expect(await callsOf(tenant)).toBe(1);
    const [callId] = callIds;
    expectReplay(await send(app, tenant, key), callId!);
  });

  it('is kept 24 h: a replay just before expiry, then the same key creates a new call 24 h + 1 s later', async () => {
    const tenant = await createTenant(clocked.storage);
    const key = freshKey();
    const start = currentTime;
    const firstCall = expectFirst(await send(clocked, tenant, key));
    currentTime = new Date(start.getTime() + 24 * HOUR_MS - 1_000);
    expectReplay(await send(clocked, tenant, key), firstCall);
    currentTime = new Date(start.getTime() + 24 * HOUR_MS + 1_000);
    const secondCall = expectFirst(await send(clocked, tenant, key));
    expect(secondCall).not.toBe(firstCall);
    expectReplay(await send(clocked, tenant, key), secondCall);
    expect(await callsOf(tenant)).toBe(2);
    expect(await recordsOf(tenant)).toHaveLength(1);
  });

  describe('a request refused after the reservation leaves no record, so a corrected retry with the same key succeeds', () => {
    it('an impossible phone number (+15551234 passes the pattern, fails the possible-number check)', async () => {
      const tenant = await createTenant(app.storage);
      const key = freshKey();
      expectRefused(await send(app, tenant, key, { phone_number: '+15551234' }), 400, {
        success: false,
        error: 'Invalid phone number format',
      });
      expect(await recordsOf(tenant)).toHaveLength(0);
      const callId = expectFirst(await send(app, tenant, key));
      expectReplay(await send(app, tenant, key), callId);
      expect(await callsOf(tenant)).toBe(1);
    });

    it('an unknown agent_id', async () => {
      const tenant = await createTenant(app.storage);
      const key = freshKey();
      expectRefused(await send(app, tenant, key, { ...BODY, agent_id: randomUUID() }), 400, {
        success: false,
        error: 'Agent not found',
      });
      expect(await recordsOf(tenant)).toHaveLength(0);
      const callId = expectFirst(await send(app, tenant, key, { ...BODY, agent_id: tenant.agentId }));
      expect(await callsOf(tenant)).toBe(1);
      expect((await recordsOf(tenant))[0]).toMatchObject({ responseStatus: 200, responseBody: { call_id: callId } });
    });

    it('a failure after the response was staged in the rolled-back transaction (e.g. the commit fails): 500, and the retry is accepted, not 409', async () => {
      const tenant = await createTenant(app.storage);
      const key = freshKey();
      // A constraint trigger deferred to commit: the acceptance's statement stores the call and the response, then its
      // commit fails in PostgreSQL itself.
      await prismaOf(app).$executeRawUnsafe(
        `CREATE FUNCTION test_fail_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'commit failed'; END $$`,
      );
      await prismaOf(app)
        .$executeRawUnsafe(`CREATE CONSTRAINT TRIGGER test_fail_at_commit AFTER UPDATE ON idempotency_records DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW WHEN (NEW.response_status IS NOT NULL) EXECUTE FUNCTION test_fail_at_commit()`);
      try {
        expectRefused(await send(app, tenant, key), 500, { success: false, error: 'Internal server error' });
      } finally {
        await prismaOf(app).$executeRawUnsafe('DROP TRIGGER test_fail_at_commit ON idempotency_records');
        await prismaOf(app).$executeRawUnsafe('DROP FUNCTION test_fail_at_commit()');
      }
      expect(await callsOf(tenant)).toBe(0);
      expect(await recordsOf(tenant)).toHaveLength(0);
      const callId = expectFirst(await send(app, tenant, key));
      expectReplay(await send(app, tenant, key), callId);
      expect(await callsOf(tenant)).toBe(1);
    });

    it('an immediate retry of the refused request gets the same refusal, never 409', async () => {
      const tenant = await createTenant(app.storage);
      const key = freshKey();
      for (let i = 0; i < 20; i++) {
        expectRefused(await send(app, tenant, key, { phone_number: '+15551234' }), 400, {
          success: false,
          error: 'Invalid phone number format',
        });
      }
      expect(await recordsOf(tenant)).toHaveLength(0);
      expect(await callsOf(tenant)).toBe(0);
    });
  });
});
