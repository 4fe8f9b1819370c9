// Replicas take turns (issue 25.4): of two dispatchers on one database only the leader polls, so only it finds calls
// nobody announced; when it stops, or its connection dies, the other takes over and drains the queue, each call
// dialled once and never more than the account's limit at once; a backlog larger than one claim is shared; a
// follower hands the calls it accepts to the leader, and none is lost when the leader goes before it hears of them.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { App } from '../../src/app.js';
import { Dispatcher } from '../../src/dispatch/dispatcher.js';
import { SimulatedDialer } from '../../src/dispatch/simulated-dialer.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';
import { waitingCallNobodyAnnounced, insertCallRows } from '../helpers/seed.js';

const MAX_ACTIVE = 3;

/**
 * A dispatcher of its own (a replica's), polling every 50 ms (or `pollMs`) and trying to lead (and looking whether the
 * leader asks for help) every 200 ms (or `leadRetryMs`), its dials logged; its simulated calls talk 150 ms (or `talkMs`).
 */
function replica(
  app: App,
  databaseUrl: string,
  pollMs = 50,
  talkMs = 150,
  leadRetryMs = 200,
  requestsFirst?: () => Promise<void>,
) {
  const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'oct-lead-')), 'dials.log');
  const dispatcher = new Dispatcher({
    storage: app.backgroundStorage,
    databaseUrl,
    dialer: new SimulatedDialer(log),
    now: () => new Date(),
    log: app.log,
    maxConcurrentCalls: MAX_ACTIVE,
    simulated: { ringMs: 20, talkMs },
    pollMs,
    leadRetryMs,
    ...(requestsFirst ? { requestsFirst } : {}),
  });
  onTestFinished(() => dispatcher.stop());
  const dials = () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean) : []);
  return { dispatcher, dials };
}

/** Two replicas' dispatchers with the defaults of `replica`, started in turn: the first leads. */
async function leaderAndFollower(app: App, databaseUrl: string) {
  const a = replica(app, databaseUrl);
  await a.dispatcher.start();
  const b = replica(app, databaseUrl);
  await b.dispatcher.start();
  expect([a.dispatcher.leading, b.dispatcher.leading]).toEqual([true, false]);
  return { a, b };
}

/** The dispatchers' leader lock (src/storage/notifications.ts), as an SQL expression. */
const LEADER_LOCK = `72707371, hashtext('oct_calls')`;

/** Due calls of `tenant` written without waking any dispatcher (as another replica's acceptances would be, unheard). */
async function unannouncedCalls(app: App, tenant: { accountId: string; agentId: string }, count: number) {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) ids.push((await waitingCallNobodyAnnounced(prismaOf(app), tenant)).id);
  return ids;
}

async function allEnded(app: App, ids: string[]) {
  return waitFor(
    () => prismaOf(app).call.findMany({ where: { id: { in: ids } } }),
    (calls) => calls.every((c) => c.status === 'completed'),
    20_000,
  );
}

/** The most of the calls' [started_at, ended_at) that overlap (an end before a start at the same instant). */
function peak(calls: { startedAt: Date | null; endedAt: Date | null }[]) {
  const edges = calls
    .flatMap((c) => [[c.startedAt!.getTime(), 1] as const, [c.endedAt!.getTime(), -1] as const])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let active = 0;
  let most = 0;
  for (const [, delta] of edges) most = Math.max(most, (active += delta));
  return most;
}

