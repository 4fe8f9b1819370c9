// State changes only by POST from our own pages: a POST without the CSRF token, with another session's token, from a
// foreign Origin, or with neither Origin nor Referer is refused with 403 and changes nothing.
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgency } from '../../src/admin/accounts.js';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createUserWithPassword, DASHBOARD_ENV, ORIGIN, Visitor } from './helpers.js';

let app: App;
let n = 0;

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV }));
});

async function signedIn() {
  const { id } = await createAgency(app.storage, { name: `Acme ${n}` });
  const email = `csrf${n++}@example.com`;
  await createUserWithPassword(app.storage, id, email);
  const visitor = new Visitor(app);
  visitor.ip = `10.3.0.${n}`;
  await visitor.signIn(email);
  return visitor;
}

const sessionsEnded = () => prismaOf(app).auditEntry.count({ where: { action: 'sessions_ended' } });

describe('CSRF and Origin checks', () => {
  it('refuse a POST without a CSRF token', async () => {
    const visitor = await signedIn();
    const res = await visitor.request('POST', '/dashboard/account/sign-out-everywhere', {});
    expect(res.status).toBe(403);
    expect(res.body).toContain('This form has expired.');
    expect(await sessionsEnded()).toBe(0);
  });

  it("refuse another session's token", async () => {
    const victim = await signedIn();
    const attacker = await signedIn();
    await attacker.get('/dashboard/account');
    const res = await victim.request('POST', '/dashboard/account/sign-out-everywhere', { _csrf: attacker.lastCsrf! });
    expect(res.status).toBe(403);
    expect(await sessionsEnded()).toBe(0);
  });

  it('refuse a foreign Origin even with a valid token', async () => {
    const visitor = await signedIn();
    await visitor.get('/dashboard/account');
    const res = await visitor.request(
      'POST',
      '/dashboard/account/sign-out-everywhere',
      { _csrf: visitor.lastCsrf! },
      { origin: 'https://evil.example' },
    );
    expect(res.status).toBe(403);
    expect(res.body).toContain('This form was sent from another site.');
    const nullOrigin = await visitor.request(
      'POST',
      '/dashboard/account/sign-out-everywhere',
      { _csrf: visitor.lastCsrf! },
      { origin: 'null' },
    );
    expect(nullOrigin.status).toBe(403);
    expect(await sessionsEnded()).toBe(0);
  });

  it('refuse a POST with neither Origin nor Referer; accept a same-site Referer when Origin is missing', async () => {
    const visitor = await signedIn();
    await visitor.get('/dashboard/account');
    const headers = {
      host: 'dash.example.test',
      'x-forwarded-proto': 'https',
      cookie: visitor.cookieHeader(),
      'content-type': 'application/x-www-form-urlencoded',
    };
    const payload = new URLSearchParams({ _csrf: visitor.lastCsrf! }).toString();
    const bare = await app.inject({ method: 'POST', url: '/dashboard/account/sign-out-everywhere', headers, payload });
    expect(bare.statusCode).toBe(403);
    const withReferer = await app.inject({
      method: 'POST',
      url: '/dashboard/account/sign-out-everywhere',
      headers: { ...headers, referer: `${ORIGIN}/dashboard/account` },
      payload,
    });
    expect(withReferer.statusCode).toBe(303);
    expect(await sessionsEnded()).toBe(1);
  });

  it('refuse the sign-in form itself without a token (login CSRF)', async () => {
    const visitor = new Visitor(app);
    const res = await visitor.request('POST', '/dashboard/sign-in', {
      email: 'csrf0@example.com',
      password: 'correct horse battery staple',
    });
    expect(res.status).toBe(403);
    expect((await visitor.get('/dashboard')).status).toBe(303);
  });

  it('have no state-changing GET: every dashboard route but GET/HEAD is POST', () => {
    const routes = app.printRoutes({ commonPrefix: false });
    expect(routes).not.toMatch(/\/dashboard\S* \((?:[^)]*)(PUT|DELETE|PATCH)/);
  });
});
