// The Overview's endpoint health: an endpoint's failed attempts of the last hour are counted from its deliveries that
// failed lately (last_failure_at, kept by the worker's record of each attempt; partial index of migration
// 20261128220002), so a busy, healthy endpoint's thousands of deliveries of the hour are not read, and the count is
// still every attempt of the hour that got no 2xx: a retry that then succeeded, a delivery sent again by an operator
// and then delivered, a timeout, a 3xx, and none older than the hour. The upgrade's fill (migration 20261128220001)
// gives the deliveries of the last day the same last_failure_at the worker would have.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR } from '../../src/paths.js';
import type { AttemptRecord, Storage } from '../../src/storage/index.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import {
  bulkInsertAttempts,
  bulkInsertCallEvents,
  bulkInsertCalls,
  bulkInsertDeliveries,
  insertRow,
} from '../helpers/seed.js';
import { databaseReportingPlans, PlanCapture, rowsReadFrom, type PlannedStorage } from '../helpers/plan-capture.js';

/** Deliveries of the busy endpoint that succeeded at once in the last hour: counting from them read every one. */
const HEALTHY = 3_000;
const HOUR_MS = 3_600_000;

const capture = new PlanCapture();
let client: pg.Client;
let storages: PlannedStorage[] = [];
let storage: Storage;
let busy: Tenant;
let other: Tenant;
let busyEndpoint: string;
let otherEndpoint: string;
let now: Date;
/** `minutes` minutes before now. */
const ago = (minutes: number) => new Date(now.getTime() - minutes * 60_000);

async function endpointOf(tenant: Tenant): Promise<string> {
  return insertRow(client, 'webhook_endpoints', {
    account_id: tenant.accountId,
    url: `https://hooks.example/${tenant.accountId}`,
    secret: 'whsec_test',
    updated_at: new Date(),
  });
}

/**
 * `count` deliveries to the endpoint, each of its own call and event, created at `at`: pending, or delivered at once
 * at `delivered` (one 200 each, as the worker records them). Their ids.
 */
async function deliveries(
  tenant: Tenant,
  endpointId: string,
  count: number,
  at: Date,
  delivered?: Date,
): Promise<string[]> {
  const calls = await bulkInsertCalls(
    client,
    Array.from({ length: count }, (_, i) => ({
      accountId: tenant.accountId,
      agentId: tenant.agentId,
      phoneNumber: `+1415${String(i + 1).padStart(7, '0')}`,
      status: 'dialing' as const,
      createdAt: at,
    })),
  );
  const events = await bulkInsertCallEvents(
    client,
    calls.map((callId) => ({
      callId,
      fromStatus: 'initiated',
      toStatus: 'dialing',
      source: 'dispatcher',
      occurredAt: at,
    })),
  );
  const ids = await bulkInsertDeliveries(
    client,
    calls.map((callId, i) => ({
      endpointId,
      callId,
      callEventId: events[i]!,
      eventType: 'call.started',
      nextAttemptAt: at,
      createdAt: at,
      ...(delivered && { status: 'succeeded', attemptCount: 1, lastAttemptAt: delivered, completedAt: delivered }),
    })),
  );
  if (delivered) {
    await bulkInsertAttempts(
      client,
      ids.map((deliveryId) => ({
        deliveryId,
        attemptNumber: 1,
        startedAt: delivered,
        durationMs: 40,
        responseStatus: 200,
      })),
    );
  }
  return ids;
}

/** One attempt of a delivery, recorded as the worker records it; `status` null is a timeout (no answer). */
async function attempt(
  endpointId: string,
  deliveryId: string,
  at: Date,
  status: number | null,
  after: { attemptCount: number; state: AttemptRecord['status'] },
) {
  await storage.deliveries.recordAttempts(
    [
      {
        attemptId: randomUUID(),
        deliveryId,
        startedAt: at,
        durationMs: 40,
        responseStatus: status,
        error: status === null ? 'timed out after 10 s' : null,
        responseBody: null,
        responseBodyTruncated: false,
        attemptCount: after.attemptCount,
        status: after.state,
        completedAt: after.state === 'pending' ? null : at,
        nextAttemptAt: after.state === 'pending' ? new Date(at.getTime() + 60_000) : null,
        endpointId,
        disabledReason: null,
      },
    ],
    now,
  );
}

