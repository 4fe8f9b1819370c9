// The webhook worker's claim and record (src/storage/deliveries.ts) once webhook_deliveries holds a history of
// finished deliveries, whose statistics make the pending ones look like a row or two: the claim's work grows with the
// pending deliveries, not with their product by the deliveries it leases, and recording an attempt reads its own
// delivery, not every pending one. The plans actually run, with their rows (auto_explain).
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { setWebhook } from '../../src/admin/webhooks.js';
import { newRowId } from '../../src/domain/ids.js';
import type { Storage } from '../../src/storage/storage.js';
import { createTenant } from '../helpers/fixtures.js';
import { bulkInsertCallEvents, bulkInsertCalls, bulkInsertDeliveries } from '../helpers/seed.js';
import { databaseReportingPlans, PlanCapture, walk, type PlanNode } from '../helpers/plan-capture.js';

/** Finished deliveries of the history; pending ones of an endpoint at its cap (one timing out); and due ones. */
const HISTORY = 20_000;
const WAITING = 400;
const DUE = 100;

const capture = new PlanCapture();
let client: pg.Client;
let storage: Storage;
let end: () => Promise<void>;
let healthy: string;
let stalled: string;

/** `count` deliveries to `endpointId` in `status`, with their calls and events, a minute apart from `minutes` ago back. */
async function deliveries(
  tenant: { accountId: string; agentId: string },
  endpointId: string,
  count: number,
  status: 'succeeded' | 'pending',
  minutes: number,
) {
  const now = Date.now();
  const times = Array.from({ length: count }, (_, i) => new Date(now - (minutes + i + 1) * 60_000));
  const calls = await bulkInsertCalls(
    client,
    times.map((t) => ({ ...tenant, status: 'completed' as const, createdAt: t, expiresAt: t, endedAt: t })),
  );
  const events = await bulkInsertCallEvents(
    client,
    calls.map((callId, i) => ({
      callId,
      fromStatus: 'in_progress',
      toStatus: 'completed',
      source: 'provider',
      occurredAt: times[i]!,
    })),
  );
  const done = status !== 'pending';
  await bulkInsertDeliveries(
    client,
    calls.map((callId, i) => ({
      endpointId,
      callId,
      callEventId: events[i]!,
      eventType: 'call.completed',
      status,
      attemptCount: done ? 1 : 0,
      nextAttemptAt: times[i]!,
      lastAttemptAt: done ? times[i]! : null,
      completedAt: done ? times[i]! : null,
      createdAt: times[i]!,
    })),
  );
}

beforeAll(async () => {
  const reporting = await databaseReportingPlans(capture);
  client = reporting.client;
  ({ storage, end } = reporting.storages[0]!);
  const tenants = [await createTenant(storage), await createTenant(storage)];
  const endpoints: string[] = [];
  for (const tenant of tenants) {
    await setWebhook(storage, tenant.accountId, 'http://127.0.0.1:9/hooks', { allowPrivate: true, now: new Date() });
    const { rows } = await client.query<{ id: string }>('SELECT id FROM webhook_endpoints WHERE account_id = $1', [
      tenant.accountId,
    ]);
    endpoints.push(rows[0]!.id);
  }
  [healthy, stalled] = endpoints as [string, string];
  // The history, analysed: every delivery in it succeeded. Then the pending ones, after the statistics were taken.
  await deliveries(tenants[0]!, healthy, HISTORY, 'succeeded', 60);
  await client.query('ANALYZE webhook_deliveries');
  await deliveries(tenants[1]!, stalled, WAITING, 'pending', 30);
  await deliveries(tenants[0]!, healthy, DUE, 'pending', 1);
});

afterAll(async () => {
  capture.stop();
  await end?.();
  await client?.end();
});

/** Every row each node of the plan returned or filtered out (joins' comparisons included), over all its loops. */
function rowsHandled(plan: PlanNode): number {
  let rows = 0;
  walk(plan, (node) => {
    rows +=
      (Number(node['Actual Rows'] ?? 0) +
        Number(node['Rows Removed by Filter'] ?? 0) +
        Number(node['Rows Removed by Join Filter'] ?? 0)) *
      Number(node['Actual Loops'] ?? 1);
  });
  return rows;
}

