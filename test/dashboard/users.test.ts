// The Users page: invitations (the link shown once, working once, for a user who then sees only their account),
// a taken email refused, disabling (their session ends at their next request; never oneself), what client users
// see and cannot do, and the audit entries of each; new sign-in links (voiding the earlier ones), enabling again,
// an address another agency uses (answered as a fresh one), and the recent password entry both links need.
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgency, createClient } from '../../src/admin/accounts.js';
import { CANNOT_DISABLE_SELF, inviteUser } from '../../src/admin/users.js';
import { notAnEmailAddress } from '../../schemas/user-email.js';
import type { App } from '../../src/app.js';
import { oneTimeTokenDigest } from '../../src/domain/one-time-token.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createUserWithPassword, DASHBOARD_ENV, PASSWORD, Visitor, html } from './helpers.js';

let app: App;
let agencyId: string;
let betaId: string;
let gammaId: string;
let ownerId: string;
let bobId: string;
let owner: Visitor;

const LINK = /https:\/\/[^"<\s]+\/dashboard\/set-password\/([A-Za-z0-9_-]{43})/;

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV }));
  ({ id: agencyId } = await createAgency(app.storage, { name: 'Acme' }));
  ({ id: betaId } = await createClient(app.storage, { agencyId, name: 'Beta', now: app.now() }));
  ({ id: gammaId } = await createClient(app.storage, { agencyId, name: 'Gamma', now: app.now() }));
  ownerId = await createUserWithPassword(app.storage, agencyId, 'owner@acme.example');
  bobId = await createUserWithPassword(app.storage, betaId, 'bob@beta.example');
  await createUserWithPassword(app.storage, gammaId, 'gina@gamma.example');
  owner = new Visitor(app);
  expect((await owner.signIn('owner@acme.example')).status).toBe(303);
});

const invite = (visitor: Visitor, email: string, account: string, page = '/dashboard/users') =>
  visitor.submit(page, '/dashboard/users/invite', { email, account });

