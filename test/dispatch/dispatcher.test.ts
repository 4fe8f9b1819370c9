// The dispatcher with the simulated dialer: at most MAX_CONCURRENT_CALLS active per account across replicas, FIFO,
// every call ends exactly once, a claim whose worker died is dialled exactly once by another, windows and expiry.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { CALLS_CHANNEL, WEBHOOKS_CHANNEL } from '../../src/storage/channels.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import type { App } from '../../src/app.js';
import { createAgent } from '../../src/admin/agents.js';
import { SimulatedDialer } from '../../src/dispatch/simulated-dialer.js';
import { lockDueAccounts } from '../../src/storage/call-claims.js';
import { sqlPool } from '../../src/storage/database.js';
import { buildTestApp, closeTestApp, prismaOf } from '../helpers/app.js';
import { freshDatabase } from '../helpers/database.js';
import { startReceiver } from '../helpers/receiver.js';
import { createTenant } from '../helpers/fixtures.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { waitFor } from '../helpers/wait.js';
import { waitingCallNobodyAnnounced, forceCall } from '../helpers/seed.js';

const FAST = { DISPATCH_ENABLED: 'true', SIMULATED_RING_MS: '30', SIMULATED_TALK_MS: '120' };

/** A fresh file for SIMULATED_DIAL_LOG: the simulated dialer writes one line per dial to it. */
function dialLog(): string {
  return path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'oct-dials-')), 'dials.log');
}

/** How many times each call was dialled, from one or more dial logs. */
function dialsIn(...logs: string[]): Map<string, number> {
  const dials = new Map<string, number>();
  for (const log of logs) {
    const lines = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
    for (const id of lines) dials.set(id, (dials.get(id) ?? 0) + 1);
  }
  return dials;
}

/** The largest number of the account's calls that were dialing or in progress at one instant, from their times. */
async function peakConcurrency(app: App, accountId: string): Promise<number> {
  const calls = await prismaOf(app).call.findMany({ where: { accountId }, select: { startedAt: true, endedAt: true } });
  const edges = calls
    .flatMap(
      (c) =>
        [
          [c.startedAt!.getTime(), 1],
          [c.endedAt!.getTime(), -1],
        ] as const,
    )
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  let peak = 0;
  for (const [, delta] of edges) peak = Math.max(peak, (now += delta));
  return peak;
}

