// Infrastructure faults against a real server process: Redis killed or frozen (limits fail open fast, resume after); PostgreSQL stopped, stopped mid-dial or frozen (fail fast, readiness red, recovery without a restart).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type net from 'node:net';
import type { Agent } from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, describe, expect, it, onTestFailed } from 'vitest';
import { setWebhook } from '../../src/admin/webhooks.js';
import { createPrisma, type PrismaClient } from '../../src/storage/database.js';
import { migrate } from '../../src/storage/migrate.js';
import { freshDatabase, storageOf } from '../helpers/database.js';
import { json, type TriggerResponse } from '../helpers/json.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { startReceiver } from '../helpers/receiver.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';
import {
  fmt,
  internalGet,
  keepAliveAgent,
  percentile,
  sleep,
  startOwnPostgres,
  startOwnRedis,
  timedRequest,
  triggerOver,
  waitUntil,
  type OwnPostgres,
  type OwnRedis,
} from './process-helpers.js';

/**
 * Failing open means a trigger never waits for Redis: at most one command timeout (40 ms), never a reconnect (the
 * client's connect timeout is 1 s) nor a hung command. A bound that holds on a busy machine; speed is for bench/.
 */
const FAIL_OPEN_BUDGET_MS = 1_000;
/**
 * With PostgreSQL gone, a request is refused after at most one of its 1.5 s waits (a pooled connection, a query),
 * never two in a row nor a hang (a reconnect, a lock): under two of them, however busy the machine.
 */
const FAIL_FAST_BUDGET_MS = 3_000;
/** Small enough to hit in a test, large enough to time a baseline of accepted requests while Redis is up. */
const SMALL_LIMIT = 50;
const SAMPLES = 40;
const PHONE = { phone_number: '+14155552671' };

// Everything a scenario starts is stopped by the scenario; this is the safety net if an assertion throws midway.
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function tempDir(prefix: string) {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  cleanups.push(() => fs.rm(dir, { recursive: true, force: true }));
  return dir;
}

async function serverWith(env: Record<string, string>): Promise<ServerProcess> {
  const server = await startServer({ DATA_DIR: await tempDir('oct-rel-faults-'), ...env });
  // The server's own log is the first thing to read when a scenario fails.
  onTestFailed(() =>
    console.error(`server log (warnings, errors, shutdown; last 20):\n${notableLog(server).join('\n')}`),
  );
  cleanups.push(() =>
    server.child.exitCode === null && server.child.signalCode === null ? server.stop('SIGKILL') : Promise.resolve(),
  );
  return server;
}

/** What the internal /health/ready answers. */
interface Readiness {
  status: string;
  checks: Record<string, string>;
}

interface Outcome {
  status: number;
  ms: number;
  body: string;
}

/** A trigger that never throws: a network error (no answer, connection refused or reset) is status 0. */
async function outcomeOf(agent: Agent, port: number, key: string, timeoutMs = 5_000): Promise<Outcome> {
  const started = performance.now();
  try {
    const res = await timedRequest(agent, port, '/api/v1/calls/trigger', {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(PHONE),
      timeoutMs,
    });
    return { status: res.status, ms: res.ms, body: res.body };
  } catch (error) {
    return { status: 0, ms: performance.now() - started, body: (error as Error).message };
  }
}

/** The server's warnings, errors and shutdown lines (the last 20, each cut short). */
function notableLog(server: ServerProcess): string[] {
  return server
    .output()
    .split('\n')
    .filter((line) => line && (!line.startsWith('{"level":30') || line.includes('shutting down')))
    .slice(-20)
    .map((l) => l.slice(0, 1500));
}

const TWILIO_SID = `AC${'0123456789abcdef'.repeat(2)}`;

