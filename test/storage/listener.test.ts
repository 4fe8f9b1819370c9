// The connection a replica's dispatcher or webhook worker keeps for leading (src/storage/notifications.ts): with
// leadership it LISTENs only once it holds the leader lock, since a listening connection reads every NOTIFY of the
// database in a transaction of its own (issue 25.4); the leader's call for help is a lock the others see when they
// try to lead.
import { randomUUID } from 'node:crypto';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ListenConnection, LISTEN_APPLICATION_NAME, type Listener } from '../../src/storage/index.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { waitFor } from '../helpers/wait.js';

async function listenerOn(databaseUrl: string, channel: string, lead: boolean) {
  const heard: (string | null)[] = [];
  // A connection of its own, as each replica has.
  const listener: Listener = await new ListenConnection(databaseUrl).listen(
    channel,
    { notification: (payload) => heard.push(payload), error: () => undefined },
    { lead },
  );
  onTestFinished(() => listener.close());
  return { listener, heard };
}

describe('a leading connection', () => {
  it('listens only once it leads; a follower hears nothing, then takes over and hears', async () => {
    const { app, databaseUrl } = await buildTestApp();
    // A channel of this test's own: its leader lock is no other test's.
    const channel = `oct_test_${randomUUID().slice(0, 8)}`;
    // A NOTIFY, not a row: what the listeners hear is the subject, so it is sent here rather than seeded.
    const notify = (payload: string) => prismaOf(app).$executeRaw`SELECT pg_notify(${channel}, ${payload})`;
    const a = await listenerOn(databaseUrl, channel, true);
    const b = await listenerOn(databaseUrl, channel, true);
    expect((await a.listener.tryLead()).leading).toBe(true);
    expect((await b.listener.tryLead()).leading).toBe(false);

    await notify('first');
    await waitFor(
      () => a.heard,
      (heard) => heard.includes('first'),
    );
    // The follower's connection holds no LISTEN: a query on it delivers anything queued for it, and nothing is.
    expect((await b.listener.tryLead()).leading).toBe(false);
    expect(b.heard).toEqual([]);

    await a.listener.close();
    expect((await b.listener.tryLead()).leading).toBe(true);
    await notify('second');
    await waitFor(
      () => b.heard,
      (heard) => heard.includes('second'),
    );
    expect(b.heard).toEqual(['second']);
  });

  it('without leadership listens at once', async () => {
    const { app, databaseUrl } = await buildTestApp();
    const channel = `oct_test_${randomUUID().slice(0, 8)}`;
    const a = await listenerOn(databaseUrl, channel, false);
    await prismaOf(app).$executeRaw`SELECT pg_notify(${channel}, 'now')`;
    await waitFor(
      () => a.heard,
      (heard) => heard.includes('now'),
    );
  });

  it("the leader's call for help is seen by a follower's next try, and ends when asked or with the connection", async () => {
    const { databaseUrl } = await buildTestApp();
    const channel = `oct_test_${randomUUID().slice(0, 8)}`;
    const a = await listenerOn(databaseUrl, channel, true);
    const b = await listenerOn(databaseUrl, channel, true);
    expect(await a.listener.tryLead()).toEqual({ leading: true, helpWanted: false });
    expect(await b.listener.tryLead()).toEqual({ leading: false, helpWanted: false });

    expect(await a.listener.askForHelp(true)).toBe(true);
    // Asked twice, released once: the lock is taken once, not once per ask.
    expect(await a.listener.askForHelp(true)).toBe(true);
    expect(await b.listener.tryLead()).toEqual({ leading: false, helpWanted: true });
    // Looking does not take the lock away from the leader.
    expect(await b.listener.tryLead()).toEqual({ leading: false, helpWanted: true });
    expect(await a.listener.askForHelp(false)).toBe(false);
    expect(await b.listener.tryLead()).toEqual({ leading: false, helpWanted: false });

    await a.listener.askForHelp(true);
    expect((await b.listener.tryLead()).helpWanted).toBe(true);
    await a.listener.close();
    expect(await b.listener.tryLead()).toEqual({ leading: true, helpWanted: false });
  });
});