describe('dispatcher', () => {
  it('dials in FIFO order, never more than MAX_CONCURRENT_CALLS at once, and ends every call exactly once', async () => {
    const log = dialLog();
    const { app } = await buildTestApp({ env: { ...FAST, MAX_CONCURRENT_CALLS: '3', SIMULATED_DIAL_LOG: log } });
    const tenant = await createTenant(app.storage);
    const ids: string[] = [];
    for (let i = 0; i < 9; i++)
      ids.push(callIdOf(await trigger(app, tenant.key, { phone_number: i === 4 ? '+15005550001' : '+14155552671' })));

    let sampledPeak = 0;
    const calls = await waitFor(
      async () => {
        sampledPeak = Math.max(
          sampledPeak,
          await prismaOf(app).call.count({
            where: { accountId: tenant.accountId, status: { in: ['dialing', 'in_progress'] } },
          }),
        );
        return prismaOf(app).call.findMany({ where: { accountId: tenant.accountId }, include: { events: true } });
      },
      (cs) => cs.every((c) => c.status === 'completed' || c.status === 'failed'),
    );

    expect(sampledPeak).toBeLessThanOrEqual(3);
    expect(await peakConcurrency(app, tenant.accountId)).toBeLessThanOrEqual(3);
    const byId = new Map(calls.map((c) => [c.id, c]));
    expect(byId.get(ids[4]!)).toMatchObject({ status: 'failed', failureReason: 'busy' });
    for (const id of ids.filter((_, i) => i !== 4))
      expect(byId.get(id)).toMatchObject({ status: 'completed', failureReason: null });
    // FIFO: dialling began in acceptance order.
    const started = [...calls]
      .sort((a, b) => a.startedAt!.getTime() - b.startedAt!.getTime() || a.createdAt.getTime() - b.createdAt.getTime())
      .map((c) => c.id);
    expect(started).toEqual(ids);
    for (const call of calls) {
      expect(call.dialAttempts).toBe(1);
      expect(call.events.filter((e) => e.toStatus === 'completed' || e.toStatus === 'failed')).toHaveLength(1);
      expect(call.events.filter((e) => e.toStatus === 'dialing')).toHaveLength(1);
    }
    expect(dialsIn(log).size).toBe(9);
    expect([...dialsIn(log).values()].every((n) => n === 1)).toBe(true);
  });

  it('two replicas on one database share the limit: a burst of 30 never has more than 10 active', async () => {
    const { url } = await freshDatabase();
    const logs = [dialLog(), dialLog()] as const;
    const a = (
      await buildTestApp({ databaseUrl: url, env: { ...FAST, SIMULATED_TALK_MS: '200', SIMULATED_DIAL_LOG: logs[0] } })
    ).app;
    const b = (
      await buildTestApp({ databaseUrl: url, env: { ...FAST, SIMULATED_TALK_MS: '200', SIMULATED_DIAL_LOG: logs[1] } })
    ).app;
    const tenant = await createTenant(a.storage);
    await Promise.all(Array.from({ length: 30 }, (_, i) => trigger(i % 2 ? a : b, tenant.key)));
    let sampledPeak = 0;
    await waitFor(
      async () => {
        sampledPeak = Math.max(
          sampledPeak,
          await prismaOf(a).call.count({
            where: { accountId: tenant.accountId, status: { in: ['dialing', 'in_progress'] } },
          }),
        );
        return prismaOf(a).call.count({ where: { accountId: tenant.accountId, status: 'completed' } });
      },
      (n) => n === 30,
      30_000,
    );
    expect(sampledPeak).toBeLessThanOrEqual(10);
    expect(await peakConcurrency(a, tenant.accountId)).toBeLessThanOrEqual(10);
    const dials = dialsIn(...logs);
    expect(dials.size).toBe(30);
    expect([...dials.values()].every((n) => n === 1)).toBe(true);
  });

  it('accounts at their limit do not hide others: 60 accounts with queued calls all get a slot at once', async () => {
    // A claim pass looks at 50 accounts; those at their limit must not be the 50 it keeps looking at.
    const { app } = await buildTestApp({ env: { ...FAST, MAX_CONCURRENT_CALLS: '1', SIMULATED_TALK_MS: '30000' } });
    const tenants = [];
    for (let i = 0; i < 60; i++) tenants.push(await createTenant(app.storage));
    for (const tenant of tenants)
      for (let i = 0; i < 2; i++) expect((await trigger(app, tenant.key)).statusCode).toBe(200);
    const activeAccounts = () =>
      prismaOf(app).call.groupBy({ by: ['accountId'], where: { status: { in: ['dialing', 'in_progress'] } } });
    // Well before the first call ends (30 s of talk), every account has its one call going: an account left out
    // would wait for one of those calls to end.
    const active = await waitFor(activeAccounts, (groups) => groups.length === 60, 15_000);
    expect(active).toHaveLength(60);
    expect(await prismaOf(app).call.count({ where: { status: 'completed' } })).toBe(0);
  });

  it('an API-only process (no dispatcher) NOTIFYs the dispatchers; a process with one wakes it without a NOTIFY', async () => {
    const { url } = await freshDatabase();
    const heard: string[] = [];
    const listener = new pg.Client({ connectionString: url });
    await listener.connect();
    listener.on('notification', (n) => heard.push(n.payload ?? ''));
    await listener.query(`LISTEN ${CALLS_CHANNEL}`);
    try {
      const apiOnly = (await buildTestApp({ databaseUrl: url, env: { ...FAST, DISPATCH_ENABLED: 'false' } })).app;
      const tenant = await createTenant(apiOnly.storage);
      await trigger(apiOnly, tenant.key);
      await waitFor(
        () => heard.length,
        (n) => n === 1,
      );
      // Many acceptances at once: at least one NOTIFY after the last commit, never more than one per call. How many
      // fewer depends on timing (one account's acceptances are serialised by its lock); the coalescing itself is
      // test/jobs/single-flight.test.ts.
      heard.length = 0;
      await Promise.all(Array.from({ length: 40 }, () => trigger(apiOnly, tenant.key)));
      await waitFor(
        () => heard.length,
        (n) => n >= 1,
      );
      // Every acceptance's NOTIFY is in once none came for a second: on a loaded machine one can arrive after a
      // fixed wait, and would be taken for the worker's below.
      for (let seen = -1; seen !== heard.length;) {
        seen = heard.length;
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      expect(heard.length).toBeLessThanOrEqual(40);
      heard.length = 0;

      // Talk long enough that no call ends (an end NOTIFYs too) while we listen.
      const worker = (await buildTestApp({ databaseUrl: url, env: { ...FAST, SIMULATED_TALK_MS: '60000' } })).app;
      const other = await createTenant(worker.storage);
      const callId = callIdOf(await trigger(worker, other.key));
      // Its own dispatcher claims it at once (and the first 10 of the other account's calls on its first pass).
      const call = await waitFor(
        () => prismaOf(worker).call.findUniqueOrThrow({ where: { id: callId } }),
        (c) => c.status === 'in_progress',
      );
      expect(call.dialAttempts).toBe(1);
      expect(
        await prismaOf(worker).call.count({
          where: { accountId: tenant.accountId, status: { in: ['dialing', 'in_progress'] } },
        }),
      ).toBe(10);
      expect(heard).toHaveLength(0);
    } finally {
      await listener.end();
    }
  });

  it('an acceptance wakes a claim for its own account, without the due-accounts query; any other wake asks which accounts are due', async () => {
    // The poll is an hour away and no call ends (an end NOTIFYs): only the wakes of this test run claims.
    const { app } = await buildTestApp({
      env: { ...FAST, SIMULATED_TALK_MS: '60000' },
      jobs: { dispatcher: { pollMs: 3_600_000 } },
    });
    const [a, b] = [await createTenant(app.storage), await createTenant(app.storage)];
    await app.dispatcher!.settle();
    // A call of b's nobody woke the dispatcher for.
    const unannounced = await waitingCallNobodyAnnounced(prismaOf(app), b);
    const callId = callIdOf(await trigger(app, a.key));
    await waitFor(
      () => prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } }),
      (c) => c.status === 'in_progress',
    );
    // The acceptance's claim went straight to a's account: b's call was not looked for.
    expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: unannounced.id } })).status).toBe('initiated');
    app.dispatcher!.wake();
    const found = await waitFor(
      () => prismaOf(app).call.findUniqueOrThrow({ where: { id: unannounced.id } }),
      (c) => c.status === 'in_progress',
    );
    expect(found.dialAttempts).toBe(1);
  });

  it("a call's end wakes a claim for its own account alone, without the due-accounts query", async () => {
    // One call at a time, and the poll an hour away: a's second call can only be claimed on its first call's end.
    const { app } = await buildTestApp({
      env: { ...FAST, MAX_CONCURRENT_CALLS: '1' },
      jobs: { dispatcher: { pollMs: 3_600_000 } },
    });
    const [a, b] = [await createTenant(app.storage), await createTenant(app.storage)];
    await app.dispatcher!.settle();
    const unannounced = await waitingCallNobodyAnnounced(prismaOf(app), b);
    const first = callIdOf(await trigger(app, a.key));
    const second = callIdOf(await trigger(app, a.key));
    const ended = await waitFor(
      () => prismaOf(app).call.findMany({ where: { id: { in: [first, second] } } }),
      (calls) => calls.every((c) => c.status === 'completed'),
    );
    expect(ended.map((c) => c.dialAttempts)).toEqual([1, 1]);
    // The end's NOTIFY named a's account: b's call, due all along, was not looked for.
    expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: unannounced.id } })).status).toBe('initiated');
    app.dispatcher!.wake();
    await waitFor(
      () => prismaOf(app).call.findUniqueOrThrow({ where: { id: unannounced.id } }),
      (c) => c.status !== 'initiated',
    );
  });

  it('a simulated call whose dial is recorded after its ring is over still advances at once, not on the next poll', async () => {
    // The dial takes three rings: the answer is due before the provider id is stored (what a loaded machine does).
    const { app } = await buildTestApp({
      env: { ...FAST, SIMULATED_TALK_MS: '60000' },
      jobs: { dispatcher: { pollMs: 3_600_000, beforeDial: () => new Promise((resolve) => setTimeout(resolve, 100)) } },
    });
    const tenant = await createTenant(app.storage);
    await app.dispatcher!.settle();
    const callId = callIdOf(await trigger(app, tenant.key));
    const call = await waitFor(
      () => prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } }),
      (c) => c.status === 'in_progress',
      3_000,
    );
    expect(call.providerCallId).toBe(`sim_${callId}`);
  });

  it('a claim passes over the accounts another replica is claiming for and locks no more than it takes', async () => {
    const { app, databaseUrl } = await buildTestApp({
      env: { ...FAST, SIMULATED_TALK_MS: '60000' },
      jobs: { dispatcher: { pollMs: 3_600_000 } },
    });
    const tenants = [];
    for (let i = 0; i < 55; i++) tenants.push(await createTenant(app.storage));
    await app.dispatcher!.settle();
    for (const t of tenants) await waitingCallNobodyAnnounced(prismaOf(app), t);
    // Another replica's claim holds 50 of the accounts: its transaction-level locks, here session-level ones (they conflict).
    const other = new pg.Client({ connectionString: databaseUrl });
    await other.connect();
    const claimer = await sqlPool(prismaOf(app)).connect();
    try {
      for (const t of tenants.slice(0, 50))
        await other.query('SELECT pg_advisory_lock(72707370, hashtext($1))', [t.accountId]);
      const free = tenants
        .slice(50)
        .map((t) => t.accountId)
        .sort();
      const advisoryLocksHeld = async () =>
        (
          await claimer.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()",
          )
        ).rows[0]!.n;
      await claimer.query('BEGIN');
      expect((await lockDueAccounts(claimer, { now: new Date(), maxActive: 10, limit: 50 })).sort()).toEqual(free);
      expect(await advisoryLocksHeld()).toBe(5);
      await claimer.query('ROLLBACK');
      await claimer.query('BEGIN');
      const some = await lockDueAccounts(claimer, { now: new Date(), maxActive: 10, limit: 3 });
      expect(some).toHaveLength(3);
      expect(some.every((id) => free.includes(id))).toBe(true);
      expect(await advisoryLocksHeld()).toBe(3);
      await claimer.query('ROLLBACK');
      // The dispatcher itself: the 5 free accounts' calls are dialled; the others wait for their holder.
      app.dispatcher!.wake();
      const active = () =>
        prismaOf(app).call.findMany({
          where: { status: { in: ['dialing', 'in_progress'] } },
          select: { accountId: true },
        });
      const dialled = await waitFor(active, (calls) => calls.length >= 5, 10_000);
      expect(dialled.map((c) => c.accountId).sort()).toEqual(free);
    } finally {
      claimer.release();
      await other.end();
    }
  });

  it("a claim hands its call.started deliveries to its own worker without a NOTIFY; a call's end still NOTIFYs the workers", async () => {
    const { app, databaseUrl } = await buildTestApp({
      env: {
        ...FAST,
        WEBHOOK_DELIVERY_ENABLED: 'true',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        SIMULATED_TALK_MS: '1000',
      },
    });
    const tenant = await createTenant(app.storage);
    const receiver = await startReceiver();
    await setWebhook(app.storage, tenant.accountId, receiver.url, { allowPrivate: true, now: app.now() });
    const heard: number[] = [];
    const listener = new pg.Client({ connectionString: databaseUrl });
    await listener.connect();
    listener.on('notification', () => heard.push(Date.now()));
    await listener.query(`LISTEN ${WEBHOOKS_CHANNEL}`);
    try {
      const callId = callIdOf(await trigger(app, tenant.key));
      const [started] = await receiver.waitFor(1);
      expect(JSON.parse(started!.body)).toMatchObject({ type: 'call.started', data: { call_id: callId } });
      expect(heard).toHaveLength(0);
      // The end's delivery is for any worker: announced.
      await receiver.waitFor(2);
      expect(JSON.parse(receiver.received[1]!.body)).toMatchObject({
        type: 'call.completed',
        data: { call_id: callId },
      });
      // The worker may hear the NOTIFY and deliver before this test's own connection reads it: wait for it here.
      expect(
        await waitFor(
          () => heard.length,
          (n) => n >= 1,
        ),
      ).toBeGreaterThanOrEqual(1);
    } finally {
      await listener.end();
    }
  });

  it('a dial the provider accepted is never failed for our bookkeeping: a provider id that cannot be recorded leaves the call dialing', async () => {
    const { app, databaseUrl } = await buildTestApp({
      env: { ...FAST, DISPATCH_ENABLED: 'true' },
      // A provider that accepts every dial; the database refuses its ids (below), as a failing write would.
      jobs: { dialer: { kind: 'twilio', dial: async (request) => ({ providerCallId: `refused-${request.callId}` }) } },
    });
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    try {
      await admin.query(
        `ALTER TABLE calls ADD CONSTRAINT test_refuse_ids CHECK (provider_call_id IS NULL OR provider_call_id NOT LIKE 'refused-%')`,
      );
      const tenant = await createTenant(app.storage);
      const callId = callIdOf(await trigger(app, tenant.key));
      await waitFor(
        () => prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } }),
        (c) => c.dialAttempts === 1,
      );
      // Past the first retries: before, the first failed write failed the call with provider_error at once.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: callId }, include: { events: true } });
      expect(call).toMatchObject({ status: 'dialing', failureReason: null, dialAttempts: 1, providerCallId: null });
      expect(call.events.map((e) => e.toStatus)).toEqual(['initiated', 'dialing']);
      // Shutting down does not wait out the remaining retries (about 30 s): far less, however busy the machine.
      const closing = performance.now();
      await closeTestApp(app);
      expect(performance.now() - closing).toBeLessThan(10_000);
    } finally {
      await admin.end();
    }
  });

  it('an acceptance holding the account row does not make the claim skip the account (a bulk trigger for one account still dials)', async () => {
    const { app, databaseUrl } = await buildTestApp({ env: { ...FAST, DISPATCH_ENABLED: 'false' } });
    const tenant = await createTenant(app.storage);
    const callId = callIdOf(await trigger(app, tenant.key));
    // As an acceptance in flight for the same account would: its row locked.
    const acceptance = new pg.Client({ connectionString: databaseUrl });
    await acceptance.connect();
    try {
      await acceptance.query('BEGIN');
      await acceptance.query('SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE', [tenant.accountId]);
      const { Dispatcher } = await import('../../src/dispatch/dispatcher.js');
      const log = dialLog();
      const dialer = new SimulatedDialer(log);
      const dispatcher = new Dispatcher({
        storage: app.storage,
        databaseUrl: '',
        dialer,
        now: () => new Date(),
        log: app.log,
        maxConcurrentCalls: 10,
      });
      const pass = dispatcher.tick();
      await new Promise((resolve) => setTimeout(resolve, 200));
      await acceptance.query('COMMIT');
      await pass;
      // That one pass claimed it: it waited for the acceptance's commit (to update the account's waiting count)
      // instead of skipping the account.
      expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } })).status).toBe('dialing');
      await dispatcher.stop(); // waits for its dials
      expect(dialsIn(log).get(callId)).toBe(1);
    } finally {
      await acceptance.end();
    }
  });

  it('a worker that dies between claim and dial: another recovers the call and dials it exactly once', async () => {
    const { url } = await freshDatabase();
    let release: () => void = () => {};
    const dead = new Promise<void>((resolve) => {
      release = resolve;
    });
    const claimed: string[] = [];
    const logs = [dialLog(), dialLog()] as const;
    const a = (
      await buildTestApp({
        databaseUrl: url,
        env: { ...FAST, SIMULATED_DIAL_LOG: logs[0] },
        jobs: {
          dispatcher: {
            leaseMs: 400,
            beforeDial: async (call) => {
              claimed.push(call.id);
              await dead;
              throw new Error('worker died');
            },
          },
        },
      })
    ).app;
    const tenant = await createTenant(a.storage);
    const callId = callIdOf(await trigger(a, tenant.key));
    await waitFor(
      async () => claimed.length,
      (n) => n === 1,
    );
    // The worker is dead from here on: its loop stops, and its claim is never dialled.
    const stopped = a.dispatcher!.stop();

    const b = (
      await buildTestApp({
        databaseUrl: url,
        env: { ...FAST, SIMULATED_DIAL_LOG: logs[1] },
        jobs: { dispatcher: { leaseMs: 400 } },
      })
    ).app;
    const call = await waitFor(
      () => prismaOf(b).call.findUniqueOrThrow({ where: { id: callId }, include: { events: true } }),
      (c) => c.status === 'completed',
    );
    release();
    await stopped;

    expect(dialsIn(logs[0]).get(callId) ?? 0).toBe(0);
    expect(dialsIn(logs[1]).get(callId)).toBe(1);
    expect(call.dialAttempts).toBe(1);
    expect(call.events.map((e) => e.toStatus)).toEqual(['initiated', 'dialing', 'in_progress', 'completed']);
    expect((await prismaOf(b).call.findUniqueOrThrow({ where: { id: callId } })).status).toBe('completed');
  });

  it('a call whose dial was requested but never recorded is failed once its owner stopped retrying, not dialled again', async () => {
    const { app } = await buildTestApp({ env: { ...FAST, DISPATCH_ENABLED: 'false' } });
    const tenant = await createTenant(app.storage);
    const callId = callIdOf(await trigger(app, tenant.key));
    // As if a worker recorded its intent to dial and its lease ran out a second ago: it may be alive, retrying the
    // write of the provider id through a database outage, so the call is left to it.
    await forceCall(prismaOf(app), callId, {
      status: 'dialing',
      startedAt: new Date(),
      dialAttempts: 1,
      leaseOwner: 'dead',
      leaseExpiresAt: new Date(Date.now() - 1000),
    });
    const { Dispatcher } = await import('../../src/dispatch/dispatcher.js');
    const log = dialLog();
    const dialer = new SimulatedDialer(log);
    const dispatcher = new Dispatcher({
      storage: app.storage,
      databaseUrl: '',
      dialer,
      now: () => new Date(),
      log: app.log,
      maxConcurrentCalls: 10,
    });
    await dispatcher.tick();
    expect(await prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } })).toMatchObject({
      status: 'dialing',
      leaseOwner: 'dead',
    });
    // Past the owner's retries (about 30 s after its lease): it died, and the outcome is unknown.
    await forceCall(prismaOf(app), callId, { leaseExpiresAt: new Date(Date.now() - 31_000) });
    await dispatcher.tick();
    const call = await prismaOf(app).call.findUniqueOrThrow({ where: { id: callId } });
    expect(call).toMatchObject({ status: 'failed', failureReason: 'provider_error', dialAttempts: 1 });
    expect(dialsIn(log).size).toBe(0);
  });
});

