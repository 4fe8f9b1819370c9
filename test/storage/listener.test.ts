// The connection a replica's dispatcher or webhook worker keeps for leading (src/storage/notifications.ts): with
// leadership it LISTENs only once it holds the leader lock, since a listening connection reads every NOTIFY of the
// database in a transaction of its own (issue 25.4); the leader's call for help is a lock the others see when they
// try to lead.
import { randomUUID } from 'node:crypto';
import { describe, expect, it, onTestFinished } from 'vitest';
import { listen, type Listener } from '../../src/storage/index.js';
import { buildTestApp } from '../helpers/app.js';
import { waitFor } from '../helpers/wait.js';

async function listenerOn(databaseUrl: string, channel: string, lead: boolean) {
  const heard: (string | null)[] = [];
  const listener: Listener = await listen(
    databaseUrl,
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
    const notify = (payload: string) => app.prisma.$executeRaw`SELECT pg_notify(${channel}, ${payload})`;
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
    await app.prisma.$executeRaw`SELECT pg_notify(${channel}, 'now')`;
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
