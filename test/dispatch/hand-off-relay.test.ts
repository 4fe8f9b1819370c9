// With Redis, a follower hands the calls it accepts to the leading dispatcher by PUBLISH on its database's channel
// (src/dispatch/hand-off-relay.ts), which costs PostgreSQL no transaction; a hand-off no subscriber heard (no leader
// subscribed, another database's leader only, Redis out of reach) goes by NOTIFY as before. Real Redis and PostgreSQL.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Redis } from 'ioredis';
import pg from 'pg';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createRedis, subscriberOf } from '../../plugins/redis.js';
import type { App } from '../../src/app.js';
import { Dispatcher } from '../../src/dispatch/dispatcher.js';
import { handOffChannel, RedisHandOff } from '../../src/dispatch/hand-off-relay.js';
import { SimulatedDialer } from '../../src/dispatch/simulated-dialer.js';
import { ACCEPTED_PREFIX, CALLS_CHANNEL } from '../../src/storage/channels.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { redisUrl } from '../helpers/database.js';
import { createTenant } from '../helpers/fixtures.js';
import { waitFor } from '../helpers/wait.js';
import { waitingCallNobodyAnnounced } from '../helpers/seed.js';

/** A connected client of `url` (the process's kind: fails fast, never queues), disconnected after the test. */
async function connected(url: string): Promise<Redis> {
  const redis = createRedis(url);
  // The unreachable one's refusals: the process's client logs them (plugins/redis.ts).
  redis.on('error', () => undefined);
  onTestFinished(() => redis.disconnect());
  await redis.connect().catch(() => undefined);
  return redis;
}

/** A relay of `app`'s database publishing with `publisher`, its subscriber closed after the test. */
function relayOf(app: App, publisher: Redis) {
  const relay = new RedisHandOff({
    publisher,
    subscriber: () => subscriberOf(publisher),
    databaseIdentity: () => app.backgroundStorage.notifications.databaseIdentity(),
    log: app.log,
  });
  onTestFinished(() => relay.unsubscribe());
  return relay;
}

/** A replica's dispatcher that never polls (only hand-offs wake its claims), its dials logged; calls talk a minute. */
async function replica(app: App, databaseUrl: string, relay?: RedisHandOff) {
  const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'oct-relay-')), 'dials.log');
  const dispatcher = new Dispatcher({
    storage: app.backgroundStorage,
    databaseUrl,
    dialer: new SimulatedDialer(log),
    now: () => new Date(),
    log: app.log,
    maxConcurrentCalls: 3,
    simulated: { ringMs: 20, talkMs: 60_000 },
    pollMs: 3_600_000,
    leadRetryMs: 200,
    ...(relay ? { relay } : {}),
  });
  onTestFinished(() => dispatcher.stop());
  await dispatcher.start();
  const dials = () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').filter(Boolean) : []);
  /** Waits until this replica has dialled `callId`. */
  const dialled = (callId: string) => waitFor(dials, (ids) => ids.includes(callId), 10_000);
  return { dispatcher, dials, dialled };
}

/** The hand-off NOTIFYs sent on the database of `databaseUrl` from now on (a listener of the test's own). */
async function handOffNotifies(databaseUrl: string) {
  const heard: string[] = [];
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  onTestFinished(() => client.end().catch(() => undefined));
  client.on('notification', ({ payload }) => {
    if (payload?.startsWith(ACCEPTED_PREFIX)) heard.push(payload);
  });
  await client.query(`LISTEN ${CALLS_CHANNEL}`);
  return heard;
}