describe('queued calls and the clock', () => {
  it('a call queued for its window is dialled when the window opens, and one that waited past its TTL expires', async () => {
    let now = new Date('2054-11-27T23:30:00Z'); // Friday 18:30 in New York
    const { app } = await buildTestApp({ clock: () => now, env: { ...FAST, QUEUED_CALL_TTL_HOURS: '1' } });
    const tenant = await createTenant(app.storage);
    const agentId = (
      await createAgent(app.storage, {
        accountId: tenant.accountId,
        name: 'office hours',
        phone: '+14155550111',
        timezone: 'America/New_York',
        windows: ['mon-fri 09:00-17:00'],
        outsideWindow: 'queue',
        now: app.now(),
      })
    ).id;
    const early = callIdOf(await trigger(app, tenant.key, { phone_number: '+14155552671', agent_id: agentId }));
    const late = callIdOf(await trigger(app, tenant.key, { phone_number: '+14155552672', agent_id: agentId }));
    await app.dispatcher!.settle();
    expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: early } })).status).toBe('initiated');

    now = new Date('2054-11-30T14:00:00Z'); // Monday 09:00: the window opens
    await forceCall(prismaOf(app), late, { expiresAt: new Date('2054-11-30T13:59:59Z') }); // as if it had waited too long
    await app.dispatcher!.settle();
    expect(await prismaOf(app).call.findUniqueOrThrow({ where: { id: early } })).toMatchObject({ status: 'dialing' });
    const expired = await prismaOf(app).call.findUniqueOrThrow({ where: { id: late }, include: { events: true } });
    expect(expired).toMatchObject({ status: 'failed', failureReason: 'expired', startedAt: null, dialAttempts: 0 });
    expect(expired.events.map((e) => e.toStatus)).toEqual(['initiated', 'failed']);
  });
});
