// A following dispatcher's hand-off to the leader (issue 25.4): the accounts accepted since the last NOTIFY, in as few
// payloads as fit under PostgreSQL's 8000-byte limit, all sent in one statement and read back whole by a listener.
import { randomUUID } from 'node:crypto';
import { describe, expect, it, onTestFinished } from 'vitest';
import { CoalescedNotify } from '../../src/jobs/coalesced-notify.js';
import { acceptedAccounts, acceptedPayloads, ListenConnection, notifiedAccounts } from '../../src/storage/index.js';
import { buildTestApp } from '../helpers/app.js';
import { waitFor } from '../helpers/wait.js';

describe("a follower's hand-off", () => {
  it('splits more accounts than one payload holds, and a listener reads every account back', async () => {
    const { app, databaseUrl } = await buildTestApp();
    const heard: string[] = [];
    const listener = await new ListenConnection(databaseUrl).listen('oct_hand_off_test', {
      notification: (payload) => heard.push(...(acceptedAccounts(payload) ?? [])),
      error: () => undefined,
    });
    onTestFinished(() => listener.close());

    const accounts = Array.from({ length: 500 }, () => randomUUID());
    const payloads = acceptedPayloads(accounts);
    expect(payloads).toHaveLength(3);
    for (const payload of payloads) expect(Buffer.byteLength(payload)).toBeLessThan(8000);

    const handOff = new CoalescedNotify(app.backgroundStorage, 'oct_hand_off_test', app.log, {
      payloads: acceptedPayloads,
    });
    for (const id of accounts) handOff.notify(id);
    await handOff.settle();
    await waitFor(
      () => heard.length,
      (n) => n >= accounts.length,
    );
    expect(heard.sort()).toEqual([...accounts].sort());
  });

  it('reads only its own payloads, and drops what is not an account id', () => {
    const id = randomUUID();
    expect(acceptedAccounts(id)).toBeNull();
    expect(acceptedAccounts('backlog')).toBeNull();
    expect(acceptedAccounts(null)).toBeNull();
    expect(acceptedAccounts(`accepted:${id},x'); DROP TABLE calls; --`)).toEqual([id]);
  });

  it("names the accounts a NOTIFY names: a hand-off's, or a freed slot's one; anything else asks which are due", () => {
    const [id, other] = [randomUUID(), randomUUID()];
    expect(notifiedAccounts(id)).toEqual([id]);
    expect(notifiedAccounts(`accepted:${id},${other}`)).toEqual([id, other]);
    for (const payload of [null, '', 'backlog', `${id},${other}`, `${id}'); DROP TABLE calls; --`])
      expect(notifiedAccounts(payload)).toBeNull();
  });
});