/** Twilio's create-call endpoint as far as the dialer needs it, answering only when released. */
async function heldTwilio() {
  let open!: () => void;
  const released = new Promise<void>((resolve) => {
    open = resolve;
  });
  const creates: string[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      creates.push(req.url ?? '');
      void released.then(() =>
        res
          .writeHead(201, { 'content-type': 'application/json' })
          .end(JSON.stringify({ sid: `CA${randomBytes(16).toString('hex')}`, status: 'queued' })),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    creates,
    release: () => open(),
    close: async () => {
      open();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Parsed body of an error response: exactly the envelope, nothing else. */
function envelope(res: { body: string }): { success: boolean; error: string } {
  const body = JSON.parse(res.body) as Record<string, unknown>;
  expect(Object.keys(body).sort(), res.body).toEqual(['error', 'success']);
  expect(body.success).toBe(false);
  expect(typeof body.error).toBe('string');
  return body as { success: boolean; error: string };
}

describe('Redis down mid-run (its own redis-server, a real server process)', () => {
  let redis: OwnRedis;
  let server: ServerProcess;
  let prisma: PrismaClient;
  const agent = keepAliveAgent(4);

  /**
   * Requests until the first 429: the shared limit is enforced. Under CPU load a store call can miss the 40 ms command
   * timeout on a healthy Redis too, and that request is let through uncounted (the documented fail-open), so the 429
   * may come a request or two late — never early. Returns the accepted requests' latencies and how late it came.
   */
  async function expectLimited(tenant: Tenant) {
    const latencies: number[] = [];
    for (let i = 0; i < SMALL_LIMIT + 5; i++) {
      const res = await triggerOver(agent, server.port, tenant.key, PHONE);
      if (res.status === 429) {
        expect(envelope(res).error).toMatch(/^Rate limit exceeded\. Retry after \d+ seconds\.$/);
        expect(res.headers['retry-after']).toMatch(/^\d+$/);
        expect(latencies.length).toBeGreaterThanOrEqual(SMALL_LIMIT);
        expect(latencies.length).toBeLessThanOrEqual(SMALL_LIMIT + 3);
        return { latencies, late: latencies.length - SMALL_LIMIT };
      }
      expect(res.status, res.body).toBe(200);
      latencies.push(res.ms);
    }
    throw new Error(`no 429 after ${SMALL_LIMIT + 5} requests: the limit did not resume`);
  }

  /**
   * The first trigger after the fault is the one that may notice it (a command timeout); then SAMPLES sequential
   * triggers, each far over the limit and each answered 200. Measured twice at most: a wait caused by Redis is
   * systematic and shows in both runs, a scheduling pause on a busy 2-core runner does not.
   */
  async function expectFailOpen(tenant: Tenant) {
    const noticing = await triggerOver(agent, server.port, tenant.key, PHONE);
    expect(noticing.status, noticing.body).toBe(200);
    const runs: number[][] = [];
    for (let run = 0; run < 2; run++) {
      const latencies: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const res = await triggerOver(agent, server.port, tenant.key, PHONE);
        expect(res.status, `request while Redis is down: ${res.body}`).toBe(200);
        latencies.push(res.ms);
      }
      runs.push(latencies);
      if (Math.max(...latencies) < FAIL_OPEN_BUDGET_MS) break;
    }
    return { noticingMs: noticing.ms, runs, latencies: runs.at(-1)! };
  }

  const describeRuns = (runs: number[][]) =>
    runs
      .map((l) => `p50 ${fmt(percentile(l, 50))}, p95 ${fmt(percentile(l, 95))}, max ${fmt(Math.max(...l))}`)
      .join('; re-measured: ');

  const storeErrors = async () => {
    const metrics = await internalGet(server.internalPort, '/metrics');
    return Number(/^oct_rate_limit_store_errors_total(?:\{[^}]*\})? (\d+)/m.exec(metrics.body)?.[1] ?? NaN);
  };

  it('killed, then frozen: every trigger is answered 200 without waiting for Redis (fail open); readiness is red; limits resume when it is back', async ({
    annotate,
  }) => {
    const { url } = await freshDatabase();
    prisma = createPrisma(url, { max: 2 });
    cleanups.push(() => prisma.$disconnect());
    redis = await startOwnRedis();
    cleanups.push(() => redis.close());
    // No dispatcher or delivery worker in this process: the subject is the request path, and on a 2-core runner their
    // passes over hundreds of fresh calls would add CPU noise to the very latencies measured here.
    server = await serverWith({
      DATABASE_URL: url,
      REDIS_URL: redis.url,
      RATE_LIMIT_PER_MINUTE: String(SMALL_LIMIT),
      DISPATCH_ENABLED: 'false',
      WEBHOOK_DELIVERY_ENABLED: 'false',
    });
    cleanups.push(async () => agent.destroy());
    const report: string[] = [];

    // Warm-up (a first request loads the limiter's Lua script), then the limit with a healthy Redis; the accepted
    // requests' latency is the baseline for the ones below.
    expect((await triggerOver(agent, server.port, (await createTenant(prisma)).key, PHONE)).status).toBe(200);
    const baseline = await expectLimited(await createTenant(prisma));
    report.push(
      `Redis up (baseline): ${describeRuns([baseline.latencies])}${baseline.late ? `, 429 ${baseline.late} late` : ''}`,
    );
    expect((await internalGet(server.internalPort, '/health/ready')).status).toBe(200);

    // Killed: connections reset, the port refuses. A tenant far over the limit is let through, fast.
    await redis.kill();
    const killedAt = performance.now();
    const killed = await expectFailOpen(await createTenant(prisma));
    const readyWhileKilled = await internalGet(server.internalPort, '/health/ready');
    expect(readyWhileKilled.status, readyWhileKilled.body).toBe(503);
    expect(JSON.parse(readyWhileKilled.body)).toMatchObject({ status: 'unavailable', checks: { database: 'ok' } });
    expect(json<Readiness>(readyWhileKilled.body).checks.redis).not.toBe('ok');
    expect(await storeErrors()).toBeGreaterThanOrEqual(SAMPLES + 1);
    report.push(`killed: first (noticing) ${fmt(killed.noticingMs)}; next ${SAMPLES}: ${describeRuns(killed.runs)}`);

    // Back (empty: no persistence): the client reconnects by itself and a fresh tenant is limited again.
    await redis.start();
    const restartedAt = performance.now();
    await waitUntil(
      'readiness 200 after Redis restarted',
      async () => (await internalGet(server.internalPort, '/health/ready')).status === 200,
      15_000,
      25,
    );
    const killedRecoveryMs = performance.now() - restartedAt;
    const afterRestart = await expectLimited(await createTenant(prisma));
    report.push(
      `killed for ${fmt(restartedAt - killedAt)}; readiness green ${fmt(killedRecoveryMs)} after restart; 429 again${afterRestart.late ? ` (${afterRestart.late} late)` : ''}`,
    );

    // Frozen (SIGSTOP): the connection stays open and nothing answers — the 40 ms command timeout path.
    redis.freeze();
    const frozen = await expectFailOpen(await createTenant(prisma));
    const readyWhileFrozen = await internalGet(server.internalPort, '/health/ready');
    expect(readyWhileFrozen.status, readyWhileFrozen.body).toBe(503);
    expect(readyWhileFrozen.ms).toBeLessThan(FAIL_FAST_BUDGET_MS); // its own 1.5 s check timeout, never a hang
    report.push(`frozen: first (noticing) ${fmt(frozen.noticingMs)}; next ${SAMPLES}: ${describeRuns(frozen.runs)}`);

    redis.thaw();
    const thawedAt = performance.now();
    await waitUntil(
      'readiness 200 after Redis thawed',
      async () => (await internalGet(server.internalPort, '/health/ready')).status === 200,
      15_000,
      25,
    );
    const frozenRecoveryMs = performance.now() - thawedAt;
    const afterThaw = await expectLimited(await createTenant(prisma));
    report.push(
      `thawed: readiness green ${fmt(frozenRecoveryMs)} later; 429 again${afterThaw.late ? ` (${afterThaw.late} late)` : ''}`,
    );

    await annotate(report.join(' | '));
    console.info(`[reliability] Redis down: ${report.join(' | ')}`);
    for (const ms of [...killed.latencies, ...frozen.latencies])
      expect(ms, report.join('\n')).toBeLessThan(FAIL_OPEN_BUDGET_MS);
    // The request that notices meets one command timeout (40 ms) on top of its own work, never a reconnect (1 s).
    expect(frozen.noticingMs, report.join('\n')).toBeLessThan(FAIL_OPEN_BUDGET_MS);

    expect(await server.stop('SIGTERM')).toBe(0);
  });
});

/**
 * A PostgreSQL of the test's own (its log printed if the test fails), migrated, with a tenant. The tiny pool is for
 * setup and checks: it sees errors too while the database is down, and reconnects like the server. Everything is
 * closed after the test.
 */
async function ownPostgresWithTenant() {
  const pg: OwnPostgres = await startOwnPostgres();
  onTestFailed(async () => console.error(`PostgreSQL log (tail):\n${await pg.log()}`));
  cleanups.push(() => pg.close());
  await migrate(pg.url);
  const prisma = createPrisma(pg.url, { max: 2 });
  cleanups.push(() => prisma.$disconnect());
  return { pg, prisma, tenant: await createTenant(prisma) };
}

describe('PostgreSQL down mid-run (its own PostgreSQL, a real server process)', () => {
  it('refuses fast with the envelope, readiness turns red, and it recovers by itself when PostgreSQL returns', async ({
    annotate,
  }) => {
    const { pg, prisma, tenant } = await ownPostgresWithTenant();
    const receiver = await startReceiver();
    await setWebhook(storageOf(prisma), tenant.accountId, receiver.url, { allowPrivate: true, now: new Date() });
    // Calls ring and talk 0 ms and 50 may be active: the dispatcher claims and dials continuously, so dials are in
    // flight when the database goes away; calls mid-way must still end once it is back.
    const server = await serverWith({
      DATABASE_URL: pg.url,
      SIMULATED_RING_MS: '0',
      SIMULATED_TALK_MS: '0',
      MAX_CONCURRENT_CALLS: '50',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_TIMEOUT_MS: '1000',
      DISPATCH_LEASE_MS: '2000',
      RATE_LIMIT_PER_MINUTE: '100000',
    });
    const agent = keepAliveAgent(20);
    cleanups.push(async () => agent.destroy());
    const accepted: string[] = [];
    const acceptOne = async () => {
      const res = await triggerOver(agent, server.port, tenant.key, PHONE);
      expect(res.status, res.body).toBe(200);
      accepted.push(json<TriggerResponse>(res.body).call_id);
    };
    const attempt = async (key = tenant.key) => {
      const outcome = await outcomeOf(agent, server.port, key);
      if (outcome.status === 200) accepted.push(json<TriggerResponse>(outcome.body).call_id);
      return outcome;
    };

    for (let i = 0; i < 5; i++) await acceptOne();
    expect((await internalGet(server.internalPort, '/health/ready')).status).toBe(200);

    // Load across the stop: 4 clients post triggers back to back, so calls are being accepted, claimed and dialled at
    // the moment the database goes away (a dial whose own bookkeeping then fails included).
    let flooding = true;
    const flood: (Outcome & { sentAt: number })[] = [];
    const clients = Array.from({ length: 4 }, async () => {
      while (flooding) {
        const sentAt = performance.now();
        const outcome = await attempt();
        flood.push({ ...outcome, sentAt });
        if (outcome.status === 0) await sleep(20);
      }
    });
    await sleep(1_000);

    // Down: pg_ctl stop -m fast terminates every connection (the pool's, LISTEN's) and refuses new ones.
    await pg.stop('fast');
    const downAt = performance.now();
    await sleep(1_000);
    flooding = false;
    await Promise.all(clients);
    const floodDown = flood.filter((r) => r.sentAt >= downAt);

    const sequential: Outcome[] = [];
    for (let i = 0; i < 15; i++) sequential.push(await attempt());
    const concurrent = await Promise.all(Array.from({ length: 20 }, () => attempt()));
    // A key that fails its checksum is refused without the database: 401, as when PostgreSQL is up.
    const badKey = await attempt(`svc_sk_${'A'.repeat(43)}000000`);
    const readyDown = await internalGet(server.internalPort, '/health/ready');
    const liveDown = await internalGet(server.internalPort, '/health/live');
    // Stay down a while: the dispatcher's and the delivery worker's passes fail, their LISTEN connections retry.
    await sleep(Math.max(0, 3_000 - (performance.now() - downAt)));

    const exited = server.child.exitCode ?? server.child.signalCode;
    const statusCounts = (list: Outcome[]) =>
      JSON.stringify(
        list.reduce<Record<string, number>>(
          (acc, r) => ({ ...acc, [r.status || 'network error']: (acc[r.status || 'network error'] ?? 0) + 1 }),
          {},
        ),
      );
    const downReport = [
      `flood: ${flood.length} requests, ${floodDown.length} sent after the stop: ${statusCounts(floodDown)}, max ${fmt(Math.max(...floodDown.map((r) => r.ms)))}`,
      `sequential: ${statusCounts(sequential)}, p50 ${fmt(
        percentile(
          sequential.map((r) => r.ms),
          50,
        ),
      )}, max ${fmt(Math.max(...sequential.map((r) => r.ms)))}`,
      `20 concurrent: ${statusCounts(concurrent)}, max ${fmt(Math.max(...concurrent.map((r) => r.ms)))}`,
      `bad-checksum key ${badKey.status} in ${fmt(badKey.ms)}`,
      `readiness ${readyDown.status} in ${fmt(readyDown.ms)}, liveness ${liveDown.status}`,
    ].join(' | ');
    console.info(`[reliability] PostgreSQL down: ${downReport}`);
    // The process must ride out the outage: it is the one that recovers when the database returns.
    expect(
      exited,
      `the server process ended during the outage (${exited}): ${downReport}\n${notableLog(server).join('\n')}`,
    ).toBeNull();
    for (const res of [...floodDown, ...sequential, ...concurrent]) {
      expect([503, 500], `${downReport}\n${res.body}`).toContain(res.status);
      expect(envelope(res).error).toMatch(/^(Service temporarily unavailable|Internal server error)$/);
      expect(res.ms, downReport).toBeLessThan(FAIL_FAST_BUDGET_MS);
    }
    expect(badKey.status).toBe(401);
    expect(envelope(badKey).error).toBe('Invalid API key');
    expect(readyDown.status, readyDown.body).toBe(503);
    expect(json<Readiness>(readyDown.body).checks.database).not.toBe('ok');
    expect(readyDown.ms).toBeLessThan(FAIL_FAST_BUDGET_MS);
    expect(liveDown.status).toBe(200);

    await pg.start();
    const upAt = performance.now();
    const downForMs = upAt - downAt;
    const readyAgain = await waitUntil(
      'readiness 200',
      async () => (await internalGet(server.internalPort, '/health/ready')).status === 200 && performance.now(),
      30_000,
      25,
    );
    const firstOkAt = await waitUntil(
      'a trigger accepted again',
      async () => (await attempt()).status === 200 && performance.now(),
      30_000,
      25,
    );
    for (let i = 0; i < 5; i++) await acceptOne();

    // Nothing lost on either side of the outage: every accepted call ends once and its terminal event arrives (calls
    // claimed or mid-call when the database went away included).
    const terminalIds = () =>
      new Set(
        receiver.received
          .map((r) => JSON.parse(r.body) as { type: string; data: { call_id: string } })
          .filter((e) => e.type !== 'call.started')
          .map((e) => e.data.call_id),
      );
    const drainedAt = await waitUntil(
      'every accepted call ended and its terminal webhook arrived',
      async () => {
        const open = await prisma.call.count({ where: { status: { notIn: ['completed', 'failed'] } } });
        return open === 0 && accepted.every((id) => terminalIds().has(id)) && performance.now();
      },
      60_000,
      100,
    );
    const calls = await prisma.call.findMany({ include: { events: true } });
    // Requests cut off by the stop may have committed a call without hearing back: a superset, never a loss.
    expect(calls.map((c) => c.id)).toEqual(expect.arrayContaining(accepted));
    for (const call of calls) {
      expect(['completed', 'failed']).toContain(call.status);
      expect(call.events.filter((e) => e.toStatus === 'completed' || e.toStatus === 'failed')).toHaveLength(1);
      expect(call.dialAttempts).toBeLessThanOrEqual(1);
    }
    const outcomes = calls.reduce<Record<string, number>>(
      (acc, c) => ({ ...acc, [c.failureReason ?? c.status]: (acc[c.failureReason ?? c.status] ?? 0) + 1 }),
      {},
    );

    const shown = [
      downReport,
      `down ${fmt(downForMs)}; after restart: readiness 200 in ${fmt(readyAgain - upAt)}, first trigger 200 in ${fmt(firstOkAt - upAt)}, all ${calls.length} calls ended and notified ${fmt(drainedAt - upAt)} after restart`,
      `outcomes ${JSON.stringify(outcomes)}`,
    ].join(' | ');
    await annotate(shown);
    console.info(`[reliability] PostgreSQL down, recovery: ${shown.slice(downReport.length + 3)}`);

    expect(await server.stop('SIGTERM')).toBe(0);
  });

  it('goes down while a dial is in flight (a Twilio stand-in holds the answer): the process rides it out, records the accepted dial when it returns, never fails it nor dials again', async ({
    annotate,
  }) => {
    const { pg, prisma, tenant } = await ownPostgresWithTenant();
    const receiver = await startReceiver();
    await setWebhook(storageOf(prisma), tenant.accountId, receiver.url, { allowPrivate: true, now: new Date() });
    const twilio = await heldTwilio();
    cleanups.push(() => twilio.close());
    const server = await serverWith({
      DATABASE_URL: pg.url,
      DIALER: 'twilio',
      TWILIO_ACCOUNT_SID: TWILIO_SID,
      TWILIO_AUTH_TOKEN: 'test-token',
      TWILIO_API_BASE_URL: twilio.url,
      PUBLIC_BASE_URL: 'https://calls.example.test',
      AGENT_STREAM_URL: 'wss://agent.example.test/stream',
      DISPATCH_LEASE_MS: '2000',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_TIMEOUT_MS: '1000',
    });
    const agent = keepAliveAgent(4);
    cleanups.push(async () => agent.destroy());

    const res = await triggerOver(agent, server.port, tenant.key, PHONE);
    expect(res.status, res.body).toBe(200);
    const callId = json<TriggerResponse>(res.body).call_id;
    // The dispatcher has recorded its intent and asked the provider; the provider's answer is held.
    await waitUntil('the create-call request at the provider', () => twilio.creates.length === 1, 10_000, 10);

    // The database goes away, then the provider answers: recording the provider's id fails, and so does the
    // dispatcher's check whether the call is still its own.
    await pg.stop('fast');
    twilio.release();
    await sleep(1_000);
    const during = await outcomeOf(agent, server.port, tenant.key);
    const exited = server.child.exitCode ?? server.child.signalCode;
    console.info(
      `[reliability] PostgreSQL down mid-dial: process ${exited === null ? 'alive' : `ended (${exited})`}, trigger ${during.status || during.body} in ${fmt(during.ms)}`,
    );
    expect(
      exited,
      `the server process ended when a dial's bookkeeping failed (${exited}):\n${notableLog(server).join('\n')}`,
    ).toBeNull();
    expect(during.status, during.body).toBe(503);

    await pg.start();
    const upAt = performance.now();
    // The provider accepted the dial, so the callee's phone may be ringing: the call is not failed for our
    // bookkeeping. The dispatcher keeps retrying the write of the provider's id and records it once PostgreSQL is back.
    const recordedAt = await waitUntil(
      'the provider id recorded',
      async () =>
        Boolean((await prisma.call.findUnique({ where: { id: callId } }))?.providerCallId) && performance.now(),
      30_000,
      50,
    );
    const call = await prisma.call.findUniqueOrThrow({ where: { id: callId }, include: { events: true } });
    expect(call).toMatchObject({ status: 'dialing', failureReason: null, dialAttempts: 1, leaseOwner: null });
    expect(call.providerCallId).toMatch(/^CA[0-9a-f]{32}$/);
    expect(call.events.map((e) => e.toStatus)).toEqual(['initiated', 'dialing']);
    await receiver.waitFor(1, 15_000);
    await sleep(500);
    expect(receiver.received.map((r) => (JSON.parse(r.body) as { type: string }).type)).toEqual(['call.started']);
    expect(twilio.creates).toHaveLength(1);
    await annotate(
      `provider id recorded ${fmt(recordedAt - upAt)} after PostgreSQL returned; call still dialing; one create-call request`,
    );

    expect(await server.stop('SIGTERM')).toBe(0);
  });

  it('frozen (no refusal, no answer: a hung server or a partition): requests still fail fast, readiness turns red, it recovers by itself', async ({
    annotate,
  }) => {
    const { pg, tenant } = await ownPostgresWithTenant();
    const server = await serverWith({
      DATABASE_URL: pg.url,
      RATE_LIMIT_PER_MINUTE: '100000',
      SIMULATED_RING_MS: '50',
      SIMULATED_TALK_MS: '100',
    });
    const agent = keepAliveAgent(20);
    cleanups.push(async () => agent.destroy());
    // Warm: the pool holds open connections, which is exactly what a freeze leaves hanging.
    await Promise.all(
      Array.from({ length: 10 }, async () =>
        expect((await triggerOver(agent, server.port, tenant.key, PHONE)).status).toBe(200),
      ),
    );

    await pg.freeze();
    // Gather first, assert after thawing: an assertion thrown here would leave the measurements unreported.
    // A client gives up after 5 s: far beyond the budget, short enough to keep a hanging run brief.
    const outcome = () => outcomeOf(agent, server.port, tenant.key, 5_000);
    const sequential = [];
    for (let i = 0; i < 2; i++) sequential.push(await outcome());
    const concurrent = await Promise.all(Array.from({ length: 15 }, outcome));
    const readyFrozen = await internalGet(server.internalPort, '/health/ready');

    await pg.thaw();
    const thawedAt = performance.now();
    const readyAgain = await waitUntil(
      'readiness 200 after thawing',
      async () => (await internalGet(server.internalPort, '/health/ready')).status === 200 && performance.now(),
      30_000,
      25,
    );
    const okAgain = await waitUntil(
      'a trigger accepted after thawing',
      async () => (await triggerOver(agent, server.port, tenant.key, PHONE)).status === 200 && performance.now(),
      30_000,
      25,
    );

    const all = [...sequential, ...concurrent];
    const shown = [
      `frozen: sequential ${sequential.map((r) => `${r.status || 'no answer'} in ${fmt(r.ms)}`).join(', ')}`,
      `15 concurrent: statuses ${JSON.stringify(concurrent.reduce<Record<string, number>>((a, r) => ({ ...a, [r.status]: (a[r.status] ?? 0) + 1 }), {}))}, max ${fmt(Math.max(...concurrent.map((r) => r.ms)))}`,
      `readiness ${readyFrozen.status} in ${fmt(readyFrozen.ms)}`,
      `after thawing: readiness 200 in ${fmt(readyAgain - thawedAt)}, trigger 200 in ${fmt(okAgain - thawedAt)}`,
    ].join(' | ');
    await annotate(shown);
    console.info(`[reliability] PostgreSQL frozen: ${shown}`);
    expect(readyFrozen.status, shown).toBe(503);
    expect(readyFrozen.ms, shown).toBeLessThan(FAIL_FAST_BUDGET_MS);
    for (const res of all) {
      expect([503, 500], `${shown}\n${res.body}`).toContain(res.status);
      expect(res.ms, shown).toBeLessThan(FAIL_FAST_BUDGET_MS);
    }
    expect(await server.stop('SIGTERM')).toBe(0);
  });
});
