// A user's own time zone (issue 47): chosen on the Account page (the browser's offered while none is; audited; a zone
// the server does not know refused next to the field), every time of the pages in it with its abbreviation, UTC one
// click away in the header, and the Calls list's dates and the Overview's "today" links read in it across a change
// of the clocks. A user without a zone keeps UTC, as every other test of the dashboard expects.
import { beforeAll, describe, expect, it } from 'vitest';
import { setOwnTimeZone } from '../../src/admin/user-time-zone.js';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createTenant, type Tenant } from '../helpers/fixtures.js';
import { insertCalls } from '../helpers/seed.js';
import { createUserWithPassword, DASHBOARD_ENV, html, Visitor } from './helpers.js';

let app: App;
let tenant: Tenant;
const now = new Date('2054-11-23T09:00:00Z');
/** Around the spring change of Europe/Paris (2054-03-29, 02:00 CET -> 03:00 CEST): the local day has 23 hours. */
const SPRING = {
  before: '2054-03-28T22:30:00Z', // 23:30 CET on the 28th
  first: '2054-03-28T23:30:00Z', // 00:30 CET on the 29th
  last: '2054-03-29T21:30:00Z', // 23:30 CEST on the 29th
  after: '2054-03-29T22:30:00Z', // 00:30 CEST on the 30th
};
const callAt = {} as Record<keyof typeof SPRING, string>;

let n = 0;
async function signedIn(): Promise<{ visitor: Visitor; userId: string }> {
  const email = `tz${n++}@example.com`;
  const userId = await createUserWithPassword(app.storage, tenant.accountId, email);
  const visitor = new Visitor(app);
  visitor.ip = `10.8.0.${n}`;
  expect((await visitor.signIn(email)).status).toBe(303);
  return { visitor, userId };
}

async function choose(visitor: Visitor, timezone: string) {
  return visitor.submit('/dashboard/account', '/dashboard/account/time-zone', { timezone });
}

const CALL_LINK = /href="\/dashboard\/calls\/([0-9a-f-]{36})"/g;
const listed = (body: string) => [...body.matchAll(CALL_LINK)].map((m) => m[1]!);

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV, clock: () => now }));
  tenant = await createTenant(app.storage, { name: 'Zones' });
  for (const [name, createdAt] of Object.entries(SPRING) as [keyof typeof SPRING, string][]) {
    const [id] = await insertCalls(prismaOf(app), {
      accountId: tenant.accountId,
      agentId: tenant.agentId,
      createdAt: new Date(createdAt),
      count: 1,
    });
    callAt[name] = id!;
  }
});

describe('the Account page', () => {
  it("offers the browser's zone to a user who has none (a script), and shows UTC until one is saved", async () => {
    const { visitor } = await signedIn();
    const page = await visitor.get('/dashboard/account');
    expect(page.status).toBe(200);
    expect(page.body).toMatch(/<select id="f-timezone" name="timezone" data-browser-zone/);
    expect(page.body).toContain('<script src="/dashboard/assets/zone-default.js" defer></script>');
    expect(page.body).toMatch(/<option value="UTC"[^>]* selected>/);
    // Without the script the form still works: UTC is chosen, and the header says where times are set.
    expect(page.body).toContain('<a class="times" href="/dashboard/account#time-zone">Times in UTC</a>');
    expect(page.body).toMatch(/<dt>Signed in<\/dt><dd>2054-11-23 09:00:00 UTC<\/dd>/);
  });

  it('saves a zone in any spelling by its canonical name, audited; the page then shows times in it', async () => {
    const { visitor, userId } = await signedIn();
    const saved = await choose(visitor, '  asia/calcutta ');
    expect(saved.status).toBe(303);
    expect(saved.location).toBe('/dashboard/account');
    const user = await prismaOf(app).user.findUniqueOrThrow({ where: { id: userId } });
    expect(user.timezone).toBe('Asia/Kolkata');
    const entries = await prismaOf(app).auditEntry.findMany({
      where: { actorUserId: userId, action: 'time_zone_set' },
    });
    expect(entries.map((e) => e.detail)).toEqual([{ time_zone: 'Asia/Kolkata', before: null }]);

    const page = await visitor.get('/dashboard/account');
    expect(page.body).toContain('Times are shown in Asia/Kolkata now.');
    expect(page.body).toMatch(/<option value="Asia\/Kolkata"[^>]* selected>/);
    expect(page.body).not.toContain('data-browser-zone');
    expect(page.body).not.toContain('zone-default.js');
    expect(page.body).toMatch(/<dt>Signed in<\/dt><dd>2054-11-23 14:30:00 GMT\+5:30<\/dd>/);
    expect(page.body).toContain('Times in Asia/Kolkata');

    // The same zone again changes nothing and is not audited twice.
    expect((await choose(visitor, 'Asia/Kolkata')).status).toBe(303);
    expect(await prismaOf(app).auditEntry.count({ where: { actorUserId: userId, action: 'time_zone_set' } })).toBe(1);
  });

  it('refuses a zone the server does not know, next to the field, and stores nothing', async () => {
    const { visitor, userId } = await signedIn();
    for (const timezone of ['Mars/Olympus', '+05:00', 'GMT+5', '', 'Europe/'.repeat(20)]) {
      const res = await choose(visitor, timezone);
      expect(res.status, timezone).toBe(400);
      expect(res.body).toMatch(
        /<select id="f-timezone" name="timezone" aria-describedby="f-timezone-error f-timezone-hint" aria-invalid="true">/,
      );
      expect(res.body).toMatch(/<p class="field-error" id="f-timezone-error">[^<]+<\/p>/);
    }
    expect((await choose(visitor, 'Mars/Olympus')).body).toContain(
      html('Choose a time zone from the list (an IANA name such as Europe/Paris).'),
    );
    // What was sent is shown as it was, escaped.
    expect((await choose(visitor, '<b>x</b>')).body).toContain(`<option selected>${html('<b>x</b>')}</option>`);
    const user = await prismaOf(app).user.findUniqueOrThrow({ where: { id: userId } });
    expect(user.timezone).toBeNull();
    expect(await prismaOf(app).auditEntry.count({ where: { actorUserId: userId, action: 'time_zone_set' } })).toBe(0);
  });
});

