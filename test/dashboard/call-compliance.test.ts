// The calling rules on the dashboard: the call page's "Calling rules" section (the consent record, escaped as the
// client wrote it; the declared region; each attempt's decision record with its candidates' table), the waiting line
// and the Calls list's badge of a call the rules hold ("Held by calling rules until …", "Held: cap per number until
// …"), and the Calls list's filter of held calls, scoped as the list is. Calls seeded with the columns the dispatcher
// writes (test/helpers/seed/compliance-calls.ts).
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { decisionRecord, insertComplianceCall } from '../helpers/seed/compliance-calls.js';
import { createUserWithPassword, DASHBOARD_ENV, html, Visitor } from './helpers.js';

/** Sunday 2055-03-14, 07:42 in New York. */
const NOW = new Date('2055-03-14T11:42:00Z');
const HOSTILE_SOURCE = '=HYPERLINK("x") <script>alert("src")</script> Web form, example.com/quote';
const EVIDENCE = 'https://evidence.example/form?id=1&kind=web';

let app: App;
const tenants = {} as Record<'A' | 'A1' | 'B', Tenant>;
const visitors = {} as Record<'A' | 'A1' | 'B', Visitor>;
const calls = {} as Record<
  'held' | 'capped' | 'plain' | 'done' | 'bare' | 'edited' | 'clientHeld' | 'otherHeld',
  string
>;

const CALL_LINK = /href="\/dashboard\/calls\/([0-9a-f-]{36})"/g;
const listed = (body: string) => [...body.matchAll(CALL_LINK)].map((m) => m[1]!);
const decode = (text: string) =>
  text
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

beforeAll(async () => {
  ({ app } = await buildTestApp({ clock: () => NOW, env: DASHBOARD_ENV }));
  tenants.A = await createTenant(app.storage, { name: 'Agency A' });
  tenants.A1 = await createClientTenant(app.storage, tenants.A.accountId, { name: 'Client A1' });
  tenants.B = await createTenant(app.storage, { name: 'Agency B' });
  const prisma = prismaOf(app);
  const of = (t: Tenant) => ({ accountId: t.accountId, agentId: t.agentId });
  const created = (minutesAgo: number) => new Date(NOW.getTime() - minutesAgo * 60_000);
  calls.held = await insertComplianceCall(prisma, {
    ...of(tenants.A),
    createdAt: created(10),
    status: 'initiated',
    heldBy: 'calling_rules',
    notBefore: new Date('2055-03-14T12:00:00Z'),
    timezone: 'America/New_York',
    recipientRegion: 'US-FL',
    consent: {
      type: 'express_written',
      obtained_at: '2055-03-01T09:30:00-05:00',
      source: HOSTILE_SOURCE,
      evidence_url: EVIDENCE,
    },
    compliance: [decisionRecord()],
  });
  calls.capped = await insertComplianceCall(prisma, {
    ...of(tenants.A),
    createdAt: created(9),
    status: 'initiated',
    heldBy: 'cap',
    notBefore: new Date('2055-03-14T15:00:00Z'),
    timezone: 'America/New_York',
    compliance: [
      decisionRecord({
        reasons: ['3 of 3 dial attempts to +13055550123 in 24 hours'],
        cap: { count: 3, limit: 3, window: '24h', scope: 'account' },
        consent: 'not_required',
      }),
    ],
  });
  calls.plain = await insertComplianceCall(prisma, { ...of(tenants.A), createdAt: created(8), status: 'initiated' });
  calls.done = await insertComplianceCall(prisma, {
    ...of(tenants.A),
    createdAt: created(7),
    compliance: [
      decisionRecord(),
      decisionRecord({
        checked_at: '2055-03-14T12:00:00.000Z',
        verdict: 'allowed',
        reasons: [],
        do_not_call: 'listed',
      }),
    ],
  });
  calls.bare = await insertComplianceCall(prisma, { ...of(tenants.A), createdAt: created(6) });
  // A row edited by hand: a consent whose evidence is no https link, records of another shape beside a good one.
  calls.edited = await insertComplianceCall(prisma, {
    ...of(tenants.A),
    createdAt: created(6),
    consent: { type: 'handshake', obtained_at: 'yesterday', source: 'phone', evidence_url: 'javascript:alert(1)' },
    compliance: [{ verdict: 'maybe' }, 'text', decisionRecord({ verdict: 'refused', candidates: [], cap: null })],
  });
  calls.clientHeld = await insertComplianceCall(prisma, {
    ...of(tenants.A1),
    createdAt: created(5),
    status: 'initiated',
    heldBy: 'calling_rules',
    notBefore: new Date('2055-03-14T13:00:00Z'),
    compliance: [decisionRecord()],
  });
  calls.otherHeld = await insertComplianceCall(prisma, {
    ...of(tenants.B),
    createdAt: created(4),
    status: 'initiated',
    heldBy: 'calling_rules',
    notBefore: new Date('2055-03-14T13:00:00Z'),
    compliance: [decisionRecord()],
  });
  for (const name of ['A', 'A1', 'B'] as const) {
    await createUserWithPassword(app.storage, tenants[name].accountId, `${name.toLowerCase()}@rules.example`);
    visitors[name] = new Visitor(app);
    visitors[name].ip = `10.9.0.${Object.keys(visitors).length}`;
    expect((await visitors[name].signIn(`${name.toLowerCase()}@rules.example`)).status).toBe(303);
  }
});

