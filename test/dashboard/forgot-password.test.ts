// E-mail through a real SMTP server (smtp-server, started here): invitations and new sign-in links are e-mailed,
// "Forgot your password?" e-mails a working one-time link to a known address and answers an unknown, disabled or
// throttled one with the same page and no mail; a failed send changes no answer. Without SMTP_URL the sign-in page
// names an admin instead and the forgot-password page does not exist.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgency, createClient } from '../../src/admin/accounts.js';
import { disableUser } from '../../src/admin/users.js';
import type { App } from '../../src/app.js';
import { Mailer } from '../../src/mail/mailer.js';
import { FORGOT_PASSWORD_LIMITS } from '../../plugins/dashboard/forgot-password-limiter.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { startSmtp, type TestSmtp } from '../helpers/smtp.js';
import { createUserWithPassword, DASHBOARD_ENV, ORIGIN, Visitor } from './helpers.js';

let smtp: TestSmtp | undefined;
let app: App;
let agencyId: string;
let clientId: string;
let owner: Visitor;
let n = 0;

// At the top level, so that the server stops whatever happens in beforeAll or the tests.
afterAll(async () => {
  await smtp?.stop();
});

beforeAll(async () => {
  smtp = await startSmtp();
  ({ app } = await buildTestApp({
    env: {
      ...DASHBOARD_ENV,
      SMTP_URL: smtp.url,
      PUBLIC_BASE_URL: ORIGIN,
      SMTP_FROM: 'Dashboard <dashboard@dash.example.test>',
    },
  }));
  ({ id: agencyId } = await createAgency(app.storage, { name: 'Postal' }));
  ({ id: clientId } = await createClient(app.storage, { agencyId, name: 'Parcel', now: app.now() }));
  await createUserWithPassword(app.storage, agencyId, 'owner@postal.example');
  owner = new Visitor(app);
  expect((await owner.signIn('owner@postal.example')).status).toBe(303);
});

const LINK = new RegExp(`${ORIGIN.replace(/\./g, '\\.')}/dashboard/set-password/([A-Za-z0-9_-]{43})`);

/** A fresh visitor from its own IP (the per-IP limit stays out of the way unless a test wants it). */
function stranger(): Visitor {
  const visitor = new Visitor(app);
  visitor.ip = `192.0.2.${++n}`;
  return visitor;
}

/** Asks for a reset link and waits until the background work (lookup, link, e-mail) is done. */
async function forgot(visitor: Visitor, email: string) {
  const res = await visitor.submit('/dashboard/forgot-password', '/dashboard/forgot-password', { email });
  await app.mailer!.settled();
  return res;
}

/** The answer page with the typed address taken out (everything else must be the same for any address). */
const shape = (body: string, email: string) =>
  body.replaceAll(email, '<email>').replace(/name="_csrf" value="[^"]*"/g, '');

