// The Calling rules page: an agency's users switch the rules on, set the cap and consent, add and remove own hours
// (audited, with who, from where, before and after); a client's users see the agency's settings in words and add
// narrower hours of their own, and cannot change the agency's (404); another agency never sees or changes them; hostile
// input is a 400 with the problem next to its field and nothing changed; CSRF. Tenancy of every route is also in
// tenancy.test.ts.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { putCallingHours } from '../../src/admin/calling-rules.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { createUserWithPassword, DASHBOARD_ENV, html, Visitor } from './helpers.js';

let app: App;
const tenants = {} as Record<'A' | 'A1' | 'B', Tenant>;
const visitors = {} as Record<'A' | 'A1' | 'B', Visitor>;

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: DASHBOARD_ENV }));
  tenants.A = await createTenant(app.storage);
  tenants.A1 = await createClientTenant(app.storage, tenants.A.accountId, { name: 'Client One' });
  tenants.B = await createTenant(app.storage);
  for (const [i, name] of (['A', 'A1', 'B'] as const).entries()) {
    await createUserWithPassword(app.storage, tenants[name].accountId, `${name.toLowerCase()}@rules.example`);
    visitors[name] = new Visitor(app);
    visitors[name].ip = `10.8.0.${i + 1}`;
    expect((await visitors[name].signIn(`${name.toLowerCase()}@rules.example`)).status).toBe(303);
  }
});

const OWN = '/dashboard/calling-rules';
const clientPage = () => `/dashboard/clients/${tenants.A1.accountId}/calling-rules`;
const stored = async (tenant: Tenant) =>
  (await prismaOf(app).account.findUniqueOrThrow({ where: { id: tenant.accountId } })).callingRules;
const auditOf = (tenant: Tenant) =>
  prismaOf(app).auditEntry.findMany({
    where: { accountId: tenant.accountId, action: { startsWith: 'calling_' } },
    orderBy: { createdAt: 'asc' },
    select: { action: true, actorKind: true, ip: true, detail: true },
  });
const notice = (body: string) => /<p class="notice ok" role="status">([^<]*)<\/p>/.exec(body)?.[1];
const fieldError = (body: string, field: string) =>
  new RegExp(`<p class="field-error" id="f-${field}-error">([^<]*)</p>`).exec(body)?.[1];

const SETTINGS = {
  enabled: 'on',
  rule_sets: 'us',
  call_kinds: 'automated',
  cap_24h: '3',
  cap_7d: '10',
  cap_scope: 'account',
  consent_required: 'on',
};

