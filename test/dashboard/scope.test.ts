// The dashboard lives in its own scope: /api/v1 answers carry none of its headers or cookies, its routes are not in
// the OpenAPI document, its errors are HTML pages with the security headers, and every page has a strict CSP and
// no inline script.
import { beforeAll, describe, expect, it } from 'vitest';
import { createAgency } from '../../src/admin/accounts.js';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createUserWithPassword, DASHBOARD_ENV, HOST, Visitor } from './helpers.js';

let app: App;
const DASHBOARD_HEADERS = [
  'content-security-policy',
  'strict-transport-security',
  'x-frame-options',
  'referrer-policy',
  'x-content-type-options',
  'cross-origin-opener-policy',
  'set-cookie',
];

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV }));
  const { id } = await createAgency(app.storage, { name: 'Acme' });
  await createUserWithPassword(app.storage, id, 'ada@example.com');
});

const https = { host: HOST, 'x-forwarded-proto': 'https' };

describe('the dashboard scope', () => {
  it('adds none of its headers, cookies or hooks to /api/v1 answers, even with a session cookie', async () => {
    const visitor = new Visitor(app);
    await visitor.signIn('ada@example.com');
    expect(visitor.cookie).not.toBeNull();
    for (const res of [
      await app.inject({
        method: 'POST',
        url: '/api/v1/calls/trigger',
        headers: { ...https, cookie: `__Host-oct_session=${visitor.cookie}` },
        payload: {},
      }),
      await app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers: https }),
      await app.inject({ method: 'GET', url: '/api/v1/nope', headers: https }),
    ]) {
      for (const header of DASHBOARD_HEADERS)
        expect(res.headers[header], `${res.statusCode} ${header}`).toBeUndefined();
      expect(res.headers['content-type']).toMatch(/^application\/json/);
    }
  });

  it("adds none of the dashboard plugins' hooks to the API's routes", () => {
    const blocks = app.printRoutes({ commonPrefix: false, includeHooks: true, method: 'POST' }).split(/(?=[├└]── )/);
    const api = blocks.filter((block) => block.includes('/api/v1'));
    expect(api.length).toBeGreaterThan(0);
    expect(blocks.find((block) => block.includes('/dashboard/sign-in'))).toMatch(/handleSession/);
    for (const block of api) expect(block).not.toMatch(/helmet|[Cc]ookie|[Ss]ession|csrf|requireUser/);
  });

  it('keeps the API error envelope for /api/v1 (401, unknown route 404)', async () => {
    const refused = await app.inject({ method: 'POST', url: '/api/v1/calls/trigger', headers: https, payload: {} });
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual({ success: false, error: 'Invalid API key' });
    expect((await app.inject({ url: '/api/v1/nope', headers: https })).json()).toEqual({
      success: false,
      error: 'Route GET /api/v1/nope not found',
    });
  });

  it('leaves the dashboard out of the OpenAPI document', async () => {
    const doc = (await app.inject({ url: '/api/v1/openapi.json', headers: https })).json<{
      paths: Record<string, unknown>;
    }>();
    expect(Object.keys(doc.paths).filter((p) => !p.startsWith('/api/v1'))).toEqual([]);
  });

  it('redirects / to /dashboard, and /dashboard to the sign-in page when signed out', async () => {
    const root = await app.inject({ url: '/', headers: https });
    expect(root.statusCode).toBe(302);
    expect(root.headers.location).toBe('/dashboard');
    const home = await new Visitor(app).get('/dashboard');
    expect(home.status).toBe(303);
    expect(home.location).toBe('/dashboard/sign-in?next=%2Fdashboard');
  });

  it('answers an unknown dashboard path with an HTML 404 page carrying the security headers', async () => {
    const res = await new Visitor(app).get('/dashboard/no-such-page');
    expect(res.status).toBe(404);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('There is no such page.');
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  });

  it('stores no session for a visitor shown a page without a form (a 404, an unusable link), nor for the sign-in form', async () => {
    const sessions = () => prismaOf(app).session.count();
    const before = await sessions();
    for (const path of [
      '/dashboard/no-such-page',
      `/dashboard/set-password/${'x'.repeat(43)}`,
      '/dashboard/assets/style.css',
    ]) {
      const res = await new Visitor(app).get(path);
      expect(res.headers['set-cookie'], path).toBeUndefined();
    }
    expect(await sessions()).toBe(before);
    await new Visitor(app).get('/dashboard/sign-in');
    expect(await sessions()).toBe(before);
  });

  it('serves the stylesheet under /dashboard/assets/', async () => {
    const res = await new Visitor(app).get('/dashboard/assets/style.css');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/css/);
  });

  it('sends a strict CSP, HSTS, nosniff, same-origin Referrer-Policy and no-store on every page, and no inline script', async () => {
    const visitor = new Visitor(app);
    const pages = [await visitor.get('/dashboard/sign-in'), await visitor.get('/dashboard/set-password/unknown')];
    await visitor.signIn('ada@example.com');
    for (const path of [
      '/dashboard',
      '/dashboard/account',
      '/dashboard/audit-log',
      '/dashboard/confirm-password',
      '/dashboard/nope',
    ])
      pages.push(await visitor.get(path));
    for (const page of pages) {
      const csp = String(page.headers['content-security-policy']);
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe-inline');
      expect(page.headers['strict-transport-security']).toMatch(/max-age=\d{8}/);
      expect(page.headers['x-content-type-options']).toBe('nosniff');
      expect(page.headers['referrer-policy']).toBe('same-origin');
      expect(page.headers['cache-control']).toBe('no-store');
      // No inline script or handler: only our own files (the Overview's live refresh).
      const outside = page.body.replace(/<script src="\/dashboard\/assets\/[\w.-]+\.js" defer><\/script>/g, '');
      expect(outside).not.toMatch(/<script|\son[a-z]+=|javascript:/i);
    }
  });

  it('sets the session and CSRF cookies __Host- prefixed, Secure, HttpOnly, SameSite=Lax, Path=/', async () => {
    const visitor = new Visitor(app);
    const form = await visitor.get('/dashboard/sign-in');
    const signedIn = await visitor.signIn('ada@example.com');
    const cookies = [
      String(form.headers['set-cookie']),
      ([] as string[])
        .concat(signedIn.headers['set-cookie'] as string | string[])
        .find((c) => c.startsWith('__Host-oct_session='))!,
    ];
    expect(cookies[0]).toMatch(/^__Host-oct_csrf=[A-Za-z0-9_-]+;/);
    expect(cookies[1]).toMatch(/^__Host-oct_session=[A-Za-z0-9_-]{43};/);
    for (const cookie of cookies) {
      expect(cookie).toContain('Path=/;');
      expect(cookie).toContain('Secure');
      expect(cookie).toContain('HttpOnly');
      expect(cookie).toContain('SameSite=Lax');
      expect(cookie).not.toMatch(/Domain=/i);
    }
  });
});