describe('with SMTP_URL', () => {
  it('offers "Forgot your password?" on the sign-in page', async () => {
    const page = await stranger().get('/dashboard/sign-in');
    expect(page.body).toContain('href="/dashboard/forgot-password"');
    expect(page.body).not.toContain('An admin of your account');
    expect((await stranger().get('/dashboard/forgot-password')).status).toBe(200);
  });

  it("e-mails a known address a link that works (the operator's link stays good until one is used); an unknown address gets the same page and no mail", async () => {
    const userId = await createUserWithPassword(app.storage, clientId, 'forgetful@parcel.example');
    const earlier = await prismaOf(app).oneTimeToken.findFirstOrThrow({ where: { userId } });
    const sent = smtp!.received.length;

    const known = await forgot(stranger(), 'Forgetful@Parcel.example');
    const unknown = await forgot(stranger(), 'nobody-here@parcel.example');
    expect(known.status).toBe(200);
    expect(unknown.status).toBe(200);
    expect(known.headers['cache-control']).toBe('no-store');
    expect(shape(known.body, 'Forgetful@Parcel.example')).toBe(shape(unknown.body, 'nobody-here@parcel.example'));
    expect(known.body).toContain('is on its way');

    const mails = smtp!.received.slice(sent);
    expect(mails).toHaveLength(1);
    const [mail] = mails;
    expect(mail!.to).toEqual(['forgetful@parcel.example']);
    expect(mail!.from).toBe('dashboard@dash.example.test');
    expect(mail!.subject).toBe('Reset your dashboard password');
    const token = LINK.exec(mail!.text)?.[1];
    expect(token).toBeDefined();
    // The operator's link is not the asker's to void; it ends when the reset link is used (below).
    expect(
      (await prismaOf(app).oneTimeToken.findUniqueOrThrow({ where: { id: earlier.id } })).expiresAt.getTime(),
    ).toBeGreaterThan(Date.now());

    const person = stranger();
    const path = `/dashboard/set-password/${token}`;
    const password = 'remember the blue heron at dawn';
    expect((await person.submit(path, path, { password, confirm: password })).status).toBe(303);
    expect((await person.signIn('forgetful@parcel.example', password)).status).toBe(303);
    expect((await person.get('/dashboard')).status).toBe(200);
    expect((await person.get(path)).status).toBe(410);
    expect(
      (await prismaOf(app).oneTimeToken.findUniqueOrThrow({ where: { id: earlier.id } })).expiresAt.getTime(),
    ).toBeLessThanOrEqual(Date.now());

    const entry = await prismaOf(app).auditEntry.findFirstOrThrow({
      where: { action: 'password_reset_requested', accountId: clientId },
    });
    expect(entry).toMatchObject({ actorKind: 'user', actorUserId: userId, agencyId });
    expect(entry.ip).toMatch(/^192\.0\.2\./);
    expect(entry.detail).toMatchObject({ user_id: userId, earlier_links_ended: 0 });
  });

  it("does not void an admin's link: the admin's link works after a reset request, and the first link used wins", async () => {
    const password = 'the quiet lighthouse keeper sings';
    for (const first of ['admin', 'reset'] as const) {
      const userId = await createUserWithPassword(app.storage, clientId, `${first}-first@parcel.example`);
      const sent = smtp!.received.length;
      const linked = await owner.submit('/dashboard/users', `/dashboard/users/${userId}/link`);
      expect(linked.status).toBe(200);
      const adminPath = `/dashboard/set-password/${LINK.exec(linked.body)![1]}`;
      await forgot(stranger(), `${first}-first@parcel.example`);
      await smtp!.waitFor(sent + 2);
      const resetMail = smtp!.received.slice(sent).find((m) => m.subject.startsWith('Reset'));
      const resetPath = `/dashboard/set-password/${LINK.exec(resetMail!.text)![1]}`;
      const person = stranger();
      expect((await person.get(adminPath)).status).toBe(200);
      expect((await person.get(resetPath)).status).toBe(200);

      const [used, other] = first === 'admin' ? [adminPath, resetPath] : [resetPath, adminPath];
      expect((await person.submit(used, used, { password, confirm: password })).status).toBe(303);
      expect((await person.get(other)).status).toBe(410);
      expect((await person.submit(other, other, { password, confirm: password })).status).toBe(410);
      expect((await person.signIn(`${first}-first@parcel.example`, password)).status).toBe(303);
      const set = await prismaOf(app).auditEntry.findFirstOrThrow({
        where: { action: 'password_set', actorUserId: userId },
      });
      expect(set.detail).toMatchObject({ other_links_ended: 1 });
    }
  });

  it('sends nothing to a disabled user, with the same page', async () => {
    const userId = await createUserWithPassword(app.storage, clientId, 'gone@parcel.example');
    await disableUser(app.storage, userId, { kind: 'operator' }, app.now());
    const sent = smtp!.received.length;
    const res = await forgot(stranger(), 'gone@parcel.example');
    expect(res.status).toBe(200);
    expect(shape(res.body, 'gone@parcel.example')).toBe(
      shape((await forgot(stranger(), 'unknown-too@parcel.example')).body, 'unknown-too@parcel.example'),
    );
    expect(smtp!.received.length).toBe(sent);
  });

  it('throttles per email and per IP with the same answer, and sends nothing beyond the limit', async () => {
    await createUserWithPassword(app.storage, clientId, 'popular@parcel.example');
    const sent = smtp!.received.length;
    const answers = [];
    for (let i = 0; i < FORGOT_PASSWORD_LIMITS.perEmail + 2; i++)
      answers.push(await forgot(stranger(), 'popular@parcel.example'));
    expect(smtp!.received.length - sent).toBe(FORGOT_PASSWORD_LIMITS.perEmail);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(shape(answer.body, 'popular@parcel.example')).toBe(shape(answers[0]!.body, 'popular@parcel.example'));
    }

    // One IP asking about many addresses: past its limit, a known address gets no mail either.
    const busy = stranger();
    for (let i = 0; i < FORGOT_PASSWORD_LIMITS.perIp; i++)
      expect((await forgot(busy, `someone-${i}@elsewhere.example`)).status).toBe(200);
    await createUserWithPassword(app.storage, clientId, 'late@parcel.example');
    const before = smtp!.received.length;
    const throttled = await forgot(busy, 'late@parcel.example');
    expect(throttled.status).toBe(200);
    expect(shape(throttled.body, 'late@parcel.example')).toBe(shape(answers[0]!.body, 'popular@parcel.example'));
    expect(smtp!.received.length).toBe(before);
  });

  it('e-mails invitations and new sign-in links, with the link shown on the page', async () => {
    const sent = smtp!.received.length;
    const invited = await owner.submit('/dashboard/users', '/dashboard/users/invite', {
      email: 'newcomer@parcel.example',
      account: clientId,
    });
    expect(invited.status).toBe(200);
    expect(invited.body).toContain('An e-mail with this link is on its way to newcomer@parcel.example');
    const user = await prismaOf(app).user.findFirstOrThrow({ where: { email: 'newcomer@parcel.example' } });
    const linked = await owner.submit('/dashboard/users', `/dashboard/users/${user.id}/link`);
    expect(linked.status).toBe(200);
    await app.mailer!.settled();
    const [invitation, link] = smtp!.received.slice(sent);
    expect(invitation!.to).toEqual(['newcomer@parcel.example']);
    expect(invitation!.subject).toBe('You are invited to a call dashboard');
    expect(LINK.exec(invitation!.text)![0]).toBe(LINK.exec(invited.body)![0]);
    expect(link!.subject).toBe('Your new dashboard sign-in link');
    expect(LINK.exec(link!.text)![0]).toBe(LINK.exec(linked.body)![0]);
  });
});

