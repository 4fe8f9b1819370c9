// Invitations and new sign-in links through a real SMTP server (smtp-server, started here), as a hostile tenant would
// use them: a client named like a phishing notice is quoted as a name in the body, cut short and never a link, and is
// kept out of the Subject; every e-mail is audited; invitations and links are throttled per user and per agency with
// a clear refusal on the page, audited, and nothing e-mailed beyond the limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgency, createClient } from '../../src/admin/accounts.js';
import { newSignInLink } from '../../src/admin/user-links.js';
import { createUser } from '../../src/admin/users.js';
import type { App } from '../../src/app.js';
import { PEOPLE_LINK_LIMITS } from '../../src/domain/people-limits.js';
import { MAIL_NAME_MAX, quotedName } from '../../src/mail/messages.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { startSmtp, type TestSmtp } from '../helpers/smtp.js';
import { createUserWithPassword, DASHBOARD_ENV, html, ORIGIN, Visitor } from '../dashboard/helpers.js';

const PHISHING =
  'Your account is locked: unlock it at https://evil.test/unlock?id=1 or www.evil.test or evil\uFF0Etest today, before it is deleted';

let smtp: TestSmtp | undefined;
let app: App;
let agencyId: string;
let clientId: string;
let n = 0;

afterAll(async () => {
  await smtp?.stop();
});

beforeAll(async () => {
  smtp = await startSmtp();
  ({ app } = await buildTestApp({
    env: { ...DASHBOARD_ENV, SMTP_URL: smtp.url, PUBLIC_BASE_URL: ORIGIN, SMTP_FROM: 'dashboard@dash.example.test' },
  }));
  ({ id: agencyId } = await createAgency(app.storage, { name: 'Mallory Agency' }));
  ({ id: clientId } = await createClient(app.storage, { now: app.now(), agencyId, name: PHISHING }));
});

/** A new signed-in agency user, from an IP of their own. */
async function agencyUser(): Promise<{ visitor: Visitor; userId: string }> {
  const email = `mallory-${++n}@mallory.example`;
  const userId = await createUserWithPassword(app.storage, agencyId, email);
  const visitor = new Visitor(app);
  visitor.ip = `198.51.100.${n}`;
  expect((await visitor.signIn(email)).status).toBe(303);
  return { visitor, userId };
}

const invite = (visitor: Visitor, email: string) =>
  visitor.submit('/dashboard/users', '/dashboard/users/invite', { email, account: clientId });