describe('the call page', () => {
  it('shows the consent, escaped as written, the declared region and the decision record with its candidates', async () => {
    const { status, body } = await visitors.A.get(`/dashboard/calls/${calls.held}`);
    expect(status).toBe(200);
    const section = body.slice(body.indexOf('<section class="call-compliance"'));
    expect(section).toContain('<h2 id="call-compliance-heading">Calling rules</h2>');
    expect(section).toContain('Prior express written consent');
    // Obtained at, in the viewer's time (UTC: no zone chosen).
    expect(section).toContain('2055-03-01 14:30:00 UTC');
    // The source as the client wrote it, escaped: no element of it reaches the page.
    expect(section).toContain(html(HOSTILE_SOURCE));
    expect(body).not.toContain('<script>alert("src")');
    expect(section).toContain(`href="${html(EVIDENCE)}" rel="noopener noreferrer"`);
    expect(section).toContain('<dd class="recipient-region">US-FL</dd>');
    const record = section.slice(section.indexOf('<article class="compliance-record">'));
    expect(record).toContain('Attempt 1: <span class="badge" data-tone="wait">Held: not dialled yet</span>');
    expect(record).toContain('2055-03-14 11:42:00 UTC');
    expect(decode(record)).toContain('<li>US-FL: 8:00–20:00, 07:42 now in America/New_York</li>');
    expect(record).toContain(
      '1 of at most 3 dial attempts to the number in 24 hours, counted across the agency and its clients',
    );
    expect(record).toContain('Clear: on no do-not-call list');
    expect(record).toContain('<dd>On record</dd>');
    expect(record).toContain('<code>2055.1</code>');
    // The candidates: a table with its headers; "allowed" in words, not a colour.
    for (const header of ['Region', 'Time zone', 'Local time', 'Allowed', 'Deciding rule'])
      expect(record).toContain(`<th scope="col">${header}</th>`);
    expect(record).toContain(
      '<tr><td data-label="Region">US-FL</td><td data-label="Time zone">America/New_York</td><td class="time" data-label="Local time">2055-03-14 07:42</td><td data-label="Allowed">Not allowed</td><td data-label="Deciding rule">US-FL hours</td></tr>',
    );
    expect(record).toContain('<td data-label="Deciding rule">-</td>');
  });

  it('shows every attempt’s record, oldest first', async () => {
    const { body } = await visitors.A.get(`/dashboard/calls/${calls.done}`);
    const first = body.indexOf('Attempt 1: <span class="badge" data-tone="wait">Held');
    const second = body.indexOf('Attempt 1: <span class="badge" data-tone="ok">Allowed: dialled</span>');
    expect(first).toBeGreaterThan(0);
    expect(second).toBeGreaterThan(first);
    expect(body).toContain('Listed: the number is on a do-not-call list');
    expect(body).toContain('<dd class="consent">None on record</dd>');
  });

  it('shows a row edited by hand as far as it has the shapes, and no link that is not https', async () => {
    const { status, body } = await visitors.A.get(`/dashboard/calls/${calls.edited}`);
    expect(status).toBe(200);
    expect(body).toContain('<dd class="consent">handshake</dd>');
    expect(body).toContain('<dd>yesterday</dd>');
    expect(body).not.toContain('href="javascript:');
    expect(body).toContain('<dd><bdi>javascript:alert(1)</bdi></dd>');
    expect(body.match(/<article class="compliance-record">/g)).toHaveLength(1);
    expect(body).toContain('Refused: never dialled');
    expect(body).toContain('<dd>No cap applied</dd>');
    expect(body).not.toContain('compliance-candidates');
  });

  it('has no Calling rules section for a call without consent, region or record', async () => {
    const { status, body } = await visitors.A.get(`/dashboard/calls/${calls.bare}`);
    expect(status).toBe(200);
    expect(body).not.toContain('call-compliance');
  });

  it('says why and until when the rules hold a waiting call', async () => {
    const held = decode((await visitors.A.get(`/dashboard/calls/${calls.held}`)).body);
    expect(/<dd class="waiting">([^<]*)<\/dd>/.exec(held)?.[1]).toBe(
      'Held by calling rules until 2055-03-14 12:00:00 UTC (Sun 08:00 America/New_York) (US-FL: 8:00–20:00, 07:42 now in America/New_York)',
    );
    const capped = decode((await visitors.A.get(`/dashboard/calls/${calls.capped}`)).body);
    expect(/<dd class="waiting">([^<]*)<\/dd>/.exec(capped)?.[1]).toBe(
      'Held: cap per number until 2055-03-14 15:00:00 UTC (Sun 11:00 America/New_York) (3 of 3 dial attempts to +13055550123 in 24 hours)',
    );
  });

  it('is 404 for another tenant’s call', async () => {
    expect((await visitors.B.get(`/dashboard/calls/${calls.held}`)).status).toBe(404);
  });
});

