// The ways into the dashboard: `/` and `/dashboard/` redirect to `/dashboard` with the dashboard's security headers
// (issue 21, point 8).
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { buildTestApp } from '../helpers/app.js';
import { DASHBOARD_ENV, HOST } from './helpers.js';

let app: App;

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV }));
});

const get = (url: string, method: 'GET' | 'HEAD' = 'GET') =>
  app.inject({ method, url, headers: { host: HOST, 'x-forwarded-proto': 'https' } });

describe('the front door', () => {
  for (const url of ['/', '/dashboard/', '/dashboard/?from=bookmark']) {
    it(`${url} redirects to /dashboard with HSTS, CSP, frame, sniffing and referrer headers`, async () => {
      for (const method of ['GET', 'HEAD'] as const) {
        const res = await get(url, method);
        expect(res.statusCode, method).toBe(302);
        expect(res.headers.location).toBe('/dashboard');
        expect(res.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
        expect(String(res.headers['content-security-policy'])).toContain("frame-ancestors 'none'");
        expect(res.headers['x-frame-options']).toBe('DENY');
        expect(res.headers['x-content-type-options']).toBe('nosniff');
        expect(res.headers['referrer-policy']).toBe('same-origin');
        expect(res.headers['set-cookie']).toBeUndefined();
      }
    });
  }

  it('leaves the API without them', async () => {
    const res = await get('/api/v1/nope');
    expect(res.statusCode).toBe(404);
    expect(res.headers['strict-transport-security']).toBeUndefined();
    expect(res.headers['content-security-policy']).toBeUndefined();
  });
});