describe('who may set a zone', () => {
  it('refuses a form without its CSRF token, and an actor other than the user (a zone is their own)', async () => {
    const { visitor, userId } = await signedIn();
    expect((await visitor.request('POST', '/dashboard/account/time-zone', { timezone: 'Europe/Paris' })).status).toBe(
      403,
    );
    expect((await visitor.request('POST', '/dashboard/account/times', { utc: '1' })).status).toBe(403);
    await expect(
      setOwnTimeZone(app.storage, { zone: 'Europe/Paris', actor: { kind: 'operator' }, now }),
    ).rejects.toThrow('Only a dashboard user has a time zone of their own.');
    expect((await prismaOf(app).user.findUniqueOrThrow({ where: { id: userId } })).timezone).toBeNull();
  });
});

describe("the pages' times", () => {
  it('writes every time in the zone with its abbreviation; the header shows UTC one click away and back', async () => {
    const { visitor } = await signedIn();
    expect((await choose(visitor, 'Europe/Paris')).status).toBe(303);
    const list = await visitor.get('/dashboard/calls');
    expect(list.body).toContain('2054-03-28 23:30:00 CET');
    expect(list.body).toContain('2054-03-29 23:30:00 CEST');
    expect(list.body).not.toContain('2054-03-29 21:30:00 UTC');
    expect(list.body).toContain('Dates are in Europe/Paris');
    const detail = await visitor.get(`/dashboard/calls/${callAt.last}`);
    expect(detail.body).toContain('2054-03-29 23:30:00 CEST');

    const toUtc = await visitor.submit('/dashboard/calls?status=completed', '/dashboard/account/times');
    expect(toUtc.status).toBe(303);
    expect(toUtc.location).toBe('/dashboard/calls?status=completed');
    const inUtc = await visitor.get('/dashboard/calls');
    expect(inUtc.body).toContain('2054-03-29 21:30:00 UTC');
    expect(inUtc.body).not.toContain('CEST');
    expect(inUtc.body).toContain('Dates are in UTC');
    expect(inUtc.body).toMatch(/Times in UTC · <button type="submit" class="link">Show in Europe\/Paris<\/button>/);

    expect((await visitor.submit('/dashboard/calls', '/dashboard/account/times')).status).toBe(303);
    const back = await visitor.get('/dashboard/calls');
    expect(back.body).toContain('2054-03-29 23:30:00 CEST');
    expect(back.body).toMatch(/Times in Europe\/Paris · <button type="submit" class="link">Show in UTC<\/button>/);
  });

  it('goes back only to a dashboard page', async () => {
    const { visitor } = await signedIn();
    await choose(visitor, 'Europe/Paris');
    await visitor.get('/dashboard/account');
    for (const back of ['https://evil.example/', '//evil.example/dashboard', '/api/v1/calls'])
      expect(
        (await visitor.request('POST', '/dashboard/account/times', { _csrf: visitor.lastCsrf!, utc: '1', back }))
          .location,
      ).toBe('/dashboard');
  });

  it("reads the Calls list's dates in the zone: the local day of 23 hours when the clocks go forward", async () => {
    const { visitor } = await signedIn();
    await choose(visitor, 'Europe/Paris');
    const day = await visitor.get('/dashboard/calls?from=2054-03-29&to=2054-03-29');
    expect(day.status).toBe(200);
    expect(listed(day.body).sort()).toEqual([callAt.first, callAt.last].sort());
    const minute = await visitor.get('/dashboard/calls?from=2054-03-29T23:30&to=2054-03-29T23:30');
    expect(listed(minute.body)).toEqual([callAt.last]);
    const wrong = await visitor.get('/dashboard/calls?from=2054-02-30');
    expect(wrong.status).toBe(400);
    expect(wrong.body).toContain(
      html('"2054-02-30" is not a date: write it as YYYY-MM-DD (or YYYY-MM-DDTHH:MM), in Europe/Paris.'),
    );

    // A user without a zone reads the same day in UTC, as before.
    const { visitor: utc } = await signedIn();
    const utcDay = await utc.get('/dashboard/calls?from=2054-03-29&to=2054-03-29');
    expect(listed(utcDay.body).sort()).toEqual([callAt.last, callAt.after].sort());
  });

  it("links the Overview's today (the viewer's local day) to that day in the zone", async () => {
    const { visitor } = await signedIn();
    await choose(visitor, 'Europe/Paris');
    const overview = await visitor.get('/dashboard');
    expect(overview.body).toContain('As of 2054-11-23 10:00:00 CET');
    expect(overview.body).toContain(
      '"Today" is 2054-11-23 in Europe/Paris: calls that ended since 2054-11-23 00:00:00 CET.',
    );
    expect(overview.body).toContain(html('/dashboard/calls?status=completed&from=2054-11-23&to=2054-11-23'));
    const { visitor: utc } = await signedIn();
    expect((await utc.get('/dashboard')).body).toContain(
      html('/dashboard/calls?status=completed&from=2054-11-23&to=2054-11-23'),
    );
  });
});
