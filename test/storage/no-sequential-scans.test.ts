// No path reads calls, call_events, webhook_deliveries or webhook_attempts from end to end (issue 16.2). On a database
// big enough for the planner to care (104,000 finished calls with three events each over 33 accounts, 61,000 deliveries
// with 83,000 attempts, 2,500 waiting calls, 6,000 idempotency records; set-based SQL, then ANALYZE), every statement
// the service sends while it triggers calls (accepted, replayed, refused), follows Twilio's callbacks, dispatches and
// advances calls, delivers webhooks (retry, give up, 410, unsent), serves the dashboard's calls, call, overview,
// delivery log and resends, and runs a retention pass is EXPLAINed with its values and, when prepared (ours and
// Prisma's: src/storage/database.ts names them), as its generic plan; and the plans it actually ran with, nested ones
// included (the acceptance function, triggers, foreign-key cascades), come from auto_explain. There is no API route that
// reads a call: the API is the trigger alone.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/admin/agents.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import type { App } from '../../src/app.js';
import { runRetentionPass, retentionPolicy } from '../../src/jobs/retention.js';
import { twilioSignature } from '../../src/routes/telephony/twilio.js';
import { createPrisma } from '../../src/storage/database.js';
import { createRetentionPool, RetentionRepository } from '../../src/storage/retention.js';
import { declaredStatements } from '../../src/storage/statements.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor } from '../dashboard/helpers.js';
import { buildTestApp, closeTestApp } from '../helpers/app.js';
import { freshDatabase, storageOf } from '../helpers/database.js';
import { match } from '../helpers/matchers.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import {
  bulkInsertAttempts,
  bulkInsertCallEvents,
  bulkInsertCalls,
  bulkInsertEndpoints,
  bulkInsertIdempotencyRecords,
  insertAgencies,
  insertCallAt,
  insertDeliveriesOfNewestCalls,
  insertFinishedHistory,
} from '../helpers/seed.js';
import {
  GROWING_TABLES,
  checkRuntimePlans,
  checkStatements,
  describeFindings,
  PlanCapture,
  reportPlansToClients,
  touchesGrowingTables,
  type CheckReport,
  type RuntimePlan,
} from '../helpers/plan-capture.js';
import { startReceiver } from '../helpers/receiver.js';
import { callIdOf, trigger } from '../helpers/trigger.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const PUBLIC = 'https://calls.example.test';
const TWILIO_TOKEN = 'scan-token';
/** The API app is built with TLS_MODE=proxy (for the dashboard): a request is https when it says so. */
const HTTPS = { 'x-forwarded-proto': 'https' };
const PHASES = ['trigger', 'callbacks', 'dispatch', 'webhooks', 'dashboard', 'retention'] as const;

/** The hand-written statements each path must have been seen sending (Prisma's have no stable names). */
const EXPECTED: Record<(typeof PHASES)[number], string[]> = {
  trigger: ['oct_accept_call_v4'],
  callbacks: ['oct_lock_calls', 'oct_transition_batch'],
  dispatch: [
    'oct_lock_due_accounts',
    'oct_claim_candidates',
    'oct_transition_batch',
    'oct_record_intents',
    'oct_record_dialled',
    'oct_sim_due',
    'oct_sim_lock_due',
    'oct_expired',
    'oct_lock_expired',
    'oct_stale_claims',
    'oct_take_over',
    'oct_record_webhook_attempts',
  ],
  webhooks: ['oct_claim_deliveries', 'oct_record_webhook_attempts'],
  dashboard: [
    'oct_call_history',
    'oct_call_history_status',
    'oct_call_history_agent_id',
    'oct_call_search_number',
    'oct_call_search_name',
    'oct_call_search_name_merge',
    'oct_call_search_name_newest',
    'oct_call_search_metadata',
    'oct_call_search_page',
    'oct_call_search_probe',
    'oct_call_history_name_prefix',
    'oct_call_history_metadata',
    'oct_call_history_outcome',
    'oct_call_history_outcome_labels_by_agency',
    'oct_call_history_result',
    'oct_overview_chart_agency',
    'oct_live_call_counts',
  ],
  retention: ['oct_retention_webhook_deliveries', 'oct_retention_calls', 'oct_retention_idempotency_records'],
};