/** Waits until `count` connections subscribe to `app`'s hand-off channel. */
async function subscribers(app: App, redis: Redis, count: number) {
  const channel = handOffChannel(await app.backgroundStorage.notifications.databaseIdentity());
  await waitFor(
    async () => Number(((await redis.call('PUBSUB', 'NUMSUB', channel)) as [string, number])[1]),
    (n) => n === count,
    5_000,
  );
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe.skipIf(!redisUrl())('hand-offs through Redis (requires Redis: TEST_REDIS_URL)', () => {
  it("a follower's call reaches the leader by PUBLISH, with no NOTIFY; after the leader goes, the next one's", async () => {
    const { app, databaseUrl } = await buildTestApp();
    const tenant = await createTenant(app.storage);
    const redis = await connected(redisUrl()!);
    const a = await replica(app, databaseUrl, relayOf(app, redis));
    const b = await replica(app, databaseUrl, relayOf(app, redis));
    const c = await replica(app, databaseUrl, relayOf(app, redis));
    expect([a, b, c].map((r) => r.dispatcher.leading)).toEqual([true, false, false]);
    await subscribers(app, redis, 1);
    const notifies = await handOffNotifies(databaseUrl);

    const first = (await waitingCallNobodyAnnounced(prismaOf(app), tenant)).id;
    b.dispatcher.wake(tenant.accountId);
    await a.dialled(first);

    // The leader goes: it unsubscribes before it gives the lead up, and the next leader subscribes.
    await a.dispatcher.stop();
    await waitFor(
      () => b.dispatcher.leading || c.dispatcher.leading,
      (leading) => leading,
      5_000,
    );
    await subscribers(app, redis, 1);
    const [leader, follower] = b.dispatcher.leading ? [b, c] : [c, b];
    const second = (await waitingCallNobodyAnnounced(prismaOf(app), tenant)).id;
    follower.dispatcher.wake(tenant.accountId);
    await leader.dialled(second);

    expect(notifies).toEqual([]);
    expect([...a.dials(), ...b.dials(), ...c.dials()].sort()).toEqual([first, second].sort());
  });

  it('a hand-off no subscriber of its database hears goes by NOTIFY (another database shares the Redis)', async () => {
    const { app, databaseUrl } = await buildTestApp();
    const other = await buildTestApp();
    const tenant = await createTenant(app.storage);
    const redis = await connected(redisUrl()!);
    // This database's leader has no Redis; another database's leader subscribes to its own channel.
    const a = await replica(app, databaseUrl);
    const b = await replica(app, databaseUrl, relayOf(app, redis));
    await replica(other.app, other.databaseUrl, relayOf(other.app, redis));
    await subscribers(other.app, redis, 1);
    await subscribers(app, redis, 0);
    const notifies = await handOffNotifies(databaseUrl);

    const call = (await waitingCallNobodyAnnounced(prismaOf(app), tenant)).id;
    b.dispatcher.wake(tenant.accountId);
    await a.dialled(call);
    expect(notifies).toEqual([`${ACCEPTED_PREFIX}${tenant.accountId}`]);
    expect(b.dials()).toEqual([]);
  });

  it('a follower whose Redis is out of reach hands off by NOTIFY, although the leader subscribes', async () => {
    const { app, databaseUrl } = await buildTestApp();
    const tenant = await createTenant(app.storage);
    const redis = await connected(redisUrl()!);
    const unreachable = await connected(`redis://127.0.0.1:${await closedPort()}`);
    expect(unreachable.status).not.toBe('ready');
    const a = await replica(app, databaseUrl, relayOf(app, redis));
    const b = await replica(app, databaseUrl, relayOf(app, unreachable));
    await subscribers(app, redis, 1);
    const notifies = await handOffNotifies(databaseUrl);

    const call = (await waitingCallNobodyAnnounced(prismaOf(app), tenant)).id;
    b.dispatcher.wake(tenant.accountId);
    await a.dialled(call);
    expect(notifies).toEqual([`${ACCEPTED_PREFIX}${tenant.accountId}`]);
  });

  it('the leader ignores what is not a hand-off on its channel', async () => {
    const { app, databaseUrl } = await buildTestApp();
    const tenant = await createTenant(app.storage);
    const redis = await connected(redisUrl()!);
    const a = await replica(app, databaseUrl, relayOf(app, redis));
    await subscribers(app, redis, 1);
    const call = (await waitingCallNobodyAnnounced(prismaOf(app), tenant)).id;
    const channel = handOffChannel(await app.backgroundStorage.notifications.databaseIdentity());
    // Neither a freed slot's payload nor a hand-off of ids that are not account ids asks for any claim.
    expect(await redis.publish(channel, tenant.accountId)).toBe(1);
    expect(await redis.publish(channel, `${ACCEPTED_PREFIX}not-an-id,'; DROP TABLE calls; --`)).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(a.dials()).toEqual([]);
    expect((await prismaOf(app).call.findUniqueOrThrow({ where: { id: call } })).status).toBe('initiated');
    // A hand-off naming the account is claimed at once.
    expect(await redis.publish(channel, `${ACCEPTED_PREFIX}${tenant.accountId}`)).toBe(1);
    await a.dialled(call);
  });
});