describe('an agency', () => {
  it('sees the rules off by default, what on means, the rules in force with citations, and no legal advice', async () => {
    const page = await visitors.A.get(OWN);
    expect(page.status).toBe(200);
    expect(page.body).toContain('<strong>Off</strong>: calls are dialled as before');
    expect(page.body).toMatch(/<input type="radio" name="enabled" value="off" checked>/);
    expect(page.body).toContain('<code>us-tcpa-64-1200-c1</code>');
    expect(page.body).toContain('US-FL: 3 per 24 h on the same subject');
    expect(page.body).toContain('This helps you comply; it is not legal advice.');
    expect(page.body).toContain('<a href="/dashboard/calling-rules" aria-current="page">Calling rules</a>');
  });

  it('switches on, sets the cap and consent: stored, shown, audited with before and after', async () => {
    const res = await visitors.A.submit(OWN, `${OWN}/settings`, SETTINGS);
    expect(res.status).toBe(303);
    const page = await visitors.A.get(res.location!);
    expect(notice(page.body)).toBe('Saved. Calling rules are on: every call is checked before each attempt.');
    expect(page.body).toMatch(/name="cap_24h" value="3"/);
    expect(page.body).not.toContain('<code>ca-'); // Canada's rules are not in force any more
    expect(await stored(tenants.A)).toEqual({
      enabled: true,
      rule_sets: ['us'],
      call_kinds: ['automated'],
      own_rules: [],
      cap: { per_24h: 3, per_7d: 10, scope: 'account' },
      consent_required: true,
    });
    expect(await auditOf(tenants.A)).toEqual([
      {
        action: 'calling_rules_changed',
        actorKind: 'user',
        ip: '10.8.0.1',
        detail: {
          before: expect.objectContaining({ enabled: false, cap: null, consent_required: false }) as object,
          after: {
            enabled: true,
            rule_sets: ['us'],
            call_kinds: ['automated'],
            cap: '3 per 24 h, 10 per 7 days, per account',
            consent_required: true,
          },
        },
      },
    ]);
  });

  it('adds and removes its own hours, audited', async () => {
    const add = await visitors.A.submit(OWN, `${OWN}/hours`, {
      name: 'Office hours',
      days: 'mon',
      from: '10:00',
      to: '18:00',
    });
    expect(add.status).toBe(303);
    const page = await visitors.A.get(add.location!);
    expect(notice(page.body)).toBe(
      html(`Added "Office hours": calls only mon 10:00-18:00 in the callee's local time.`),
    );
    expect(page.body).toContain('<td data-label="Days and hours">mon 10:00-18:00</td>');
    expect(await stored(tenants.A)).toMatchObject({
      own_rules: [
        { name: 'Office hours', applies_to: ['automated'], hours: { mon: { start: '10:00', end: '18:00' } } },
      ],
    });
    const removed = await visitors.A.submit(OWN, `${OWN}/hours/remove`, { name: 'Office hours' });
    expect(notice((await visitors.A.get(removed.location!)).body)).toBe(html('Removed "Office hours".'));
    expect(await stored(tenants.A)).toMatchObject({ own_rules: [] });
    expect((await auditOf(tenants.A)).slice(1).map((e) => [e.action, e.detail])).toEqual([
      ['calling_hours_added', { name: 'Office hours', before: null, after: 'mon 10:00-18:00' }],
      ['calling_hours_removed', { name: 'Office hours', before: 'mon 10:00-18:00', after: null }],
    ]);
  });

  it('manages a client’s own hours on the client’s page, where the agency’s settings are words', async () => {
    const page = await visitors.A.get(clientPage());
    expect(page.status).toBe(200);
    expect(page.body).not.toContain(`action="${clientPage()}/settings"`);
    expect(page.body).toContain('<a href="/dashboard/calling-rules">Change them on the agency\'s page</a>');
    const add = await visitors.A.submit(clientPage(), `${clientPage()}/hours`, {
      name: 'Weekday mornings',
      days: 'tue',
      from: '09:00',
      to: '12:00',
    });
    expect(add.status).toBe(303);
    expect(await stored(tenants.A1)).toMatchObject({ own_rules: [{ name: 'Weekday mornings' }] });
    const settings = await visitors.A.submit(clientPage(), `${clientPage()}/settings`, SETTINGS);
    expect(settings.status).toBe(404);
    const link = await visitors.A.get(`/dashboard/clients/${tenants.A1.accountId}`);
    expect(link.body).toContain(`href="${clientPage()}"`);
  });
});

describe('a client user', () => {
  it('sees the agency’s settings read-only and adds narrower hours of its own', async () => {
    const page = await visitors.A1.get(OWN);
    expect(page.status).toBe(200);
    expect(page.body).toContain('On: every call of the agency and its clients is checked before each attempt.');
    expect(page.body).toContain('3 per 24 hours and 10 per 7 days, counted per account');
    expect(page.body).not.toContain(`action="${OWN}/settings"`);
    expect(page.body).toContain('Weekday mornings');
    const add = await visitors.A1.submit(OWN, `${OWN}/hours`, {
      name: 'Lunch',
      days: 'wed',
      from: '12:00',
      to: '13:00',
    });
    expect(add.status).toBe(303);
    expect(await stored(tenants.A1)).toMatchObject({ own_rules: [{ name: 'Weekday mornings' }, { name: 'Lunch' }] });
    expect((await auditOf(tenants.A1)).at(-1)).toMatchObject({ action: 'calling_hours_added', ip: '10.8.0.2' });
  });

  it('cannot change the agency’s settings or reach the agency’s pages (404), and nothing changes', async () => {
    const before = await stored(tenants.A);
    const res = await visitors.A1.submit(OWN, `${OWN}/settings`, { ...SETTINGS, enabled: 'off' });
    expect(res.status).toBe(404);
    expect((await visitors.A1.get(clientPage())).status).toBe(404);
    expect(await stored(tenants.A)).toEqual(before);
  });
});