describe('e-mail to people', () => {
  it('quotes a tenant-chosen name as plain text, cut short, never a link, and keeps it out of the Subject', () => {
    const quoted = quotedName(PHISHING);
    expect(quoted).toBe('"Your account is locked: unlock it at https[:]//evil[.]test/unlo…"');
    expect([...quotedName('x'.repeat(500))]).toHaveLength(MAIL_NAME_MAX + 2);
    expect(quotedName('see www.evil.test, evil\uFF0Etest or me@evil.test')).toBe(
      '"see www[.]evil[.]test, evil[.]test or me@evil[.]test"',
    );
    expect(quotedName('Acme Inc.')).toBe('"Acme Inc."');
    expect(quotedName('a\nb\u202Ec "d"')).toBe('"a b c \'d\'"');
  });

  it('sends an invitation whose text names the client only as a quoted, link-free name, and audits it', async () => {
    const { visitor, userId } = await agencyUser();
    const sent = smtp!.received.length;
    const answer = await invite(visitor, 'victim@victim.example');
    expect(answer.status).toBe(200);
    await app.mailer!.settled();
    const [mail] = smtp!.received.slice(sent);
    expect(mail!.to).toEqual(['victim@victim.example']);
    expect(mail!.subject).toBe('You are invited to a call dashboard');
    expect(mail!.text).toContain(
      'of the account named "Your account is locked: unlock it at https[:]//evil[.]test/unlo…" (a name its users chose)',
    );
    // Nothing a mail client would link but our own link: no scheme, no host name of the tenant's text.
    const withoutOurLink = mail!.text.replace(/https:\/\/dash\.example\.test\/dashboard\/set-password\/\S+/, '');
    expect(withoutOurLink).not.toMatch(/:\/\/|evil\.test|www\.evil|evil\uFF0Etest/);
    expect(withoutOurLink).not.toContain('before it is deleted');

    const entry = await prismaOf(app).auditEntry.findFirstOrThrow({
      where: { action: 'email_sent', accountId: clientId },
    });
    expect(entry).toMatchObject({ actorKind: 'user', actorUserId: userId, agencyId });
    expect(entry.detail).toEqual({ kind: 'invitation', to: 'victim@victim.example', sent: true });
  });

  it('refuses a user over the hourly limit of invitations and links: says so on the page, audits it, sends nothing', async () => {
    const { visitor, userId } = await agencyUser();
    const sent = smtp!.received.length;
    for (let i = 0; i < PEOPLE_LINK_LIMITS.perUser.count - 1; i++)
      expect((await invite(visitor, `target-${n}-${i}@victim.example`)).status).toBe(200);
    const target = await prismaOf(app).user.findFirstOrThrow({ where: { email: `target-${n}-0@victim.example` } });
    expect((await visitor.submit('/dashboard/users', `/dashboard/users/${target.id}/link`)).status).toBe(200);

    const refused = await invite(visitor, `one-too-many-${n}@victim.example`);
    expect(refused.status).toBe(429);
    expect(refused.body).toContain(
      html(`You have made ${PEOPLE_LINK_LIMITS.perUser.count} invitations and sign-in links in the last hour`),
    );
    expect(await prismaOf(app).user.count({ where: { email: `one-too-many-${n}@victim.example` } })).toBe(0);
    const link = await visitor.submit('/dashboard/users', `/dashboard/users/${target.id}/link`);
    expect(link.status).toBe(429);
    expect(link.body).toContain('Try again after');

    await app.mailer!.settled();
    expect(smtp!.received.length - sent).toBe(PEOPLE_LINK_LIMITS.perUser.count);
    const refusals = await prismaOf(app).auditEntry.findMany({
      where: { action: 'people_link_refused', actorUserId: userId },
      orderBy: { createdAt: 'asc' },
    });
    expect(refusals.map((r) => r.detail)).toMatchObject([
      { what: 'invitation', email: `one-too-many-${n}@victim.example`, limit: 'user' },
      { what: 'sign_in_link', email: `target-${n}-0@victim.example`, limit: 'user' },
    ]);
    expect(await prismaOf(app).auditEntry.count({ where: { action: 'email_sent', actorUserId: userId } })).toBe(
      PEOPLE_LINK_LIMITS.perUser.count,
    );
  });

  it("refuses an agency over its daily limit, whichever of its users asks; the operator's callctl is not limited", async () => {
    const made = await prismaOf(app).auditEntry.count({
      where: { agencyId, actorKind: 'user', action: { in: ['user_invited', 'sign_in_link_created'] } },
    });
    let left = PEOPLE_LINK_LIMITS.perAgency.count - made;
    while (left > 0) {
      const { visitor } = await agencyUser();
      for (let i = 0; i < Math.min(left, PEOPLE_LINK_LIMITS.perUser.count); i++)
        expect((await invite(visitor, `fill-${n}-${i}@victim.example`)).status).toBe(200);
      left -= PEOPLE_LINK_LIMITS.perUser.count;
    }
    const { visitor, userId } = await agencyUser();
    const refused = await invite(visitor, `agency-over-${n}@victim.example`);
    expect(refused.status).toBe(429);
    expect(refused.body).toContain(html("Your agency's users have made"));
    const entry = await prismaOf(app).auditEntry.findFirstOrThrow({
      where: { action: 'people_link_refused', actorUserId: userId },
    });
    expect(entry.detail).toMatchObject({ limit: 'agency' });

    // The operator is not limited: callctl stays the way to reach people.
    const { id } = await createUser(app.storage, {
      now: app.now(),
      accountId: clientId,
      email: `by-operator-${n}@victim.example`,
      actor: { kind: 'operator' },
    });
    expect(
      (await newSignInLink(app.storage, { now: app.now(), userId: id, actor: { kind: 'operator' } })).token,
    ).toBeTruthy();
  });
});
