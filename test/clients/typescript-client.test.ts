// The TypeScript client (clients/typescript) against the real server listening on a free port, through its real fetch:
// a trigger, idempotency, a typed 400, a 429 from the real rate limiter and a 503 from an exhausted pool retried after
// Retry-After with the same key, and a refused connection retried until the server is up (or an abort ends the wait).
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { App } from '../../src/app.js';
import { REQUEST_POOL } from '../../src/storage/database.js';
import { freePort } from '../../src/storage/free-port.js';
import { createClient, TriggerCallError, type Client } from '../../clients/typescript/src/index.js';
import { buildTestApp, poolsOf, prismaOf } from '../helpers/app.js';
import { createTenant, keyWithTypo, type Tenant } from '../helpers/fixtures.js';
import { trigger } from '../helpers/trigger.js';

const PHONE = '+14155552671';
/** Short waits between attempts: the tests wait for what the server says, not for the defaults' half second. */
const FAST = { maxAttempts: 4, baseDelayMs: 20, maxDelayMs: 10_000 };

interface Sent {
  idempotencyKey: string | null;
  at: number;
  status: number | null;
  retryAfter: string | null;
}

/**
 * The real fetch, with what each attempt sent and got written down; `onRefused` runs when a connection fails,
 * `onAnswer` when an answer came.
 */
function recordingFetch(onRefused?: () => Promise<void>, onAnswer?: (status: number) => void) {
  const sent: Sent[] = [];
  const fetch = async (request: Request): Promise<Response> => {
    const entry: Sent = {
      idempotencyKey: request.headers.get('idempotency-key'),
      at: Date.now(),
      status: null,
      retryAfter: null,
    };
    sent.push(entry);
    try {
      const response = await globalThis.fetch(request);
      entry.status = response.status;
      entry.retryAfter = response.headers.get('retry-after');
      onAnswer?.(response.status);
      return response;
    } catch (error) {
      await onRefused?.();
      throw error;
    }
  };
  return { sent, fetch };
}

async function listen(app: App, port = 0): Promise<string> {
  await app.listen({ port, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('not listening on TCP');
  return `http://127.0.0.1:${address.port}`;
}

const callsOf = (app: App, tenant: Tenant) =>
  prismaOf(app).call.findMany({ where: { accountId: tenant.accountId }, select: { id: true } });

let app: App;
let databaseUrl: string;
let baseUrl: string;
let tenant: Tenant;
let client: Client;

beforeAll(async () => {
  ({ app, databaseUrl } = await buildTestApp());
  baseUrl = await listen(app);
  tenant = await createTenant(app.storage);
  client = createClient({ baseUrl, apiKey: tenant.key, retry: FAST });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('triggerCall', () => {
  it('triggers a call and returns its id, stored under a generated Idempotency-Key', async () => {
    const result = await client.triggerCall({ phone_number: PHONE, name: 'Ada', metadata: { crm_id: 'L-42' } });
    if (!result.ok) throw result.error;
    expect(result.data).toEqual({ success: true, call_id: expect.any(String) as string, status: 'initiated' });
    expect(result.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
    expect(result).toMatchObject({ replayed: false, attempts: 1 });
    const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: result.data.call_id } });
    expect(call).toMatchObject({ accountId: tenant.accountId, name: 'Ada' });
  });

  it('the same idempotency key twice gives the same call, the second time replayed', async () => {
    const own = await createTenant(app.storage);
    const ownClient = createClient({ baseUrl, apiKey: own.key, retry: FAST });
    const first = await ownClient.triggerCall({ phone_number: PHONE }, { idempotencyKey: 'crm-lead-42-attempt-1' });
    const second = await ownClient.triggerCall({ phone_number: PHONE }, { idempotencyKey: 'crm-lead-42-attempt-1' });
    if (!first.ok || !second.ok) throw new Error('a trigger failed');
    expect(second.data.call_id).toBe(first.data.call_id);
    expect([first.replayed, second.replayed]).toEqual([false, true]);
    expect(await callsOf(app, own)).toEqual([{ id: first.data.call_id }]);
  });

  it('a 400 comes back as a TriggerCallError with the envelope, sent once', async () => {
    const { sent, fetch } = recordingFetch();
    const recorded = createClient({ baseUrl, apiKey: tenant.key, retry: FAST, fetch });
    const result = await recorded.triggerCall({ phone_number: '+15551234' });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toBeInstanceOf(TriggerCallError);
    expect(result.error).toMatchObject({
      kind: 'http',
      status: 400,
      message: 'Invalid phone number format',
      body: { success: false, error: 'Invalid phone number format' },
      retryable: false,
      attempts: 1,
    });
    expect(sent).toHaveLength(1);
  });

  it('a 401 (a wrong key) is not retried either', async () => {
    const wrong = createClient({ baseUrl, apiKey: keyWithTypo(tenant.key), retry: FAST });
    const result = await wrong.triggerCall({ phone_number: PHONE });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ kind: 'http', status: 401, attempts: 1, retryable: false });
    expect(result.error.message).toBe(result.error.body?.error);
  });
});