describe('another agency', () => {
  it('never sees or changes agency A’s rules or its client’s', async () => {
    const own = await visitors.B.get(OWN);
    expect(own.body).toContain('<strong>Off</strong>');
    expect(own.body).not.toContain('Weekday mornings');
    const before = [await stored(tenants.A), await stored(tenants.A1)];
    expect((await visitors.B.get(clientPage())).status).toBe(404);
    const add = await visitors.B.submit(OWN, `${clientPage()}/hours`, {
      name: 'x',
      days: 'mon',
      from: '10:00',
      to: '11:00',
    });
    expect(add.status).toBe(404);
    const remove = await visitors.B.submit(OWN, `${clientPage()}/hours/remove`, { name: 'Lunch' });
    expect(remove.status).toBe(404);
    expect([await stored(tenants.A), await stored(tenants.A1)]).toEqual(before);
    expect(await stored(tenants.B)).toBeNull();
  });
});

describe('hostile input', () => {
  const HOURS = { name: 'Evenings', days: 'mon', from: '17:00', to: '20:00' };

  it('refuses bad hours with the problem next to its field, and changes nothing', async () => {
    const before = await stored(tenants.A);
    const entries = (await auditOf(tenants.A)).length;
    for (const [form, field, words] of [
      [{ from: '25:00' }, 'from', 'Write the start as HH:MM in 24 hours'],
      [{ to: '9pm' }, 'to', 'Write the end as HH:MM in 24 hours'],
      [{ from: '18:00', to: '09:00' }, 'to', 'The end (09:00) must be after the start (18:00)'],
      [{ name: 'x'.repeat(500) }, 'name', 'A name has at most 100 characters'],
      [{ name: 'bell\u0007' }, 'name', 'A name must not contain control characters'],
      [{ name: 'two\nlines' }, 'name', 'A name must not contain control characters'],
      [{ name: '   ' }, 'name', 'Give the rule a name'],
      [{ days: 'funday' }, 'days', 'Unknown days "funday"'],
      [{ days: '' }, 'days', 'Choose at least one day'],
    ] as const) {
      const res = await visitors.A.submit(OWN, `${OWN}/hours`, { ...HOURS, ...form });
      expect(res.status, JSON.stringify(form)).toBe(400);
      expect(fieldError(res.body, field), JSON.stringify(form)).toContain(html(words));
    }
    const both = await visitors.A.submit(OWN, `${OWN}/hours`, { ...HOURS, name: '', from: '7', days: 'x' });
    expect([fieldError(both.body, 'name'), fieldError(both.body, 'days'), fieldError(both.body, 'from')]).toEqual([
      expect.stringContaining('Give the rule a name') as string,
      expect.stringContaining('Unknown days') as string,
      expect.stringContaining('Write the start as HH:MM') as string,
    ]);
    const tooLong = await visitors.A.submit(OWN, `${OWN}/hours`, { ...HOURS, name: 'x'.repeat(1001) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).toContain('The form was not filled in as expected.');
    expect(await stored(tenants.A)).toEqual(before);
    expect(await auditOf(tenants.A)).toHaveLength(entries);
  });

  it('refuses bad settings with the problem next to its field, keeps what was typed, and changes nothing', async () => {
    const before = await stored(tenants.A);
    const entries = (await auditOf(tenants.A)).length;
    for (const [form, field, words] of [
      [{ rule_sets: 'mx' }, 'rule_sets', 'Unknown rule set "mx"'],
      [{ call_kinds: 'robocall' }, 'call_kinds', 'Unknown kind "robocall"'],
      [{ cap_24h: '0' }, 'cap_24h', 'The cap per 24 hours is a whole number from 1 to 50'],
      [{ cap_24h: '1000000000' }, 'cap_24h', 'The cap per 24 hours is a whole number from 1 to 50'],
      [{ cap_7d: '1000000000' }, 'cap_7d', 'The cap per 7 days is a whole number from 1 to 200'],
      [{ cap_24h: '', cap_7d: '5' }, 'cap_24h', 'A cap per 7 days needs a cap per 24 hours too'],
      [{ cap_7d: '2' }, 'cap_7d', 'The cap per 7 days (2) must be at least the cap per 24 hours (3)'],
      [{ cap_scope: 'world' }, 'cap_scope', 'The cap counts per agency or per account'],
    ] as const) {
      const res = await visitors.A.submit(OWN, `${OWN}/settings`, { ...SETTINGS, ...form });
      expect(res.status, JSON.stringify(form)).toBe(400);
      expect(fieldError(res.body, field), JSON.stringify(form)).toContain(html(words));
      if ('cap_24h' in form) expect(res.body).toContain(`name="cap_24h" value="${form.cap_24h}"`);
    }
    const noKinds = await visitors.A.request('POST', `${OWN}/settings`, {
      _csrf: visitors.A.lastCsrf!,
      enabled: 'on',
      cap_24h: '3',
    });
    expect(noKinds.status).toBe(400);
    expect(fieldError(noKinds.body, 'call_kinds')).toBe('Choose at least one kind of call');
    const bad = await visitors.A.submit(OWN, `${OWN}/settings`, { ...SETTINGS, enabled: 'maybe' });
    expect(bad.status).toBe(400);
    expect(bad.body).toContain('The form was not filled in as expected.');
    expect(await stored(tenants.A)).toEqual(before);
    expect(await auditOf(tenants.A)).toHaveLength(entries);
  });

  it('refuses a name already taken (any case) and an eleventh rule', async () => {
    for (let i = 1; i <= 9; i++)
      await putCallingHours(app.storage, {
        accountId: tenants.B.accountId,
        hours: { name: `Rule ${i}`, days: 'mon-fri', from: '09:00', to: '17:00' },
        now: app.now(),
      });
    const dup = await visitors.B.submit(OWN, `${OWN}/hours`, { ...HOURS, name: 'rule 3' });
    expect(dup.status).toBe(400);
    expect(fieldError(dup.body, 'name')).toContain(html('There is already a rule named "Rule 3"'));
    expect((await visitors.B.submit(OWN, `${OWN}/hours`, HOURS)).status).toBe(303);
    const page = await visitors.B.get(OWN);
    expect(page.body).toContain('At most 10 rules of your own: remove one to add another.');
    const eleventh = await visitors.B.request('POST', `${OWN}/hours`, {
      _csrf: visitors.B.lastCsrf!,
      ...HOURS,
      name: 'More',
    });
    expect(eleventh.status).toBe(400);
    expect(eleventh.body).toMatch(/<p class="notice error" role="alert">An account has at most 10 rules of its own/);
    expect((await stored(tenants.B)) as { own_rules: unknown[] }).toMatchObject({ own_rules: { length: 10 } });
  });

  it('sends a form without its CSRF token, or from another site, nowhere', async () => {
    await visitors.A.get(OWN);
    const before = await stored(tenants.A);
    const noToken = await visitors.A.request('POST', `${OWN}/settings`, { ...SETTINGS, enabled: 'off' });
    expect(noToken.status).toBe(403);
    const foreign = await visitors.A.request(
      'POST',
      `${OWN}/hours`,
      { _csrf: visitors.A.lastCsrf!, ...HOURS },
      { origin: 'https://evil.example' },
    );
    expect(foreign.status).toBe(403);
    expect(await stored(tenants.A)).toEqual(before);
  });
});