const capture = new PlanCapture();
const NOW = new Date();
let url: string;
let admin: pg.Client;
afterAll(async () => {
  capture.stop();
  await admin?.end();
});

interface Seeded {
  a: Tenant;
  b: Tenant;
  q: Tenant;
  agentA2: string;
  rareAgent: string;
  noise: { accountId: string; agentId: string }[];
  secret: string;
}

/**
 * 104,000 finished calls, each account's over the last 367 days (the oldest past a year's retention), with three events
 * each; two deliveries (one attempt, or ten when failed) for every call of the last 32 days to an endpoint; waiting
 * calls (for a window, due, expired), claims of a dispatcher that died, and idempotency records.
 */
async function seed(db: pg.Client, second: pg.Client, s: Seeded) {
  const spec = [
    { account: s.a.accountId, agents: [s.a.agentId, s.agentA2], rare: s.rareAgent, n: 40_000 },
    { account: s.b.accountId, agents: [s.b.agentId, s.b.agentId], rare: s.b.agentId, n: 10_000 },
    ...s.noise.map((x) => ({ account: x.accountId, agents: [x.agentId, x.agentId], rare: x.agentId, n: 1_800 })),
  ];
  // Loaded as pg_restore loads data, or the setup would take minutes on a busy 2-core machine: foreign-key and other
  // triggers off (the rows are consistent by construction, and none of them waits, so the waiting counter has nothing
  // to count), the secondary indexes built at the end from their own definitions instead of maintained row by row, on
  // two connections.
  const { rows: indexes } = await db.query<{ name: string; definition: string }>(
    `
    SELECT indexname AS name, indexdef AS definition FROM pg_indexes
     WHERE schemaname = current_schema() AND tablename = ANY($1::text[]) AND indexname NOT IN (SELECT conname FROM pg_constraint)`,
    [GROWING_TABLES],
  );
  for (const { name } of indexes) await db.query(`DROP INDEX "${name}"`);
  const load = async (client: pg.Client, part: typeof spec) => {
    await client.query('SET session_replication_role = replica');
    await insertFinishedHistory(
      client,
      part.map((x) => ({ accountId: x.account, agents: [x.agents[0]!, x.agents[1]!], rare: x.rare, n: x.n })),
      NOW,
    );
    await client.query('RESET session_replication_role');
  };
  await Promise.all([load(db, spec.slice(0, 2)), load(second, spec.slice(2))]);
  const half = Math.ceil(indexes.length / 2);
  await Promise.all(
    [indexes.slice(0, half), indexes.slice(half)].map(async (part, i) => {
      for (const { definition } of part) await [db, second][i]!.query(definition);
    }),
  );

  // Waiting calls: a queue past MAX_QUEUED_CALLS (waiting for a window), windows in the noise accounts, calls due
  // now, calls past their time to live; and three claims whose dispatcher died (never dialled, or dial unknown).
  const waiting = [
    { account: s.q.accountId, agent: s.q.agentId, n: 1_500, notBefore: 2 * DAY, expires: 3 * DAY },
    ...s.noise.map((x) => ({ account: x.accountId, agent: x.agentId, n: 30, notBefore: 2 * DAY, expires: 3 * DAY })),
    ...s.noise
      .slice(0, 20)
      .map((x) => ({ account: x.accountId, agent: x.agentId, n: 2, notBefore: -10 * MINUTE, expires: DAY })),
    ...s.noise
      .slice(20)
      .map((x) => ({ account: x.accountId, agent: x.agentId, n: 5, notBefore: -2 * DAY, expires: -DAY })),
  ];
  const at = (ms: number) => new Date(NOW.getTime() + ms);
  const waitingCalls = waiting.flatMap((w) =>
    Array.from({ length: w.n }, (_, i) => {
      const notBefore = at(w.notBefore);
      return {
        accountId: w.account,
        agentId: w.agent,
        notBefore,
        expiresAt: at(w.expires),
        createdAt: new Date(Math.min(notBefore.getTime(), NOW.getTime()) - (i + 1) * 1000),
        updatedAt: NOW,
      };
    }),
  );
  const waitingIds = await bulkInsertCalls(db, waitingCalls);
  await bulkInsertCallEvents(
    db,
    waitingIds.map((callId, i) => ({
      callId,
      toStatus: 'initiated',
      source: 'api',
      occurredAt: waitingCalls[i]!.createdAt,
    })),
  );
  await bulkInsertCalls(
    db,
    [0, 0, 1].map((dialAttempts) => ({
      accountId: s.noise[0]!.accountId,
      agentId: s.noise[0]!.agentId,
      status: 'dialing' as const,
      notBefore: at(-5 * MINUTE),
      expiresAt: at(DAY),
      createdAt: at(-5 * MINUTE),
      updatedAt: NOW,
      startedAt: at(-2 * MINUTE),
      dialAttempts,
      leaseOwner: 'dead-dispatcher',
      leaseExpiresAt: at(-MINUTE),
    })),
  );
  // A call a Twilio dispatcher is dialling (its lease still holds; the provider's sid not yet recorded): the callbacks' call.
  const dialing = await insertCallAt(db, {
    accountId: s.a.accountId,
    agentId: s.a.agentId,
    status: 'dialing',
    createdAt: NOW,
    startedAt: NOW,
    dialAttempts: 1,
    leaseOwner: 'twilio-dispatcher',
    leaseExpiresAt: at(DAY),
  });
  await bulkInsertIdempotencyRecords(
    db,
    Array.from({ length: 6000 }, (_, i) => {
      const createdAt = at(-((i + 1) % 1700) * MINUTE);
      return {
        accountId: s.a.accountId,
        key: `seed-${i + 1}`,
        requestHash: 'hash',
        responseStatus: 200,
        responseBody: '{"success":true}',
        createdAt,
        expiresAt: new Date(createdAt.getTime() + DAY),
      };
    }),
  );

  // Deliveries the webhook phase sends (due an hour from now, when its clock gets there), and a backlog not yet due.
  const pendingOf = (accountId: string, count: number, attemptCount: number, due: number) =>
    insertDeliveriesOfNewestCalls(db, { accountId, count, attemptCount, nextAttemptAt: at(due), createdAt: NOW });
  const [giveUp] = await pendingOf(s.a.accountId, 1, 9, HOUR);
  await bulkInsertAttempts(
    db,
    Array.from({ length: 9 }, (_, i) => ({
      deliveryId: giveUp!,
      attemptNumber: i + 1,
      startedAt: at(-DAY),
      durationMs: 40,
      responseStatus: 500,
    })),
  );
  const [retry] = await pendingOf(s.a.accountId, 1, 0, HOUR);
  const [gone] = await pendingOf(s.b.accountId, 1, 0, HOUR);
  const [unsent] = await pendingOf(s.b.accountId, 1, 0, 2 * HOUR);
  for (const x of s.noise.slice(0, 10)) await pendingOf(x.accountId, 30, 2, 3 * DAY);
  return { giveUp: giveUp!, retry: retry!, gone: gone!, unsent: unsent!, dialing };
}