describe('retries', () => {
  it('a 429 from the rate limiter is retried after Retry-After with the same key: exactly one call', async () => {
    const { app: limited } = await buildTestApp({ databaseUrl, env: { RATE_LIMIT_PER_MINUTE: '1' } });
    const limitedUrl = await listen(limited);
    const own = await createTenant(limited.storage);
    // Spend the key's one request of its minute with a refused body (no call stored), in a window that began 55 s
    // ago: the limiter's own clock is Date, so its window ends about 5 s from now, and the 429 says Retry-After 5
    // or less instead of up to 60.
    vi.setSystemTime(Date.now() - 55_000);
    expect((await trigger(limited, own.key, { phone_number: '+15551234' })).statusCode).toBe(400);
    vi.useRealTimers();

    const { sent, fetch } = recordingFetch();
    const recorded = createClient({ baseUrl: limitedUrl, apiKey: own.key, retry: FAST, fetch });
    const result = await recorded.triggerCall({ phone_number: PHONE });
    if (!result.ok) throw result.error;

    expect(sent.map((s) => s.status)).toEqual([429, 200]);
    const [refused, accepted] = sent as [Sent, Sent];
    const seconds = Number(refused.retryAfter);
    expect(seconds).toBeGreaterThanOrEqual(1);
    expect(seconds).toBeLessThanOrEqual(5);
    expect(accepted.at - refused.at).toBeGreaterThanOrEqual(seconds * 1000);
    expect(new Set(sent.map((s) => s.idempotencyKey))).toEqual(new Set([result.idempotencyKey]));
    expect(result).toMatchObject({ attempts: 2, replayed: false });
    expect(await callsOf(limited, own)).toEqual([{ id: result.data.call_id }]);
  });

  it('a Retry-After beyond maxDelayMs ends the retries: the 429 is returned with retryAfterMs', async () => {
    const { app: limited } = await buildTestApp({ databaseUrl, env: { RATE_LIMIT_PER_MINUTE: '1' } });
    const limitedUrl = await listen(limited);
    const own = await createTenant(limited.storage);
    expect((await trigger(limited, own.key, { phone_number: '+15551234' })).statusCode).toBe(400);

    const { sent, fetch } = recordingFetch();
    const patient = createClient({ baseUrl: limitedUrl, apiKey: own.key, retry: { maxDelayMs: 1_000 }, fetch });
    const result = await patient.triggerCall({ phone_number: PHONE });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ status: 429, attempts: 1, retryable: true });
    expect(result.error.message).toMatch(/^Rate limit exceeded\. Retry after \d+ seconds\.$/);
    expect(result.error.retryAfterMs).toBe(Number(sent[0]?.retryAfter) * 1000);
    expect(await callsOf(limited, own)).toEqual([]);
  });

  it('a 503 (the database overloaded) is retried after its Retry-After with the same key: exactly one call', async () => {
    const { app: busy } = await buildTestApp({ databaseUrl, pools: true });
    const busyUrl = await listen(busy);
    const own = await createTenant(busy.storage);
    // Every connection of the request pool held: the trigger fails fast with 503, Retry-After 5; they are let go
    // when that answer has come.
    const held = await Promise.all(Array.from({ length: REQUEST_POOL.max }, () => poolsOf(busy).requests.connect()));
    const release = () => {
      for (const connection of held.splice(0)) connection.release();
    };
    try {
      const { sent, fetch } = recordingFetch(undefined, (status) => status === 503 && release());
      const recorded = createClient({ baseUrl: busyUrl, apiKey: own.key, retry: FAST, fetch });
      const result = await recorded.triggerCall({ phone_number: PHONE });
      if (!result.ok) throw result.error;

      expect(sent.map((s) => [s.status, s.retryAfter])).toEqual([
        [503, '5'],
        [200, null],
      ]);
      expect(sent[1]!.at - sent[0]!.at).toBeGreaterThanOrEqual(5_000);
      expect(new Set(sent.map((s) => s.idempotencyKey))).toEqual(new Set([result.idempotencyKey]));
      expect(await callsOf(busy, own)).toEqual([{ id: result.data.call_id }]);
    } finally {
      release();
    }
  });

  it('a refused connection is retried with the same key until the server is up', async () => {
    const { app: late } = await buildTestApp({ databaseUrl });
    const own = await createTenant(late.storage);
    const port = await freePort();
    // Nobody listens on the port at the first attempt; the server starts when that attempt has failed.
    let started: Promise<string> | null = null;
    const { sent, fetch } = recordingFetch(async () => {
      started ??= listen(late, port);
      await started;
    });
    const recorded = createClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: own.key, retry: FAST, fetch });
    const result = await recorded.triggerCall({ phone_number: PHONE }, { idempotencyKey: 'lead-7' });
    if (!result.ok) throw result.error;

    expect(sent.map((s) => s.status)).toEqual([null, 200]);
    expect(sent.map((s) => s.idempotencyKey)).toEqual(['lead-7', 'lead-7']);
    expect(await callsOf(late, own)).toEqual([{ id: result.data.call_id }]);
  });

  it('gives up after maxAttempts network failures with a network TriggerCallError', async () => {
    const port = await freePort();
    const { sent, fetch } = recordingFetch();
    const recorded = createClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: tenant.key,
      retry: { maxAttempts: 3, baseDelayMs: 10 },
      fetch,
    });
    const result = await recorded.triggerCall({ phone_number: PHONE });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ kind: 'network', status: null, attempts: 3, retryable: true });
    expect(result.error.message).toMatch(/^fetch failed: .*ECONNREFUSED/);
    expect(new Set(sent.map((s) => s.idempotencyKey))).toEqual(new Set([result.error.idempotencyKey]));
  });

  it("an abort ends the wait between attempts: triggerCall rejects with the signal's reason", async () => {
    const port = await freePort();
    const { sent, fetch } = recordingFetch();
    // Unaborted, the refused first attempt would be followed by a wait of 30 to 60 s, then a second attempt.
    const patient = createClient({
      baseUrl: `http://127.0.0.1:${port}`,
      apiKey: tenant.key,
      retry: { maxAttempts: 2, baseDelayMs: 60_000, maxDelayMs: 60_000 },
      fetch,
    });
    const aborted = patient.triggerCall({ phone_number: PHONE }, { signal: AbortSignal.timeout(200) });
    await expect(aborted).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(sent.length).toBeLessThanOrEqual(1);
  });
});
