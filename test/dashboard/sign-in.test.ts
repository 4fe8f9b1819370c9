// Sign-in: a new session id at sign-in (fixation), one message for unknown email and wrong password (and a real
// scrypt verification for both), throttling per IP and per email, audit entries with the IP, sign-out server-side.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgency } from '../../src/admin/accounts.js';
import type { App } from '../../src/app.js';
import { SIGN_IN_LIMITS } from '../../plugins/dashboard/sign-in-limiter.js';
import { SIGN_IN_REFUSED } from '../../src/routes/dashboard/sign-in.js';
import { sessionDigest } from '../../plugins/dashboard/session.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createUserWithPassword, DASHBOARD_ENV, PASSWORD, Visitor } from './helpers.js';
import { insertUserRow } from '../helpers/seed.js';

let app: App;
let agencyId: string;

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV }));
  ({ id: agencyId } = await createAgency(app.storage, { name: 'Acme' }));
  await createUserWithPassword(app.storage, agencyId, 'ada@example.com');
  await createUserWithPassword(app.storage, agencyId, 'slow@example.com', { realCost: true });
});

const audit = (action: string) =>
  prismaOf(app).auditEntry.findMany({ where: { action }, orderBy: { createdAt: 'asc' } });

describe('sign in', () => {
  it('gives a new session id at sign-in; an id planted before it is worth nothing', async () => {
    const visitor = new Visitor(app);
    // A visitor has no session before signing in (test/dashboard/anonymous-sessions.test.ts): an attacker can only
    // plant an id of their choosing.
    const before = randomBytes(32).toString('base64url');
    visitor.cookie = before;
    const res = await visitor.signIn('ada@example.com');
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard');
    expect(visitor.cookie).not.toBe(before);
    expect((await visitor.get('/dashboard')).status).toBe(200);
    // An attacker who planted `before` is not signed in with it.
    const planted = new Visitor(app);
    planted.cookie = before;
    expect((await planted.get('/dashboard')).status).toBe(303);
  });

  it('stores only a digest of the session id', async () => {
    const visitor = new Visitor(app);
    await visitor.signIn('ada@example.com');
    const rows = await prismaOf(app).session.findMany({ select: { digest: true, data: true } });
    expect(rows.some((r) => Buffer.from(r.digest).equals(sessionDigest(visitor.cookie!)))).toBe(true);
    expect(JSON.stringify(rows)).not.toContain(visitor.cookie!);
  });

  it('matches emails case-insensitively and goes back to the page asked for', async () => {
    const visitor = new Visitor(app);
    const res = await visitor.submit('/dashboard/sign-in?next=%2Fdashboard%2Faccount', '/dashboard/sign-in', {
      email: '  ADA@Example.COM ',
      password: PASSWORD,
      next: '/dashboard/account',
    });
    expect(res.location).toBe('/dashboard/account');
    const offsite = await new Visitor(app).submit('/dashboard/sign-in', '/dashboard/sign-in', {
      email: 'ada@example.com',
      password: PASSWORD,
      next: '//evil.example/x',
    });
    expect(offsite.location).toBe('/dashboard');
  });

  it('says the same for an unknown email and a wrong password, and takes a scrypt verification for both', async () => {
    const visitor = new Visitor(app);
    // Warm the dummy hash (made once per process).
    await visitor.submit('/dashboard/sign-in', '/dashboard/sign-in', { email: 'warm@example.com', password: 'x' });
    const time = async (email: string) => {
      const v = new Visitor(app);
      v.ip = `198.51.100.${Math.floor(Math.random() * 200)}`;
      await v.get('/dashboard/sign-in');
      const started = performance.now();
      const res = await v.request('POST', '/dashboard/sign-in', {
        _csrf: v.lastCsrf!,
        email,
        password: 'wrong password 1',
      });
      return { res, ms: performance.now() - started };
    };
    const wrong = await time('slow@example.com');
    const unknown = await time('nobody@example.com');
    expect(wrong.res.status).toBe(401);
    expect(unknown.res.status).toBe(401);
    const message = (body: string) => /<p class="notice error" role="alert"[^>]*>([^<]*)<\/p>/.exec(body)?.[1];
    expect(message(wrong.res.body)).toBe(SIGN_IN_REFUSED.replace(/'/g, '&#39;'));
    expect(message(unknown.res.body)).toBe(message(wrong.res.body));
    // Without the dummy hash an unknown email answered in a few ms against hundreds for a wrong password. Loose
    // bound: the machine is busy; it only tells "a hash ran" from "no hash ran".
    expect(unknown.ms).toBeGreaterThan(wrong.ms * 0.25);
  });

  it('audits a wrong password and a sign-in on the account, with the IP; an unknown email writes nothing', async () => {
    const visitor = new Visitor(app);
    visitor.ip = '192.0.2.44';
    const before = await prismaOf(app).auditEntry.count();
    await visitor.submit('/dashboard/sign-in', '/dashboard/sign-in', {
      email: 'ada@example.com',
      password: 'not the password',
    });
    await visitor.submit('/dashboard/sign-in', '/dashboard/sign-in', {
      email: 'ghost@example.com',
      password: 'not the password',
    });
    await visitor.signIn('ada@example.com');
    expect(await prismaOf(app).auditEntry.count()).toBe(before + 2);
    const [failed] = (await audit('sign_in_failed')).filter((e) => e.ip === '192.0.2.44');
    const [success] = (await audit('sign_in')).filter((e) => e.ip === '192.0.2.44');
    expect(failed).toMatchObject({ accountId: agencyId, agencyId, actorKind: 'user' });
    expect(success).toMatchObject({ accountId: agencyId, actorKind: 'user' });
  });

  it('refuses a user who has not set a password yet with the same message', async () => {
    const { id } = await createAgency(app.storage, { name: 'Other' });
    await insertUserRow(prismaOf(app), { accountId: id, agencyId: id, email: 'nopass@example.com' });
    const res = await new Visitor(app).submit('/dashboard/sign-in', '/dashboard/sign-in', {
      email: 'nopass@example.com',
      password: 'anything at all',
    });
    expect(res.status).toBe(401);
    expect(res.body).toContain('The email or password is not right.');
  });

  it('signs out server-side: the old cookie is worth nothing afterwards', async () => {
    const visitor = new Visitor(app);
    await visitor.signIn('ada@example.com');
    const cookie = visitor.cookie!;
    const out = await visitor.submit('/dashboard/account', '/dashboard/sign-out');
    expect(out.status).toBe(303);
    expect(out.location).toBe('/dashboard/sign-in');
    expect(visitor.cookie).toBeNull();
    const replay = new Visitor(app);
    replay.cookie = cookie;
    expect((await replay.get('/dashboard/account')).status).toBe(303);
    expect(await prismaOf(app).session.count({ where: { digest: new Uint8Array(sessionDigest(cookie)) } })).toBe(0);
    expect((await audit('sign_out')).length).toBeGreaterThan(0);
  });
});

describe('sign-in throttling', () => {
  it(`refuses attempt ${SIGN_IN_LIMITS.perEmail + 1} for one email within the window, from any IP, with 429 and Retry-After`, async () => {
    const { id } = await createAgency(app.storage, { name: 'Target' });
    await createUserWithPassword(app.storage, id, 'target@example.com');
    for (let i = 0; i < SIGN_IN_LIMITS.perEmail; i++) {
      const v = new Visitor(app);
      v.ip = `10.1.0.${i + 1}`;
      expect(
        (
          await v.submit('/dashboard/sign-in', '/dashboard/sign-in', {
            email: 'target@example.com',
            password: `guess ${i}`,
          })
        ).status,
      ).toBe(401);
    }
    const v = new Visitor(app);
    v.ip = '10.1.0.200';
    // Even the right password: a throttled caller learns nothing about it.
    const refused = await v.submit('/dashboard/sign-in', '/dashboard/sign-in', {
      email: 'Target@Example.com',
      password: PASSWORD,
    });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.body).toContain('Too many sign-in attempts');
    // Another email from that IP is not affected.
    expect((await v.signIn('ada@example.com')).status).toBe(303);
  });

  it(`refuses attempt ${SIGN_IN_LIMITS.perIp + 1} from one IP within the window, whatever the emails`, async () => {
    const { id } = await createAgency(app.storage, { name: 'Spray' });
    const emails = await Promise.all(
      [0, 1, 2, 3].map(async (i) => {
        await createUserWithPassword(app.storage, id, `spray${i}@example.com`);
        return `spray${i}@example.com`;
      }),
    );
    const v = new Visitor(app);
    v.ip = '10.2.0.1';
    for (let i = 0; i < SIGN_IN_LIMITS.perIp; i++) {
      const res = await v.submit('/dashboard/sign-in', '/dashboard/sign-in', {
        email: emails[i % emails.length]!,
        password: `guess ${i}`,
      });
      expect(res.status).toBe(401);
    }
    expect(
      (await v.submit('/dashboard/sign-in', '/dashboard/sign-in', { email: 'spray0@example.com', password: PASSWORD }))
        .status,
    ).toBe(429);
    const elsewhere = new Visitor(app);
    elsewhere.ip = '10.2.0.2';
    expect((await elsewhere.signIn('spray1@example.com')).status).toBe(303);
  });
});