/** A status or TwiML callback as Twilio sends it, signed. */
function callback(app: App, kind: 'status' | 'twiml', callId: string, params: Record<string, string>) {
  const path = `/telephony/twilio/${kind}?call_id=${callId}`;
  return app.inject({
    method: 'POST',
    url: path,
    payload: new URLSearchParams(params).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': twilioSignature(TWILIO_TOKEN, `${PUBLIC}${path}`, params),
    },
  });
}

const declared = new Map(declaredStatements().map((s) => [s.text, s.name]));
/** A hand-written statement by its declared name; Prisma's (named oct_pN per process) and others by their text. */
function label(s: { name: string | undefined; text: string }): string {
  return (
    declared.get(s.text) ??
    `${s.name?.startsWith('oct_p') ? 'Prisma' : 'SQL'}: ${s.text.replace(/\s+/g, ' ').trim().slice(0, 140)}`
  );
}

let report: CheckReport;
let runtimePlans: RuntimePlan[];

beforeAll(async () => {
  const database = await freshDatabase();
  url = database.url;
  admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const receivers = { a: await startReceiver('/a'), b: await startReceiver('/b'), n: await startReceiver('/n') };
  // A's endpoint fails (500: attempts are retried, the last one gives up) until the webhook phase's second round; B's
  // answers 410 Gone.
  let failing = true;
  receivers.a.respond = () => ({ status: failing ? 500 : 200 });
  receivers.b.respond = () => ({ status: 410 });

  // Tenants through the operator functions, on a client of the test's own (closed before the service starts).
  const prisma = createPrisma(url, { max: 2 });
  let seeded: Seeded;
  try {
    const a = await createTenant(prisma);
    const agentA2 = (
      await createAgent(storageOf(prisma), {
        accountId: a.accountId,
        name: 'Second Agent',
        phone: '+14155550101',
        now: new Date(),
      })
    ).id;
    const rareAgent = (
      await createAgent(storageOf(prisma), {
        accountId: a.accountId,
        name: 'Rare Agent',
        phone: '+14155550102',
        now: new Date(),
      })
    ).id;
    const b = await createClientTenant(prisma, a.accountId);
    const q = await createTenant(prisma);
    const { secret } = await setWebhook(storageOf(prisma), a.accountId, receivers.a.url, {
      allowPrivate: true,
      now: new Date(),
    });
    await setWebhook(storageOf(prisma), b.accountId, receivers.b.url, { allowPrivate: true, now: new Date() });
    await createUserWithPassword(prisma, a.accountId, 'owner@scans.example');
    seeded = { a, b, q, agentA2, rareAgent, secret, noise: [] };
  } finally {
    await prisma.$disconnect();
  }
  const noise = (await insertAgencies(admin, { prefix: 'Agency ', count: 30, agentName: 'Agent' })).map((x) => ({
    accountId: x.accountId,
    agentId: x.agentId!,
  }));
  await bulkInsertEndpoints(
    admin,
    noise.map((x) => ({ accountId: x.accountId, url: receivers.n.url, secret: seeded.secret })),
  );
  seeded.noise = noise;
  const second = new pg.Client({ connectionString: url });
  await second.connect();
  const { giveUp, retry, gone, unsent, dialing } = await seed(admin, second, seeded).finally(() => second.end());
  await admin.query('ANALYZE');
  await reportPlansToClients(admin, database.name);
  const { a, b, q, agentA2, rareAgent } = seeded;

  const { app: api, config } = await buildTestApp({
    databaseUrl: url,
    env: { ...DASHBOARD_ENV, RETENTION_ENABLED: 'false' },
  });
  const twilio = (
    await buildTestApp({
      databaseUrl: url,
      env: {
        DIALER: 'twilio',
        TWILIO_ACCOUNT_SID: `AC${'0'.repeat(32)}`,
        TWILIO_AUTH_TOKEN: TWILIO_TOKEN,
        TWILIO_API_BASE_URL: 'http://127.0.0.1:9',
        PUBLIC_BASE_URL: PUBLIC,
        AGENT_STREAM_URL: 'wss://agent.example.test/stream',
        RETENTION_ENABLED: 'false',
      },
    })
  ).app;
  capture.start();

  const triggered = await capture.during('trigger', async () => {
    const accepted = async (key: string, body: object, headers: Record<string, string> = {}) => {
      const response = await trigger(api, key, body, { ...HTTPS, ...headers });
      expect(response.statusCode, response.body).toBe(200);
      return response;
    };
    const ids = [];
    for (const body of [
      { phone_number: '+14155552671' },
      { phone_number: '+15005550001' },
      { phone_number: '+14155552672', agent_id: agentA2 },
    ]) {
      ids.push(callIdOf(await accepted(a.key, body)));
    }
    const keyed = { phone_number: '+14155552671', metadata: { crm_id: 'L-1' } };
    ids.push(callIdOf(await accepted(a.key, keyed, { 'idempotency-key': 'scan-1' })));
    expect((await accepted(a.key, keyed, { 'idempotency-key': 'scan-1' })).headers['idempotent-replayed']).toBe('true');
    expect(
      (await trigger(api, a.key, { phone_number: '+14155552679' }, { ...HTTPS, 'idempotency-key': 'scan-1' }))
        .statusCode,
    ).toBe(422);
    expect((await trigger(api, q.key, { phone_number: '+14155552671' }, HTTPS)).statusCode).toBe(429);
    expect(
      (await trigger(api, q.key, { phone_number: '+14155552671' }, { ...HTTPS, 'idempotency-key': 'scan-2' }))
        .statusCode,
    ).toBe(429);
    return { ids, canceled: callIdOf(await accepted(a.key, { phone_number: '+14155552673' })) };
  });

  await capture.during('callbacks', async () => {
    const sid = `CA${'a'.repeat(32)}`;
    const status = (callId: string, callStatus: string, more: Record<string, string> = {}) =>
      callback(twilio, 'status', callId, { CallSid: sid, CallStatus: callStatus, ...more });
    expect((await status(dialing, 'ringing')).statusCode).toBe(204);
    expect((await callback(twilio, 'twiml', dialing, { CallSid: sid })).statusCode).toBe(200);
    expect((await status(dialing, 'in-progress')).statusCode).toBe(204);
    expect((await status(dialing, 'completed', { CallDuration: '42' })).statusCode).toBe(204);
    expect(
      (await callback(twilio, 'status', triggered.canceled, { CallSid: `CA${'b'.repeat(32)}`, CallStatus: 'canceled' }))
        .statusCode,
    ).toBe(204);
  });
  await closeTestApp(twilio);
  const statusOf = async (ids: string[]) =>
    (
      await admin.query<{ status: string }>('SELECT status::text FROM calls WHERE id = ANY($1::uuid[]) ORDER BY id', [
        ids,
      ])
    ).rows.map((r) => r.status);
  expect(await statusOf([dialing, triggered.canceled])).toEqual(expect.arrayContaining(['completed', 'failed']));

  // The dispatcher and the webhook worker of a process of their own, on an injected clock, driven by settle().
  const clock = { now: new Date() };
  const tick = (ms: number) => {
    clock.now = new Date(clock.now.getTime() + ms);
  };
  const jobs = await capture.during('dispatch', async () => {
    const { app } = await buildTestApp({
      databaseUrl: url,
      clock: () => clock.now,
      env: {
        DISPATCH_ENABLED: 'true',
        WEBHOOK_DELIVERY_ENABLED: 'true',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        SIMULATED_RING_MS: '1000',
        SIMULATED_TALK_MS: '2000',
        RETENTION_ENABLED: 'false',
      },
      // All due deliveries of an endpoint in one claim: settle() waits for one claim's attempts.
      jobs: { dispatcher: { pollMs: 3_600_000 }, webhooks: { pollMs: 3_600_000, random: () => 0.5, perEndpoint: 100 } },
    });
    await app.dispatcher!.settle();
    tick(1_100);
    await app.dispatcher!.settle();
    tick(2_100);
    await app.dispatcher!.settle();
    await app.deliveryWorker!.settle();
    return app;
  });
  expect(new Set(await statusOf(triggered.ids))).toEqual(new Set(['completed', 'failed']));
  const {
    rows: [swept],
  } = await admin.query<{ expired: number; stale: number }>(`
    SELECT count(*) FILTER (WHERE failure_reason = 'expired')::int AS expired, count(*) FILTER (WHERE lease_owner = 'dead-dispatcher')::int AS stale FROM calls`);
  expect(swept).toEqual({ expired: 50, stale: 0 });

  await capture.during('webhooks', async () => {
    clock.now = new Date(NOW.getTime() + HOUR + 1_000);
    await jobs.deliveryWorker!.settle();
    failing = false;
    clock.now = new Date(NOW.getTime() + 2 * HOUR + 1_000);
    await jobs.deliveryWorker!.settle();
  });
  await closeTestApp(jobs);
  const deliveries = async (ids: string[]) =>
    (
      await admin.query<{ id: string; status: string; attempt_count: number }>(
        'SELECT id, status::text, attempt_count FROM webhook_deliveries WHERE id = ANY($1::uuid[])',
        [ids],
      )
    ).rows;
  expect(
    new Map((await deliveries([giveUp, retry, gone, unsent])).map((d) => [d.id, [d.status, d.attempt_count]])),
  ).toEqual(
    new Map([
      [giveUp, ['failed', 10]],
      [retry, ['succeeded', 2]],
      [gone, ['held', 1]],
      [unsent, ['held', 0]],
    ]),
  );

  const visitor = new Visitor(api);
  expect((await visitor.signIn('owner@scans.example')).status).toBe(303);
  const {
    rows: [deep],
  } = await admin.query<{ created_at: Date; id: string }>(
    'SELECT created_at, id FROM calls WHERE account_id = ANY($1::uuid[]) ORDER BY created_at DESC, id DESC OFFSET 45000 LIMIT 1',
    [[a.accountId, b.accountId]],
  );
  const {
    rows: [deepDelivery],
  } = await admin.query<{ created_at: Date; id: string }>(
    `
    SELECT d.created_at, d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
     WHERE e.account_id = $1 ORDER BY d.created_at DESC, d.id DESC OFFSET 3000 LIMIT 1`,
    [a.accountId],
  );
  const {
    rows: [detail],
  } = await admin.query<{ call_id: string }>('SELECT call_id FROM webhook_deliveries WHERE id = $1', [giveUp]);
  const cursor = (row: { created_at: Date; id: string }) =>
    encodeURIComponent(`${row.created_at.toISOString()}_${row.id}`);
  const day = new Date(NOW.getTime() - 100 * DAY).toISOString().slice(0, 10);
  await capture.during('dashboard', async () => {
    for (const page of [
      '/dashboard',
      '/dashboard/calls',
      `/dashboard/calls?before=${cursor(deep!)}`,
      '/dashboard/calls?status=failed',
      `/dashboard/calls?status=failed&before=${cursor(deep!)}`,
      `/dashboard/calls?agent=${rareAgent}`,
      `/dashboard/calls?agent=${agentA2}&status=completed`,
      `/dashboard/calls?number=${encodeURIComponent('+14150000123')}`,
      `/dashboard/calls?number=${encodeURIComponent('+1415000012')}`,
      '/dashboard/calls?name=caller%2012',
      // Matches nearly every call: a page of it is among the newest calls, which the probe reads first.
      '/dashboard/calls?name=caller',
      // Matches thousands of calls (11,111 of account a's), a few of them among the newest: the probe finds no page
      // but enough matches that the list is walked in order rather than the index asked.
      '/dashboard/calls?name=caller%203',
      // One old call: none among the newest, so the name's index finds it, alone (no other filter) and with a status
      // (the index hands over its matches, each row then filtered).
      '/dashboard/calls?name=caller%2039999',
      '/dashboard/calls?name=caller%2039999&status=completed',
      // 1,111 names (39, 390-399, 3900-3999, 39000-39999), one among the newest: more names than the list merges, so
      // every match is read from the name index.
      '/dashboard/calls?name=caller%2039',
      '/dashboard/calls?meta_key=order&meta_value=123',
      '/dashboard/calls?outcome=booked',
      '/dashboard/calls?outcome=booked&status=completed',
      '/dashboard/calls?outcome=booked&name=caller%2012',
      `/dashboard/calls?client=${b.accountId}&outcome=booked`,
      '/dashboard?days=30',
      `/dashboard/calls?client=${b.accountId}`,
      // One client chosen: its calls and those listed for it (an agency's key on its agents), each part by its index.
      `/dashboard/calls?client=${b.accountId}&name=caller%2012`,
      `/dashboard/calls?client=${b.accountId}&number=${encodeURIComponent('+1415000012')}`,
      `/dashboard/calls?client=${b.accountId}&meta_key=order&meta_value=123`,
      `/dashboard/calls?client=${b.accountId}&status=failed`,
      `/dashboard/calls?from=${day}&to=${day}`,
      `/dashboard/calls?call=${detail!.call_id}`,
      `/dashboard/calls/${detail!.call_id}`,
      '/dashboard/settings/api-webhooks',
      '/dashboard/settings/api-webhooks/deliveries',
      '/dashboard/settings/api-webhooks/deliveries?failed=1',
      `/dashboard/settings/api-webhooks/deliveries?before=${cursor(deepDelivery!)}`,
      '/dashboard/settings/api-webhooks/deliveries?status=pending',
      `/dashboard/settings/api-webhooks/deliveries?status=failed&before=${cursor(deepDelivery!)}`,
      '/dashboard/settings/api-webhooks/deliveries?event=call.failed&status=succeeded',
      `/dashboard/settings/api-webhooks/deliveries?from=${day}&to=${day}`,
      `/dashboard/clients/${b.accountId}/api-webhooks/deliveries`,
    ])
      expect((await visitor.get(page)).status, page).toBe(200);
    const resend = await visitor.request('POST', `/dashboard/settings/api-webhooks/deliveries/${giveUp}/resend`, {
      _csrf: visitor.lastCsrf!,
    });
    expect(resend.status, resend.body).toBe(303);
    const since = new Date(NOW.getTime() - 2 * DAY).toISOString().slice(0, 16);
    const resent = await visitor.request('POST', '/dashboard/settings/api-webhooks/deliveries/resend-failed', {
      _csrf: visitor.lastCsrf!,
      since,
    });
    expect(resent.status, resent.body).toBe(303);
  });

  const pool = createRetentionPool(url);
  const pass = await capture.during('retention', () =>
    runRetentionPass({
      retention: new RetentionRepository(pool),
      now: new Date(NOW.getTime() + DAY),
      policy: retentionPolicy(config),
      batchSize: 500,
      pauseMs: 0,
    }),
  );
  await pool.end();
  expect(pass.outcome).toBe('completed');
  expect(pass.deleted).toMatchObject({ calls: match.any(Number), webhook_deliveries: match.any(Number) });
  expect(
    Math.min(
      pass.deleted.calls,
      pass.deleted.call_events,
      pass.deleted.webhook_deliveries,
      pass.deleted.webhook_attempts,
    ),
  ).toBeGreaterThan(0);
  capture.stop();

  const checker = new pg.Client({ connectionString: url });
  await checker.connect();
  try {
    await checker.query('SET auto_explain.log_min_duration = -1');
    report = await checkStatements(checker, capture.statements, { label });
  } finally {
    await checker.end();
  }
  runtimePlans = capture.runtimePlans;
});