/** The endpoint's attempts since `since` that got no 2xx, counted from every attempt: what the Overview must show. */
async function counted(endpointId: string, since: Date): Promise<number> {
  const { rows } = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
      WHERE d.endpoint_id = $1 AND a.started_at >= $2
        AND (a.response_status IS NULL OR a.response_status < 200 OR a.response_status >= 300)`,
    [endpointId, since],
  );
  return rows[0]!.n;
}

beforeAll(async () => {
  now = new Date();
  ({ client, storages } = await databaseReportingPlans(capture));
  storage = storages[0]!.storage;
  busy = await createTenant(storage);
  other = await createTenant(storage);
  busyEndpoint = await endpointOf(busy);
  otherEndpoint = await endpointOf(other);

  // The busy endpoint's hour: thousands delivered at the first attempt (one 200 each, as the worker records them).
  await deliveries(busy, busyEndpoint, HEALTHY, ago(50), ago(49));
  const [retried, timingOut, resent, redirected, old] = await deliveries(busy, busyEndpoint, 5, ago(120));
  // A 500, then a 200: delivered at the second attempt.
  await attempt(busyEndpoint, retried!, ago(40), 500, { attemptCount: 1, state: 'pending' });
  await attempt(busyEndpoint, retried!, ago(39), 200, { attemptCount: 2, state: 'succeeded' });
  // Two timeouts; still pending.
  await attempt(busyEndpoint, timingOut!, ago(30), null, { attemptCount: 1, state: 'pending' });
  await attempt(busyEndpoint, timingOut!, ago(29), null, { attemptCount: 2, state: 'pending' });
  // Failed for good, sent again by an operator (its count starts again at 0), then delivered at once.
  await attempt(busyEndpoint, resent!, ago(20), 503, { attemptCount: 1, state: 'failed' });
  await storage.deliveries.requeueDelivery(resent!, ago(15));
  await attempt(busyEndpoint, resent!, ago(10), 204, { attemptCount: 1, state: 'succeeded' });
  // A redirect is not a 2xx.
  await attempt(busyEndpoint, redirected!, ago(5), 301, { attemptCount: 1, state: 'pending' });
  // Failed two hours ago, then delivered: its failure is older than the hour.
  await attempt(busyEndpoint, old!, ago(119), 500, { attemptCount: 1, state: 'pending' });
  await attempt(busyEndpoint, old!, ago(2), 200, { attemptCount: 2, state: 'succeeded' });

  // Another account's endpoint fails all the time: none of it is the busy endpoint's.
  for (const id of await deliveries(other, otherEndpoint, 10, ago(30)))
    await attempt(otherEndpoint, id, ago(25), 500, { attemptCount: 1, state: 'pending' });
}, 120_000);

afterAll(async () => {
  capture.stop();
  for (const { end } of storages) await end();
  await client?.end();
});

describe("the Overview's endpoint health", () => {
  it('counts every attempt of the hour that got no 2xx, and names the last success', async () => {
    const since = new Date(now.getTime() - HOUR_MS);
    const health = await storage.overview.endpointHealth([busy.accountId, other.accountId], since);
    // The retry's 500, two timeouts, the resent delivery's 503 and the 301; not the failure of two hours ago.
    expect(await counted(busyEndpoint, since)).toBe(5);
    expect(health.get(busy.accountId)).toMatchObject({ enabled: true, failuresSince: 5, lastSuccessAt: ago(2) });
    expect(health.get(other.accountId)).toMatchObject({ failuresSince: 10, lastSuccessAt: null });
    // Over two hours, the old failure too.
    const twoHours = await storage.overview.endpointHealth([busy.accountId], ago(121));
    expect(twoHours.get(busy.accountId)!.failuresSince).toBe(await counted(busyEndpoint, ago(121)));
    expect(twoHours.get(busy.accountId)!.failuresSince).toBe(6);
  });

  it("reads the endpoint's deliveries that failed lately, not those of the hour", async () => {
    capture.start();
    const { plans: ran } = await capture.plansDuring('health', () =>
      storage.overview.endpointHealth([busy.accountId], ago(60)),
    );
    capture.stop();
    expect(ran.length).toBeGreaterThan(0);
    const deliveriesRead = rowsReadFrom(ran, 'webhook_deliveries');
    const attemptsRead = rowsReadFrom(ran, 'webhook_attempts');
    // Counting from the deliveries attempted in the hour read some 3,000 of them and of their attempts (as a join, the
    // same statement read 3,019 attempts). Now: the four that failed in the hour and their seven attempts (not the
    // old one: its last failure is older), and the last success.
    expect(deliveriesRead).toBeLessThanOrEqual(6);
    expect(attemptsRead).toBeLessThanOrEqual(10);
  });

  it('is filled at the upgrade for the failures of the last day, as the worker would have kept it', async () => {
    const kept = await client.query<{ id: string; last_failure_at: Date | null }>(
      `SELECT id, last_failure_at FROM webhook_deliveries ORDER BY id`,
    );
    expect(kept.rows.filter((r) => r.last_failure_at !== null)).toHaveLength(5 + 10);
    // Inline: the deliveries as the release before the column left them, for the migration's own SQL to fill.
    await client.query(`UPDATE webhook_deliveries SET last_failure_at = NULL`);
    const fill = path.join(MIGRATIONS_DIR, '20261128220001_delivery_last_failure_filled', 'migration.sql');
    await client.query(fs.readFileSync(fill, 'utf8'));
    expect((await client.query(`SELECT id, last_failure_at FROM webhook_deliveries ORDER BY id`)).rows).toEqual(
      kept.rows,
    );
  });
});