describe('users page', () => {
  it("lists an agency user's people with their accounts, and offers to invite to the agency or any client", async () => {
    const page = await owner.get('/dashboard/users');
    expect(page.status).toBe(200);
    for (const email of ['owner@acme.example', 'bob@beta.example', 'gina@gamma.example'])
      expect(page.body).toContain(email);
    expect(page.body).toContain('action="/dashboard/users/invite"');
    for (const id of [agencyId, betaId, gammaId]) expect(page.body).toContain(`<option value="${id}"`);
    // A Disable button for others, never for oneself.
    expect(page.body).toContain(`action="/dashboard/users/${bobId}/disable"`);
    expect(page.body).not.toContain(`action="/dashboard/users/${ownerId}/disable"`);
  });

  it('invites: the link is shown once (no-store, not in the session, not on reload), works once, and its user sees only their account', async () => {
    const res = await invite(owner, 'New.Person@Beta.example', betaId);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const token = LINK.exec(res.body)?.[1];
    expect(token).toBeDefined();
    expect(res.body).toContain('new.person@beta.example');

    // Stored as a digest only, an invitation for 24 hours; neither the session nor any later page has the token.
    const user = await prismaOf(app).user.findFirstOrThrow({
      where: { email: 'new.person@beta.example' },
      include: { tokens: true },
    });
    expect(user).toMatchObject({ accountId: betaId, passwordHash: null, disabledAt: null });
    expect(user.tokens).toHaveLength(1);
    expect(Buffer.from(user.tokens[0]!.digest).equals(oneTimeTokenDigest(token!))).toBe(true);
    expect(user.tokens[0]!.purpose).toBe('invitation');
    expect(user.tokens[0]!.createdById).toBe(ownerId);
    expect(user.tokens[0]!.expiresAt.getTime() - user.tokens[0]!.createdAt.getTime()).toBe(24 * 3_600_000);
    const sessions = await prismaOf(app).session.findMany({ select: { data: true } });
    expect(JSON.stringify(sessions)).not.toContain(token);
    const again = await owner.get('/dashboard/users');
    expect(again.body).not.toContain(token);
    expect(again.body).toContain('new.person@beta.example');
    expect(again.body).toContain('invited (no password yet)');

    const entry = await prismaOf(app).auditEntry.findFirstOrThrow({ where: { action: 'user_invited' } });
    expect(entry).toMatchObject({ accountId: betaId, agencyId, actorKind: 'user', actorUserId: ownerId, ip: owner.ip });
    expect(entry.detail).toMatchObject({ user_id: user.id, email: 'new.person@beta.example' });

    // The invited person sets a password with the link (once), signs in, and sees only Beta.
    const invited = new Visitor(app);
    invited.ip = '198.51.100.20';
    const path = `/dashboard/set-password/${token}`;
    expect((await invited.get(path)).status).toBe(200);
    const password = 'a quiet orchard in late October';
    const set = await invited.submit(path, path, { password, confirm: password });
    expect(set.status).toBe(303);
    expect((await invited.get(path)).status).toBe(410);
    expect((await invited.signIn('new.person@beta.example', password)).status).toBe(303);
    const theirs = await invited.get('/dashboard/users');
    expect(theirs.status).toBe(200);
    expect(theirs.body).toContain('bob@beta.example');
    expect(theirs.body).not.toContain('owner@acme.example');
    expect(theirs.body).not.toContain('gina@gamma.example');
    expect(theirs.body).not.toContain('action="/dashboard/users/invite"');
    expect(theirs.body).not.toContain('/disable"');
    expect((await invited.get('/dashboard/clients')).status).toBe(404);
    expect((await invited.get(`/dashboard/clients/${betaId}`)).status).toBe(404);
  });

  it('refuses a taken email (any case) and a malformed one with a message, and changes nothing', async () => {
    const count = await prismaOf(app).user.count();
    const audits = await prismaOf(app).auditEntry.count();
    const taken = await invite(owner, 'BOB@beta.example', gammaId);
    expect(taken.status).toBe(400);
    expect(taken.body).toContain('A user with the email bob@beta.example already exists');
    expect(taken.body).toContain('value="BOB@beta.example"');
    expect(taken.body).not.toMatch(LINK);
    const malformed = await invite(owner, 'not an email', betaId);
    expect(malformed.status).toBe(400);
    expect(malformed.body).toContain('is not an email address');
    expect(await prismaOf(app).user.count()).toBe(count);
    expect(await prismaOf(app).auditEntry.count()).toBe(audits);
  });

  it("refuses each address the schema's shape refuses in src/admin's (callctl's) words, keeping what was typed", async () => {
    const count = await prismaOf(app).user.count();
    for (const email of ['not an email', 'a@b', '@beta.example', 'a@@beta.example', '']) {
      // callctl (src/admin) refuses it with the same sentence.
      const said = await inviteUser(app.storage, {
        accountId: gammaId,
        email,
        invitedBy: { userId: ownerId, ip: null, scope: { accountId: agencyId, kind: 'agency' } },
        now: app.now(),
      }).then(
        () => null,
        (error: Error) => error.message,
      );
      expect(said, email).toBe(notAnEmailAddress(email));
      const res = await invite(owner, email, gammaId);
      expect(res.status, email).toBe(400);
      expect(res.body, email).toContain(
        `<p class="field-error" id="f-invite-email-error" role="alert">${html(said!)}</p>`,
      );
      expect(res.body, email).toContain(`value="${html(email)}"`);
    }
    expect(await prismaOf(app).user.count()).toBe(count);
  });

  it("answers 404 for an account that is not the viewer's, and invites nobody", async () => {
    const { id: otherAgency } = await createAgency(app.storage, { name: 'Other' });
    const count = await prismaOf(app).user.count();
    for (const account of [otherAgency, '00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      expect((await invite(owner, `someone-${account}@x.example`, account)).status).toBe(404);
    }
    expect(await prismaOf(app).user.count()).toBe(count);
  });

  it('disables a user: their session ends at their next request, the audit says who; the page says so once', async () => {
    const victimId = await createUserWithPassword(app.storage, betaId, 'victim@beta.example');
    const victim = new Visitor(app);
    victim.ip = '198.51.100.21';
    expect((await victim.signIn('victim@beta.example')).status).toBe(303);
    expect((await victim.get('/dashboard')).status).toBe(200);

    const res = await owner.submit('/dashboard/users', `/dashboard/users/${victimId}/disable`);
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard/users');
    const page = await owner.get('/dashboard/users');
    expect(page.body).toContain('victim@beta.example is disabled; 1 session ended.');
    expect(page.body).not.toContain(`action="/dashboard/users/${victimId}/disable"`);
    expect((await owner.get('/dashboard/users')).body).not.toContain('is disabled; 1 session ended.');

    const next = await victim.get('/dashboard');
    expect(next.status).toBe(303);
    expect(next.location).toMatch(/^\/dashboard\/sign-in/);
    expect(await prismaOf(app).session.count({ where: { userId: victimId } })).toBe(0);
    expect((await prismaOf(app).user.findUniqueOrThrow({ where: { id: victimId } })).disabledAt).not.toBeNull();
    const entry = await prismaOf(app).auditEntry.findFirstOrThrow({
      where: { action: 'user_disabled', accountId: betaId },
    });
    expect(entry).toMatchObject({ actorKind: 'user', actorUserId: ownerId, ip: owner.ip });
    expect(entry.detail).toMatchObject({ user_id: victimId, sessions_ended: 1 });
  });

  it("from a client's page, goes back to that page", async () => {
    const userId = await createUserWithPassword(app.storage, gammaId, 'leaving@gamma.example');
    const res = await owner.submit(`/dashboard/clients/${gammaId}`, `/dashboard/users/${userId}/disable`);
    expect(res.status).toBe(303);
    expect(res.location).toBe(`/dashboard/clients/${gammaId}`);
  });

  it('refuses to disable oneself, with a message, and changes nothing', async () => {
    const res = await owner.submit('/dashboard/users', `/dashboard/users/${ownerId}/disable`);
    expect(res.status).toBe(400);
    expect(res.body).toContain(CANNOT_DISABLE_SELF.replace(/'/g, '&#39;'));
    expect((await prismaOf(app).user.findUniqueOrThrow({ where: { id: ownerId } })).disabledAt).toBeNull();
    expect((await owner.get('/dashboard/users')).status).toBe(200);
  });

  it("answers 404 for a user who is not the viewer's to disable", async () => {
    const { id: otherAgency } = await createAgency(app.storage, { name: 'Elsewhere' });
    const strangerId = await createUserWithPassword(app.storage, otherAgency, 'stranger@elsewhere.example');
    for (const id of [strangerId, '00000000-0000-4000-8000-000000000000', 'nope']) {
      expect((await owner.submit('/dashboard/users', `/dashboard/users/${id}/disable`)).status).toBe(404);
    }
    expect((await prismaOf(app).user.findUniqueOrThrow({ where: { id: strangerId } })).disabledAt).toBeNull();
  });

  it("shows a client user their client's users, without invite or disable; those actions are 404 for them", async () => {
    const bob = new Visitor(app);
    bob.ip = '198.51.100.22';
    expect((await bob.signIn('bob@beta.example')).status).toBe(303);
    const page = await bob.get('/dashboard/users');
    expect(page.status).toBe(200);
    expect(page.body).toContain('bob@beta.example');
    expect(page.body).not.toContain('owner@acme.example');
    expect(page.body).not.toContain('gina@gamma.example');
    expect(page.body).not.toContain('action="/dashboard/users/invite"');
    expect(page.body).not.toContain('/disable"');
    expect(page.body).not.toContain('href="/dashboard/clients"');
    const count = await prismaOf(app).user.count();
    expect((await invite(bob, 'friend@beta.example', betaId)).status).toBe(404);
    const colleague = await createUserWithPassword(app.storage, betaId, 'colleague@beta.example');
    expect((await bob.submit('/dashboard/users', `/dashboard/users/${colleague}/disable`)).status).toBe(404);
    expect(await prismaOf(app).user.count()).toBe(count + 1);
    expect((await prismaOf(app).user.findUniqueOrThrow({ where: { id: colleague } })).disabledAt).toBeNull();
  });
});

describe('new sign-in links and enabling', () => {
  const linkFor = (visitor: Visitor, userId: string, page = '/dashboard/users') =>
    visitor.submit(page, `/dashboard/users/${userId}/link`);

  it('"New sign-in link" voids the earlier link (it shows the unusable page), is shown once, sets the password; audited', async () => {
    const invited = await invite(owner, 'lost.invitation@beta.example', betaId);
    const firstToken = LINK.exec(invited.body)![1]!;
    const user = await prismaOf(app).user.findFirstOrThrow({ where: { email: 'lost.invitation@beta.example' } });
    expect((await owner.get('/dashboard/users')).body).toContain(`action="/dashboard/users/${user.id}/link"`);

    const res = await linkFor(owner, user.id);
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const token = LINK.exec(res.body)?.[1];
    expect(token).toBeDefined();
    expect(token).not.toBe(firstToken);
    expect(res.body).toContain('lost.invitation@beta.example');
    expect((await owner.get('/dashboard/users')).body).not.toContain(token);

    const person = new Visitor(app);
    person.ip = '198.51.100.30';
    const old = await person.get(`/dashboard/set-password/${firstToken}`);
    expect(old.status).toBe(410);
    expect(old.body).toContain('a newer link replaced it');

    // A second new link voids the first new one too.
    const again = await linkFor(owner, user.id);
    const latest = LINK.exec(again.body)![1]!;
    expect((await person.get(`/dashboard/set-password/${token}`)).status).toBe(410);

    const path = `/dashboard/set-password/${latest}`;
    const password = 'a ladder leaning on the pear tree';
    expect((await person.submit(path, path, { password, confirm: password })).status).toBe(303);
    expect((await person.signIn('lost.invitation@beta.example', password)).status).toBe(303);
    expect((await person.get('/dashboard')).status).toBe(200);

    const entries = await prismaOf(app).auditEntry.findMany({
      where: { action: 'sign_in_link_created', accountId: betaId },
      orderBy: { createdAt: 'asc' },
    });
    expect(entries).toHaveLength(2);
    expect(entries[0]).toMatchObject({ agencyId, actorKind: 'user', actorUserId: ownerId, ip: owner.ip });
    expect(entries[0]!.detail).toMatchObject({
      user_id: user.id,
      email: 'lost.invitation@beta.example',
      earlier_links_ended: 1,
    });
    const stored = await prismaOf(app).oneTimeToken.findMany({
      where: { userId: user.id },
      orderBy: { createdAt: 'asc' },
    });
    expect(stored.map((t) => t.purpose)).toEqual(['invitation', 'set_password', 'set_password']);
    expect(stored[1]!.createdById).toBe(ownerId);
  });

  it('gives a disabled user no link; Enable lets them sign in again with their password; audited', async () => {
    const userId = await createUserWithPassword(app.storage, gammaId, 'returning@gamma.example');
    expect((await owner.submit('/dashboard/users', `/dashboard/users/${userId}/disable`)).status).toBe(303);
    const page = await owner.get('/dashboard/users');
    expect(page.body).toContain(`action="/dashboard/users/${userId}/enable"`);
    expect(page.body).not.toContain(`action="/dashboard/users/${userId}/link"`);
    const tokens = await prismaOf(app).oneTimeToken.count({ where: { userId } });
    const refused = await linkFor(owner, userId);
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('returning@gamma.example is disabled: enable them first');
    expect(refused.body).not.toMatch(LINK);
    expect(await prismaOf(app).oneTimeToken.count({ where: { userId } })).toBe(tokens);

    const person = new Visitor(app);
    person.ip = '198.51.100.31';
    expect((await person.signIn('returning@gamma.example')).status).toBe(401);
    const enabled = await owner.submit(`/dashboard/clients/${gammaId}`, `/dashboard/users/${userId}/enable`);
    expect(enabled.status).toBe(303);
    expect(enabled.location).toBe(`/dashboard/clients/${gammaId}`);
    expect((await owner.get(`/dashboard/clients/${gammaId}`)).body).toContain(
      'returning@gamma.example is enabled again. They can sign in with their password.',
    );
    expect((await person.signIn('returning@gamma.example')).status).toBe(303);
    expect((await person.get('/dashboard')).status).toBe(200);
    const entry = await prismaOf(app).auditEntry.findFirstOrThrow({
      where: { action: 'user_enabled', accountId: gammaId },
    });
    expect(entry).toMatchObject({ actorKind: 'user', actorUserId: ownerId, ip: owner.ip });
    expect(entry.detail).toMatchObject({ user_id: userId });
    expect((await owner.get('/dashboard/users')).body).toContain(`action="/dashboard/users/${userId}/link"`);
  });
});

describe('inviting an address another agency uses (emails are unique per agency)', () => {
  /** The invitation page with what differs between any two invitations (address, link, expiry) taken out. */
  const shape = (body: string, email: string) =>
    body
      .replaceAll(email, '<email>')
      .replace(LINK, '<link>')
      .replace(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}(?::\d{2})? UTC/g, '<time>')
      .replace(/name="_csrf" value="[^"]*"/g, '');

  it("answers exactly as for a fresh address, makes a user of the inviter, and leaves the other tenant's user unchanged", async () => {
    const { id: otherAgency } = await createAgency(app.storage, { name: 'Rival' });
    const theirsId = await createUserWithPassword(app.storage, otherAgency, 'shared.person@rival.example');
    const before = await prismaOf(app).user.findUniqueOrThrow({
      where: { id: theirsId },
      include: { tokens: true, sessions: true },
    });
    const theirAudit = await prismaOf(app).auditEntry.findMany({ where: { agencyId: otherAgency } });

    const fresh = await invite(owner, 'fresh.person@fresh.example', betaId);
    const taken = await invite(owner, 'shared.person@rival.example', betaId);
    expect(taken.status).toBe(fresh.status);
    expect(taken.status).toBe(200);
    expect(taken.body).not.toContain('already exists');
    expect(shape(taken.body, 'shared.person@rival.example')).toBe(shape(fresh.body, 'fresh.person@fresh.example'));
    const invitedAudit = (email: string) =>
      prismaOf(app).auditEntry.findFirstOrThrow({
        where: { action: 'user_invited', detail: { path: ['email'], equals: email } },
      });
    const [takenAudit, freshAudit] = [
      await invitedAudit('shared.person@rival.example'),
      await invitedAudit('fresh.person@fresh.example'),
    ];
    expect(takenAudit).toMatchObject({ actorKind: 'user', actorUserId: ownerId, ip: owner.ip, accountId: betaId });
    expect({ ...freshAudit, id: 0, createdAt: 0, detail: Object.keys(freshAudit.detail as object) }).toEqual({
      ...takenAudit,
      id: 0,
      createdAt: 0,
      detail: Object.keys(takenAudit.detail as object),
    });

    // The other agency's user: not a field, link or session changed, and nothing in their audit log.
    expect(
      await prismaOf(app).user.findUniqueOrThrow({
        where: { id: theirsId },
        include: { tokens: true, sessions: true },
      }),
    ).toEqual(before);
    expect(await prismaOf(app).auditEntry.findMany({ where: { agencyId: otherAgency } })).toEqual(theirAudit);

    // The link works like any other: a user of Beta, who signs in to Beta with the password chosen there.
    const path = `/dashboard/set-password/${LINK.exec(taken.body)![1]}`;
    const person = new Visitor(app);
    person.ip = '198.51.100.32';
    const password = 'beta has its own password here';
    expect((await person.submit(path, path, { password, confirm: password })).status).toBe(303);
    expect((await person.signIn('shared.person@rival.example', password)).status).toBe(303);
    const users = await person.get('/dashboard/users');
    expect(users.body).toContain('bob@beta.example');
    // And the other agency's user still signs in to their own agency with theirs.
    const theirs = new Visitor(app);
    theirs.ip = '198.51.100.33';
    expect((await theirs.signIn('shared.person@rival.example')).status).toBe(303);
    expect((await theirs.get('/dashboard/users')).body).not.toContain('bob@beta.example');
  });

  it("still says so when the address is taken within the inviter's own agency", async () => {
    const res = await invite(owner, 'gina@gamma.example', betaId);
    expect(res.status).toBe(400);
    expect(res.body).toContain('A user with the email gina@gamma.example already exists');
  });
});

describe('inviting and new sign-in links need a recent password entry', () => {
  it('after 10 minutes, sends to the re-enter-password page and back to the Users page; nothing is made until then', async () => {
    let now = new Date('2054-11-23T09:00:00Z');
    const { app: timed } = await buildTestApp({ env: DASHBOARD_ENV, clock: () => now });
    const { id: agency } = await createAgency(timed.storage, { name: 'Clockwork' });
    await createUserWithPassword(timed.storage, agency, 'keeper@clockwork.example');
    const staleId = await createUserWithPassword(timed.storage, agency, 'stale@clockwork.example');
    const keeper = new Visitor(timed);
    expect((await keeper.signIn('keeper@clockwork.example')).status).toBe(303);
    now = new Date(now.getTime() + 11 * 60_000);

    const users = await prismaOf(timed).user.count();
    const tokens = await prismaOf(timed).oneTimeToken.count();
    const confirm = `/dashboard/confirm-password?next=${encodeURIComponent('/dashboard/users')}`;
    const invited = await keeper.submit('/dashboard/users', '/dashboard/users/invite', {
      email: 'late@clockwork.example',
      account: agency,
    });
    expect(invited.status).toBe(303);
    expect(invited.location).toBe(confirm);
    const linked = await keeper.submit('/dashboard/users', `/dashboard/users/${staleId}/link`);
    expect(linked.status).toBe(303);
    expect(linked.location).toBe(confirm);
    expect(await prismaOf(timed).user.count()).toBe(users);
    expect(await prismaOf(timed).oneTimeToken.count()).toBe(tokens);

    const confirmed = await keeper.submit(confirm, '/dashboard/confirm-password', { password: PASSWORD });
    expect(confirmed.status).toBe(303);
    expect(confirmed.location).toBe('/dashboard/users');
    expect(
      (
        await keeper.submit('/dashboard/users', '/dashboard/users/invite', {
          email: 'late@clockwork.example',
          account: agency,
        })
      ).status,
    ).toBe(200);
    expect((await keeper.submit('/dashboard/users', `/dashboard/users/${staleId}/link`)).status).toBe(200);
  });
});