describe('the Calls list', () => {
  /** The row of `callId` on the list, decoded. */
  const rowOf = (body: string, callId: string) =>
    decode(body)
      .split('<tr>')
      .find((r) => r.includes(callId))!;

  it('badges a held call with the hold, its end in the call’s zone and the rules’ reason', async () => {
    const { body } = await visitors.A.get('/dashboard/calls');
    const held = rowOf(body, calls.held);
    expect(held).toContain(
      '<span>Held by calling rules until 14 Mar, 08:00 America/New_York</span> <span>(US-FL: 8:00–20:00, 07:42 now in America/New_York)</span>',
    );
    expect(held).toContain('title="US-FL: 8:00–20:00, 07:42 now in America/New_York"');
    expect(rowOf(body, calls.capped)).toContain(
      '<span>Held: cap per number until 14 Mar, 11:00 America/New_York</span>',
    );
    expect(rowOf(body, calls.plain)).toContain('Waiting for a slot');
  });

  it('filters the held calls: only those, through the rules’ own reading', async () => {
    const { status, body } = await visitors.A.get('/dashboard/calls?held=yes');
    expect(status).toBe(200);
    expect(new Set(listed(body))).toEqual(new Set([calls.held, calls.capped, calls.clientHeld]));
    expect(body).toMatch(/<input type="checkbox" name="held" value="yes" checked>/);
    // With another filter: a status other than waiting has none.
    expect(listed((await visitors.A.get('/dashboard/calls?held=yes&status=completed')).body)).toEqual([]);
    // One client's.
    expect(listed((await visitors.A.get(`/dashboard/calls?held=yes&client=${tenants.A1.accountId}`)).body)).toEqual([
      calls.clientHeld,
    ]);
    // A call searched by id passes only if held.
    expect(listed((await visitors.A.get(`/dashboard/calls?held=yes&call=${calls.plain}`)).body)).toEqual([]);
    expect(listed((await visitors.A.get(`/dashboard/calls?held=yes&call=${calls.held}`)).body)).toEqual([calls.held]);
  });

  it('scopes the held filter as the list: a client sees its own, another agency its own', async () => {
    expect(listed((await visitors.A1.get('/dashboard/calls?held=yes')).body)).toEqual([calls.clientHeld]);
    expect(listed((await visitors.B.get('/dashboard/calls?held=yes')).body)).toEqual([calls.otherHeld]);
  });

  it('refuses a held filter that is not the checkbox’s value, saying so', async () => {
    const { status, body } = await visitors.A.get('/dashboard/calls?held=maybe');
    expect(status).toBe(400);
    expect(decode(body)).toContain('"maybe" is not a choice of the held filter');
  });

  it('offers the consent export for a period', async () => {
    const { body } = await visitors.A.get('/dashboard/calls');
    expect(body).toContain('<form method="get" action="/dashboard/calls/export.csv"');
    expect(body).toContain('name="from" value="2055-02-12"');
    expect(body).toContain('name="to" value="2055-03-14"');
  });
});