describe('no sequential scans of calls, call_events, webhook_deliveries or webhook_attempts', () => {
  it('captured every path: the statements each must send, and plans reading the growing tables in each', () => {
    for (const phase of PHASES) {
      const sent = new Set(capture.statements.filter((s) => s.phase === phase).map(label));
      expect(
        EXPECTED[phase].filter((name) => !sent.has(name)),
        `${phase}: expected statements not captured`,
      ).toEqual([]);
      const nested = runtimePlans.filter((p) => p.phase === phase && touchesGrowingTables(p.plan));
      expect(
        (report.perPhase.get(phase)?.growing.size ?? 0) + nested.length,
        `${phase}: no plan read a growing table`,
      ).toBeGreaterThan(0);
    }
  });

  it('no statement is planned with one, with its values or as its generic plan', () => {
    expect(report.errors).toEqual([]);
    expect(describeFindings(report.findings)).toBe('');
  });

  it('no statement ran with one, nested statements included: the acceptance function, triggers, cascades', () => {
    expect(describeFindings(checkRuntimePlans(runtimePlans))).toBe('');
  });

  it('the check finds one when an index a path relies on is gone', async () => {
    const checker = new pg.Client({ connectionString: url });
    await checker.connect();
    try {
      await checker.query('SET auto_explain.log_min_duration = -1');
      const attempts = capture.statements.filter((s) => s.phase === 'webhooks' && s.text.includes('webhook_attempts'));
      expect(attempts.length).toBeGreaterThan(0);
      const broken = await checkStatements(checker, attempts, {
        label,
        setup: async (client) => {
          await client.query('DROP INDEX webhook_attempts_delivery_id_attempt_number_idx');
        },
      });
      expect(broken.errors).toEqual([]);
      expect(broken.findings.map((f) => `${f.mode} ${f.label}`)).toContain('custom oct_record_webhook_attempts');
      expect(describeFindings(broken.findings)).toMatch(/-> Seq Scan on webhook_attempts/);
    } finally {
      await checker.end();
    }
  });
});