describe('one connection for the channels of a process', () => {
  /** A listener on `connection` for `channel`, leading, with what it heard and how often another listener's lead woke it. */
  async function on(connection: ListenConnection, channel: string) {
    const heard: (string | null)[] = [];
    const woken = { count: 0 };
    const listener = await connection.listen(
      channel,
      { notification: (payload) => heard.push(payload), error: () => undefined, leadTaken: () => woken.count++ },
      { lead: true },
    );
    onTestFinished(() => listener.close());
    return { listener, heard, woken };
  }

  it("leads its channels together, hears each on its own listener, and gives one back while keeping the other's", async () => {
    const { app, databaseUrl } = await buildTestApp();
    const [calls, webhooks] = [`oct_test_${randomUUID().slice(0, 8)}`, `oct_test_${randomUUID().slice(0, 8)}`];
    const notify = (channel: string, payload: string) =>
      prismaOf(app).$executeRaw`SELECT pg_notify(${channel}, ${payload})`;
    const listening = async () =>
      (
        await prismaOf(app).$queryRaw<{ n: number }[]>`
          SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE application_name = ${LISTEN_APPLICATION_NAME} AND datname = current_database()`
      )[0]!.n;
    const process1 = new ListenConnection(databaseUrl);
    const process2 = new ListenConnection(databaseUrl);
    const a = { calls: await on(process1, calls), webhooks: await on(process1, webhooks) };
    const b = { calls: await on(process2, calls), webhooks: await on(process2, webhooks) };
    // Two listeners each, one connection each.
    expect(await listening()).toBe(2);

    expect((await a.calls.listener.tryLead()).leading).toBe(true);
    // The lead of one channel wakes the process's other listener at once, not at its next retry.
    expect([a.calls.woken.count, a.webhooks.woken.count, b.webhooks.woken.count]).toEqual([0, 1, 0]);
    expect((await a.webhooks.listener.tryLead()).leading).toBe(true);
    expect((await b.calls.listener.tryLead()).leading).toBe(false);
    expect((await b.webhooks.listener.tryLead()).leading).toBe(false);

    await notify(calls, 'call');
    await notify(webhooks, 'delivery');
    await waitFor(
      () => a.webhooks.heard,
      (heard) => heard.includes('delivery'),
    );
    await waitFor(
      () => a.calls.heard,
      (heard) => heard.includes('call'),
    );
    expect([a.calls.heard, a.webhooks.heard]).toEqual([['call'], ['delivery']]);

    // Closing one listener gives back its channel's lock and LISTEN; the connection stays for the other.
    await a.calls.listener.close();
    expect((await b.calls.listener.tryLead()).leading).toBe(true);
    expect((await b.webhooks.listener.tryLead()).leading).toBe(false);
    await notify(calls, 'second call');
    await notify(webhooks, 'second delivery');
    await waitFor(
      () => b.calls.heard,
      (heard) => heard.includes('second call'),
    );
    await waitFor(
      () => a.webhooks.heard,
      (heard) => heard.includes('second delivery'),
    );
    expect(a.calls.heard).toEqual(['call']);
    expect(await listening()).toBe(2);

    // The last listener takes the connection with it, and its lock.
    await a.webhooks.listener.close();
    expect((await b.webhooks.listener.tryLead()).leading).toBe(true);
    await waitFor(listening, (n) => n === 1);
  });

  it("a service's dispatcher and webhook worker listen on one connection, and lead together", async () => {
    const { app, databaseUrl } = await buildTestApp({
      env: { DISPATCH_ENABLED: 'true', WEBHOOK_DELIVERY_ENABLED: 'true' },
    });
    const other = await buildTestApp({
      databaseUrl,
      env: { DISPATCH_ENABLED: 'true', WEBHOOK_DELIVERY_ENABLED: 'true' },
    });
    const held = async () =>
      prismaOf(app).$queryRaw<{ application_name: string; locks: number }[]>`
        SELECT a.application_name, count(*)::int AS locks FROM pg_locks l JOIN pg_stat_activity a USING (pid)
        WHERE l.locktype = 'advisory' AND l.classid = 72707371 AND l.granted AND a.datname = current_database()
        GROUP BY a.pid, a.application_name`;
    // One backend holds both leader locks (the calls' and the webhooks'): the first service's.
    await waitFor(held, (rows) => rows.length === 1 && rows[0]!.locks === 2);
    expect(await held()).toEqual([{ application_name: LISTEN_APPLICATION_NAME, locks: 2 }]);
    expect([app.dispatcher!.leading, other.app.dispatcher!.leading]).toEqual([true, false]);
  });
});
