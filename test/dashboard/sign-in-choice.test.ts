// One email with users in several accounts (callctl setup --allow-existing-email): after the password check, a choice
// page lists the accounts whose user the password opens, and only those; the choice is CSRF-protected, refused for
// any other user, throttled like sign-in, and makes one new session for the chosen user, audited as a sign-in.
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgency } from '../../src/admin/accounts.js';
import type { App } from '../../src/app.js';
import { hashPassword } from '../../src/domain/password.js';
import { SIGN_IN_LIMITS } from '../../plugins/dashboard/sign-in-limiter.js';
import { SIGN_IN_CHOICE_MS } from '../../src/routes/dashboard/sign-in.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createUserWithPassword, DASHBOARD_ENV, html, Visitor } from './helpers.js';

const EMAIL = 'shared@person.example';
let app: App;
const ids: Record<'alpha' | 'bravo' | 'charlie', { agency: string; user: string }> = {} as never;
let n = 0;

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV }));
  for (const [key, name] of [
    ['alpha', 'Alpha Agency'],
    ['bravo', 'Bravo Agency'],
    ['charlie', 'Charlie Agency'],
  ] as const) {
    const { id: agency } = await createAgency(app.storage, { name });
    ids[key] = { agency, user: await createUserWithPassword(app.storage, agency, EMAIL) };
    // A colleague in each agency, to tell on the Users page which agency is open.
    await createUserWithPassword(app.storage, agency, `colleague@${key}.example`);
  }
  // Charlie's user has another password: the same typed password does not open it, so it is not offered.
  await app.storage.users.setPasswordHash(
    ids.charlie.user,
    await hashPassword('charlie has its own password', { N: 2 ** 10, r: 8, p: 1 }),
  );
});

function visitor(): Visitor {
  const v = new Visitor(app);
  v.ip = `192.0.2.${++n}`;
  return v;
}

describe('one email, users in several accounts', () => {
  it('asks which account after the password check, lists only those the password opens, and opens the chosen one', async () => {
    const person = visitor();
    const signedIn = await person.signIn(EMAIL);
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe('/dashboard/sign-in/choose');
    const before = person.cookie;
    // Nobody is signed in yet.
    expect((await person.get('/dashboard')).status).toBe(303);
    expect(
      await prismaOf(app).auditEntry.count({
        where: { action: 'sign_in', actorUserId: { in: [ids.alpha.user, ids.bravo.user] } },
      }),
    ).toBe(0);

    const page = await person.get('/dashboard/sign-in/choose');
    expect(page.status).toBe(200);
    expect(page.body).toContain(`value="${ids.alpha.user}">Open Alpha Agency</button>`);
    expect(page.body).toContain(`value="${ids.bravo.user}">Open Bravo Agency</button>`);
    expect(page.body).not.toContain('Charlie');

    // Another user (not offered) is refused; so is a choice without the CSRF token.
    const other = await person.submit('/dashboard/sign-in/choose', '/dashboard/sign-in/choose', {
      user: ids.charlie.user,
    });
    expect(other.status).toBe(400);
    expect(other.body).toContain(html('Choose one of the accounts below.'));
    const forged = await person.request('POST', '/dashboard/sign-in/choose', { _csrf: 'nope', user: ids.bravo.user });
    expect(forged.status).toBe(403);
    expect((await person.get('/dashboard')).status).toBe(303);

    const chosen = await person.submit('/dashboard/sign-in/choose', '/dashboard/sign-in/choose', {
      user: ids.bravo.user,
    });
    expect(chosen.status).toBe(303);
    expect(chosen.location).toBe('/dashboard');
    expect(person.cookie).not.toBe(before);
    const users = await person.get('/dashboard/users');
    expect(users.status).toBe(200);
    expect(users.body).toContain('colleague@bravo.example');
    expect(users.body).not.toContain('colleague@alpha.example');
    const entries = await prismaOf(app).auditEntry.findMany({
      where: { action: 'sign_in', actorUserId: { in: [ids.alpha.user, ids.bravo.user] } },
    });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ accountId: ids.bravo.agency, actorUserId: ids.bravo.user, ip: person.ip });
    expect(entries[0]!.detail).toEqual({ chosen_among: 2 });
    // The choice is used up with the old session.
    expect((await person.get('/dashboard/sign-in/choose')).status).toBe(303);
  });

  it('signs straight in when the password opens one of them; the choice page without a pending sign-in sends back', async () => {
    const person = visitor();
    const res = await person.signIn(EMAIL, 'charlie has its own password');
    expect(res.location).toBe('/dashboard');
    expect((await person.get('/dashboard/users')).body).toContain('colleague@charlie.example');
    const stranger = visitor();
    expect((await stranger.get('/dashboard/sign-in/choose')).location).toBe('/dashboard/sign-in');
  });

  it('counts choices against the sign-in throttle of the email', async () => {
    const person = visitor();
    expect((await person.signIn(EMAIL)).location).toBe('/dashboard/sign-in/choose');
    let status = 0;
    for (let i = 0; i <= SIGN_IN_LIMITS.perEmail && status !== 429; i++)
      status = (
        await person.submit('/dashboard/sign-in/choose', '/dashboard/sign-in/choose', { user: ids.charlie.user })
      ).status;
    expect(status).toBe(429);
  });
});

describe('a choice left too long', () => {
  it('lapses: the choice is refused and the person signs in again', async () => {
    let now = new Date('2054-11-23T09:00:00Z');
    const { app: timed } = await buildTestApp({ env: DASHBOARD_ENV, clock: () => now });
    for (const name of ['One', 'Two']) {
      const { id } = await createAgency(timed.storage, { name });
      await createUserWithPassword(timed.storage, id, EMAIL);
    }
    const person = new Visitor(timed);
    expect((await person.signIn(EMAIL)).location).toBe('/dashboard/sign-in/choose');
    const page = await person.get('/dashboard/sign-in/choose');
    const user = /name="user" value="([^"]+)"/.exec(page.body)![1]!;
    now = new Date(now.getTime() + SIGN_IN_CHOICE_MS + 1000);
    const late = await person.request('POST', '/dashboard/sign-in/choose', { _csrf: person.lastCsrf!, user });
    expect(late.status).toBe(400);
    expect(late.body).toContain('That took too long: sign in again.');
    expect((await person.get('/dashboard')).status).toBe(303);
  });
});