/** The rows the plan's scans of webhook_deliveries read (returned or filtered out), over all their loops. */
function deliveryRowsRead(plan: PlanNode): number {
  let rows = 0;
  walk(plan, (node) => {
    if (node['Relation Name'] === 'webhook_deliveries')
      rows +=
        (Number(node['Actual Rows'] ?? 0) + Number(node['Rows Removed by Filter'] ?? 0)) *
        Number(node['Actual Loops'] ?? 1);
  });
  return rows;
}

/** The plan of the one statement run in `phase` whose text includes `marker`. */
function planOf(phase: string, marker: string): PlanNode {
  const plans = capture.runtimePlans.filter((p) => p.phase === phase && p.text.includes(marker));
  expect(plans, `${phase}: plans reported`).toHaveLength(1);
  return plans[0]!.plan;
}

it('claims and records in work that grows with the pending deliveries, not with their product by those leased', async () => {
  // The statistics the planner has: no pending delivery at all.
  const { rows: stats } = await client.query<{ values: string }>(
    `SELECT most_common_vals::text AS values FROM pg_stats WHERE tablename = 'webhook_deliveries' AND attname = 'status'`,
  );
  expect(stats[0]?.values).toBe('{succeeded}');

  capture.start();
  const now = new Date();
  const claimed = await capture.during('claim', () =>
    storage.deliveries.claimDueDeliveries({
      now,
      inFlight: new Map([[stalled, DUE]]),
      perEndpoint: DUE,
      limit: DUE,
      leaseUntil: new Date(now.getTime() + 60_000),
    }),
  );
  expect(claimed).toHaveLength(DUE);
  expect(new Set(claimed.map((d) => d.endpointId))).toEqual(new Set([healthy]));
  const attempt = (delivery: { id: string; endpointId: string }) => ({
    attemptId: newRowId(),
    deliveryId: delivery.id,
    startedAt: now,
    durationMs: 5,
    responseStatus: 200,
    error: null,
    responseBody: '',
    responseBodyTruncated: false,
    attemptCount: 1,
    status: 'succeeded' as const,
    completedAt: now,
    nextAttemptAt: null,
    endpointId: delivery.endpointId,
    disabledReason: null,
  });
  // One at a time, as the worker mostly records them (a prepared statement: custom plans, then perhaps its generic
  // plan), then the rest in one batch.
  const batches = [...claimed.slice(0, 10).map((d) => [d]), claimed.slice(10)];
  for (const [i, batch] of batches.entries())
    await capture.during(`record ${i}`, () => storage.deliveries.recordAttempts(batch.map(attempt), now));
  capture.stop();

  const pending = WAITING + DUE;
  // The claim ranks the pending deliveries due (a few passes over them: scan, sorts, window), then leases DUE by id.
  // Reached through `status = 'pending'`, the lease compared every pending delivery with every one locked: over
  // 100,000 rows here.
  const claim = planOf('claim', 'in_flight AS');
  expect.soft(rowsHandled(claim), 'rows handled by the claim').toBeLessThan(10 * pending);
  // Recording reads its own deliveries (by id), not every pending one besides.
  for (const [i, batch] of batches.entries()) {
    const record = planOf(`record ${i}`, 'unnest($1::uuid[], $2::uuid[]');
    expect
      .soft(deliveryRowsRead(record), `deliveries read recording ${batch.length}`)
      .toBeLessThanOrEqual(batch.length);
  }
  const { rows: after } = await client.query<{ succeeded: number; waiting: number }>(
    `SELECT count(*) FILTER (WHERE id = ANY($1::uuid[]) AND status = 'succeeded')::int AS succeeded,
            count(*) FILTER (WHERE endpoint_id = $2 AND status = 'pending')::int AS waiting
       FROM webhook_deliveries`,
    [claimed.map((d) => d.id), stalled],
  );
  expect(after[0]).toEqual({ succeeded: DUE, waiting: WAITING });
});