describe('a failing SMTP server', () => {
  it('changes no answer: the invitation shows its link, "Forgot" its page; the failure is logged without the link', async () => {
    const dead = await startSmtp();
    await dead.stop();
    const { app: failing } = await buildTestApp({
      env: { ...DASHBOARD_ENV, SMTP_URL: dead.url, PUBLIC_BASE_URL: ORIGIN },
    });
    const { id } = await createAgency(failing.storage, { name: 'Silent' });
    await createUserWithPassword(failing.storage, id, 'boss@silent.example');
    const boss = new Visitor(failing);
    expect((await boss.signIn('boss@silent.example')).status).toBe(303);
    const invited = await boss.submit('/dashboard/users', '/dashboard/users/invite', {
      email: 'quiet@silent.example',
      account: id,
    });
    expect(invited.status).toBe(200);
    expect(invited.body).toMatch(LINK);
    const asked = await new Visitor(failing).submit('/dashboard/forgot-password', '/dashboard/forgot-password', {
      email: 'boss@silent.example',
    });
    expect(asked.status).toBe(200);
    expect(asked.body).toContain('is on its way');
    await failing.mailer!.settled();

    const warnings: { fields: object; msg: string }[] = [];
    const mailer = new Mailer(dead.url, 'from@example.com', { warn: (fields, msg) => warnings.push({ fields, msg }) });
    try {
      expect(await mailer.send({ to: 'x@example.com', subject: 'S', text: 'https://secret.example/link' })).toBe(false);
    } finally {
      await mailer.close();
    }
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toBe('e-mail not sent');
    expect(JSON.stringify(warnings[0])).not.toContain('secret.example');
  });
});

describe('without SMTP_URL', () => {
  it('says on the sign-in page that an admin can make a new link; there is no forgot-password page', async () => {
    const { app: plain } = await buildTestApp({ env: DASHBOARD_ENV });
    const visitor = new Visitor(plain);
    const page = await visitor.get('/dashboard/sign-in');
    expect(page.body).toContain('An admin of your account (a user of your agency) can make you a new sign-in link');
    expect(page.body).not.toContain('/dashboard/forgot-password');
    expect((await visitor.get('/dashboard/forgot-password')).status).toBe(404);
    expect(
      (
        await visitor.request('POST', '/dashboard/forgot-password', {
          _csrf: visitor.lastCsrf ?? '',
          email: 'a@b.example',
        })
      ).status,
    ).toBe(404);
  });
});