describe('replicas take turns', () => {
  it('only the leader polls: it alone finds calls nobody announced; when it stops the other leads and drains the queue', async () => {
    const { app, databaseUrl } = await buildTestApp();
    const tenant = await createTenant(app.storage);
    const a = replica(app, databaseUrl);
    await a.dispatcher.start();
    const b = replica(app, databaseUrl);
    await b.dispatcher.start();
    expect(a.dispatcher.leading).toBe(true);
    expect(b.dispatcher.leading).toBe(false);

    // One call at a time over several polls of both: each is found by a poll, and only the leader's polls run.
    const first: string[] = [];
    for (let i = 0; i < 6; i++) {
      first.push(...(await unannouncedCalls(app, tenant, 1)));
      await new Promise((resolve) => setTimeout(resolve, 120));
    }
    await allEnded(app, first);
    expect(a.dials().sort()).toEqual([...first].sort());
    expect(b.dials()).toEqual([]);

    await a.dispatcher.stop();
    await waitFor(
      () => b.dispatcher.leading,
      (leading) => leading,
      5_000,
    );
    // More than the account's limit at once: the rest wait for freed slots, which the new leader hears.
    const queued = await unannouncedCalls(app, tenant, 3 * MAX_ACTIVE);
    const calls = await allEnded(app, queued);
    expect(b.dials().sort()).toEqual([...queued].sort());
    expect(a.dials()).toHaveLength(first.length);
    expect(calls.every((c) => c.dialAttempts === 1)).toBe(true);
    expect(peak(calls)).toBeLessThanOrEqual(MAX_ACTIVE);
  });

  it("the leader's connection dies: another replica takes the lead over, and the old leader follows once it listens again", async () => {
    const { app, databaseUrl } = await buildTestApp();
    const tenant = await createTenant(app.storage);
    const { a, b } = await leaderAndFollower(app, databaseUrl);

    // The leader lock's holder: the leader's LISTEN connection (a session-level advisory lock).
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ pid: number }>(
        `SELECT l.pid FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 72707371
            AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
      expect(rows).toHaveLength(1);
      await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
    } finally {
      await admin.end();
    }
    // b takes over within its 200 ms retries; a listens again after a second and finds the lead taken.
    await waitFor(
      () => [a.dispatcher.leading, b.dispatcher.leading],
      ([leadsA, leadsB]) => leadsB === true && leadsA === false,
      10_000,
    );
    const before = a.dials().length;
    const queued = await unannouncedCalls(app, tenant, 2 * MAX_ACTIVE);
    const calls = await allEnded(app, queued);
    expect(b.dials().sort()).toEqual([...queued].sort());
    expect(a.dials()).toHaveLength(before);
    expect(calls.every((c) => c.dialAttempts === 1)).toBe(true);
    expect(peak(calls)).toBeLessThanOrEqual(MAX_ACTIVE);
  });

  it('more accounts due than one claim takes: the leader asks, and the other replica claims some of them too', async () => {
    const { app, databaseUrl } = await buildTestApp();
    const tenants: Awaited<ReturnType<typeof createTenant>>[] = [];
    for (let i = 0; i < 160; i += 20)
      tenants.push(...(await Promise.all(Array.from({ length: 20 }, () => createTenant(app.storage)))));
    // The leader's poll is an hour away: the follower would never look for these calls on its own. Once the leader
    // asks for help (its help lock is held), it waits before each step of a pass until the follower has dialled one
    // of the calls, so that the leader cannot drain the backlog alone before the follower's next look (every 10 ms).
    let followerDialled: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (followerDialled = resolve));
    const helpAsked = async () =>
      (
        await prismaOf(app).$queryRaw<{ n: number }[]>`
          SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = 72707372`
      )[0]!.n > 0;
    const a = replica(app, databaseUrl, 3_600_000, 150, 200, async () => {
      if (await helpAsked()) await gate;
    });
    await a.dispatcher.start();
    const b = replica(app, databaseUrl, 3_600_000, 150, 10);
    await b.dispatcher.start();
    expect([a.dispatcher.leading, b.dispatcher.leading]).toEqual([true, false]);
    await a.dispatcher.settle();

    const now = new Date();
    await insertCallRows(prismaOf(app), {
      data: tenants.map((t) => ({
        accountId: t.accountId,
        agentId: t.agentId,
        phoneNumber: '+14155552671',
        fromNumber: '+14155550100',
        notBefore: now,
        expiresAt: new Date(now.getTime() + 3_600_000),
      })),
    });
    // As a calling window opening, or an API-only replica's NOTIFY: the leader asks which accounts are due.
    a.dispatcher.wake();
    await waitFor(
      () => b.dials().length,
      (n) => n > 0,
      10_000,
    );
    followerDialled();
    const calls = await waitFor(
      () => prismaOf(app).call.findMany({ where: { accountId: { in: tenants.map((t) => t.accountId) } } }),
      (cs) => cs.every((c) => c.status === 'completed'),
      20_000,
    );
    expect(calls.every((c) => c.dialAttempts === 1)).toBe(true);
    const dialled = [...a.dials(), ...b.dials()];
    expect(dialled.sort()).toEqual(calls.map((c) => c.id).sort());
    expect(b.dials().length).toBeGreaterThan(0);
  });

  it("a follower's accepted call is claimed and dialled by the leader, at once, with no due-accounts query", async () => {
    const { app, databaseUrl } = await buildTestApp();
    const [accepted, unannounced] = [await createTenant(app.storage), await createTenant(app.storage)];
    // No polls, and calls that talk a minute (no freed slot's NOTIFY): only the hand-off can wake the leader.
    const a = replica(app, databaseUrl, 3_600_000, 60_000);
    await a.dispatcher.start();
    const b = replica(app, databaseUrl, 3_600_000, 60_000);
    await b.dispatcher.start();
    expect([a.dispatcher.leading, b.dispatcher.leading]).toEqual([true, false]);
    await a.dispatcher.settle();

    // Found only by a due-accounts query: the hand-off names its accounts, so the leader's claim leaves this one.
    const [unheard] = await unannouncedCalls(app, unannounced, 1);
    // The follower accepts a call (its acceptance wakes it with the account, as the trigger route does).
    const [call] = await unannouncedCalls(app, accepted, 1);
    b.dispatcher.wake(accepted.accountId);
    await waitFor(
      () => a.dials(),
      (dials) => dials.includes(call!),
      10_000,
    );
    // A due-accounts query would have claimed both in one transaction, and dialled both together.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(b.dials()).toEqual([]);
    expect(a.dials()).toEqual([call]);
    const rows = await prismaOf(app).call.findMany({ where: { id: { in: [call!, unheard!] } } });
    const status = Object.fromEntries(rows.map((c) => [c.id, c.status]));
    expect(['dialing', 'in_progress']).toContain(status[call!]);
    expect(status[unheard!]).toBe('initiated');
  });

  it("the leader stops before it hears of a follower's call: the next leader finds and dials it, once", async () => {
    const { app, databaseUrl } = await buildTestApp();
    const tenant = await createTenant(app.storage);
    const { a, b } = await leaderAndFollower(app, databaseUrl);

    // Between the leader's end and the takeover, as for a leader whose death PostgreSQL has not seen yet: another
    // connection waits for the lock, so it gets it when the leader's connection closes, before b's next try.
    const gap = new pg.Client({ connectionString: databaseUrl });
    await gap.connect();
    onTestFinished(() => gap.end().catch(() => undefined));
    const held = gap.query(`SELECT pg_advisory_lock(${LEADER_LOCK})`);
    await a.dispatcher.stop();
    await held;
    expect(b.dispatcher.leading).toBe(false);

    const [call] = await unannouncedCalls(app, tenant, 1);
    b.dispatcher.wake(tenant.accountId);
    // Nobody hears the hand-off, and the follower does not claim it itself.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: call! } })).status).toBe('initiated');

    await gap.end();
    const [ended] = await allEnded(app, [call!]);
    expect(b.dispatcher.leading).toBe(true);
    expect(b.dials()).toEqual([call]);
    expect(a.dials()).toEqual([]);
    expect(ended!.dialAttempts).toBe(1);
  });
});
