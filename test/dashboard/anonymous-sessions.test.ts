// Visitors who are not signed in store nothing: the sign-in form's CSRF secret is in a cookie, and a session row is
// written only when someone signs in (issue 21, point 6).
import { performance } from 'node:perf_hooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgency } from '../../src/admin/accounts.js';
import type { App } from '../../src/app.js';
import { CSRF_COOKIE } from '../../plugins/dashboard/index.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createUserWithPassword, DASHBOARD_ENV, HOST, PASSWORD, Visitor } from './helpers.js';

const VISITS = 10_000;
const BATCH = 50;

let app: App;

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV }));
  const { id } = await createAgency(app.storage, { name: 'Acme' });
  await createUserWithPassword(app.storage, id, 'ada@example.com');
});

const sessions = () => prismaOf(app).session.count();

describe('anonymous visits', () => {
  it(
    `${VISITS} cookie-less GETs of the sign-in form leave the sessions table unchanged`,
    { timeout: 30 * 60_000 },
    async () => {
      const before = await sessions();
      const started = performance.now();
      let withForm = 0;
      for (let done = 0; done < VISITS; done += BATCH) {
        const answers = await Promise.all(
          Array.from({ length: Math.min(BATCH, VISITS - done) }, () =>
            app.inject({
              method: 'GET',
              url: '/dashboard/sign-in',
              headers: { host: HOST, 'x-forwarded-proto': 'https' },
            }),
          ),
        );
        for (const res of answers) {
          expect(res.statusCode).toBe(200);
          expect(String(res.headers['set-cookie'])).not.toContain('__Host-oct_session=');
          if (res.body.includes('name="_csrf" value="')) withForm++;
        }
      }
      const seconds = (performance.now() - started) / 1000;
      expect(withForm).toBe(VISITS);
      expect(await sessions()).toBe(before);
      console.info(
        `${VISITS} anonymous GET /dashboard/sign-in in ${seconds.toFixed(1)} s; sessions ${before} -> ${await sessions()}`,
      );
    },
  );

  it('a sign-in still works end to end: the form and its token store nothing, the sign-in stores one session', async () => {
    const before = await sessions();
    const visitor = new Visitor(app);
    const form = await visitor.get('/dashboard/sign-in');
    expect(form.status).toBe(200);
    expect(visitor.cookie).toBeNull();
    expect(visitor.csrfCookie).not.toBeNull();
    expect(await sessions()).toBe(before);
    const res = await visitor.request('POST', '/dashboard/sign-in', {
      _csrf: visitor.lastCsrf!,
      email: 'ada@example.com',
      password: PASSWORD,
    });
    expect(res.status).toBe(303);
    expect(visitor.cookie).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await sessions()).toBe(before + 1);
    expect((await visitor.get('/dashboard')).status).toBe(200);
    // Signed-in forms take the same token.
    expect((await visitor.submit('/dashboard/account', '/dashboard/sign-out')).status).toBe(303);
    expect(await sessions()).toBe(before);
  });

  it("refuses a token with no CSRF cookie, or with another visitor's", async () => {
    const victim = new Visitor(app);
    const attacker = new Visitor(app);
    await victim.get('/dashboard/sign-in');
    await attacker.get('/dashboard/sign-in');
    const form = { _csrf: attacker.lastCsrf!, email: 'ada@example.com', password: PASSWORD };
    expect((await victim.request('POST', '/dashboard/sign-in', form)).status).toBe(403);
    victim.csrfCookie = null;
    expect((await victim.request('POST', '/dashboard/sign-in', form)).status).toBe(403);
    expect(victim.cookie).toBeNull();
    // The attacker's own pair works: the token is bound to the cookie, not to a session.
    expect((await attacker.request('POST', '/dashboard/sign-in', form)).status).toBe(303);
    expect(CSRF_COOKIE).toMatch(/^__Host-/);
  });
});
