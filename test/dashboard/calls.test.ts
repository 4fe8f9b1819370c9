// The Calls pages: each viewer sees the calls of the accounts they manage and no others; every filter; keyset pages
// that neither repeat nor skip calls created at the same instant; bad filters answered with a message; the detail
// view with its metadata exactly as sent (key order, types, escaping, Unicode), its timeline and its deliveries; a
// resend; 404 for anything the viewer does not manage. Calls come through the real trigger and the simulated dialer,
// or (many at once, or metadata the API does not accept) from call-fixtures.ts.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { setWebhook } from '../../src/admin/webhooks.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';
import { callIdOf, trigger } from '../helpers/trigger.js';
import { waitFor } from '../helpers/wait.js';
import { createUserWithPassword, DASHBOARD_ENV, Visitor } from './helpers.js';
import {
  insertCalls,
  insertFailedDelivery,
  forceAgent,
  forceCall,
  forceEndpoint,
  deleteCallEvents,
  forceCallEvents,
} from '../helpers/seed.js';

const FAST = {
  ...DASHBOARD_ENV,
  DISPATCH_ENABLED: 'true',
  SIMULATED_RING_MS: '30',
  SIMULATED_TALK_MS: '120',
  WEBHOOK_DELIVERY_ENABLED: 'true',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
};

/** The metadata of the call whose detail view is checked, as its client wrote it: integer-like keys after others. */
const METADATA =
  '{"z":"1","10":1,"a":null,"2":true,"quote":"it\'s \\"quoted\\"","html":"<script>alert(1)</script>","uni":"Zoë 日本 🎉","n":-1.5e3}';
const METADATA_LAID_OUT = `{
  "z": "1",
  "10": 1,
  "a": null,
  "2": true,
  "quote": "it's \\"quoted\\"",
  "html": "<script>alert(1)</script>",
  "uni": "Zoë 日本 🎉",
  "n": -1.5e3
}`;
const NAME = 'Zoë <script>alert("name")</script>';

let app: App;
let receiver: Receiver;
const tenants = {} as Record<'A' | 'A1' | 'A2' | 'B', Tenant>;
const visitors = {} as Record<keyof typeof tenants, Visitor>;
/** Calls by what they are for. */
const calls = {} as { detail: string; busy: string; a1: string[]; a1Numbered: string; b: string };

const CALL_LINK = /href="\/dashboard\/calls\/([0-9a-f-]{36})"/g;
const listed = (body: string) => [...body.matchAll(CALL_LINK)].map((m) => m[1]!);
const decode = (html: string) =>
  html
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
const olderLink = (body: string) => /<a href="([^"]+)" rel="next">Older<\/a>/.exec(body)?.[1]?.replace(/&amp;/g, '&');

async function triggered(key: string, body: unknown): Promise<string> {
  // TLS_MODE=proxy (the dashboard's tests): the API too is reached as if through a TLS-terminating proxy.
  const res = await trigger(app, key, body, { 'x-forwarded-proto': 'https' });
  expect(res.statusCode, res.body).toBe(200);
  return callIdOf(res);
}

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: FAST }));
  receiver = await startReceiver();
  const named = (name: string) => ({ name: `Account ${name}`, agentName: `Agent of ${name}` });
  tenants.A = await createTenant(app.storage, named('A'));
  tenants.A1 = await createClientTenant(app.storage, tenants.A.accountId, named('A1'));
  tenants.A2 = await createClientTenant(app.storage, tenants.A.accountId, named('A2'));
  tenants.B = await createTenant(app.storage, named('B'));
  await setWebhook(app.storage, tenants.A.accountId, receiver.url, { allowPrivate: true, now: app.now() });

  calls.detail = await triggered(
    tenants.A.key,
    `{"phone_number":"+14155552671","name":${JSON.stringify(NAME)},"email":"zoe@example.com","metadata":${METADATA}}`,
  );
  calls.busy = await triggered(tenants.A.key, { phone_number: '+15005550001' });
  calls.a1 = [await triggered(tenants.A1.key, { phone_number: '+14155552671' })];
  calls.a1Numbered = await triggered(tenants.A1.key, { phone_number: '+14155550123' });
  calls.a1.push(calls.a1Numbered);
  calls.b = await triggered(tenants.B.key, { phone_number: '+14155552671' });
  await waitFor(
    () => prismaOf(app).call.findMany({ select: { status: true } }),
    (cs) => cs.every((c) => c.status === 'completed' || c.status === 'failed'),
  );
  await waitFor(
    () => prismaOf(app).webhookDelivery.findMany({ where: { callId: calls.detail }, select: { status: true } }),
    (ds) => ds.length === 2 && ds.every((d) => d.status === 'succeeded'),
  );

  for (const [name, tenant] of Object.entries(tenants) as [keyof typeof tenants, Tenant][]) {
    await createUserWithPassword(app.storage, tenant.accountId, `${name.toLowerCase()}@calls.example`);
    visitors[name] = new Visitor(app);
    visitors[name].ip = `10.8.0.${Object.keys(visitors).length}`;
    expect((await visitors[name].signIn(`${name.toLowerCase()}@calls.example`)).status).toBe(303);
  }
});

describe('the Calls list', () => {
  it('is in the navigation', async () => {
    expect((await visitors.A1.get('/dashboard')).body).toContain('href="/dashboard/calls"');
  });

  it('shows an agency user the calls of the agency and its clients, a client user only its own', async () => {
    const ofA = listed((await visitors.A.get('/dashboard/calls')).body);
    expect(ofA.sort()).toEqual([calls.detail, calls.busy, ...calls.a1].sort());
    const pageOfA = (await visitors.A.get('/dashboard/calls')).body;
    expect(pageOfA).toContain('<th scope="col">Client</th>');
    expect(pageOfA).toContain('<td data-label="Client">Account A1</td>');
    // The agency's own calls say so: they are not a client's.
    expect(pageOfA).toContain('<td data-label="Client">Account A (own)</td>');
    expect(pageOfA).toContain('>Own calls (Account A)</option>');

    const pageOfA1 = (await visitors.A1.get('/dashboard/calls')).body;
    expect(listed(pageOfA1).sort()).toEqual([...calls.a1].sort());
    expect(pageOfA1).not.toContain('<th scope="col">Client</th>');
    expect(listed((await visitors.A2.get('/dashboard/calls')).body)).toEqual([]);
    expect(listed((await visitors.B.get('/dashboard/calls')).body)).toEqual([calls.b]);
  });

  it('lists newest first with number, name, agent, client, status with its reason, duration and created', async () => {
    const body = (await visitors.A.get('/dashboard/calls')).body;
    const ids = listed(body);
    const rows = await prismaOf(app).call.findMany({
      where: { id: { in: ids } },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      select: { id: true },
    });
    expect(ids).toEqual(rows.map((r) => r.id));
    const busyRow = body.slice(body.indexOf(calls.busy), body.indexOf('</tr>', body.indexOf(calls.busy)));
    expect(busyRow).toContain('+15005550001');
    expect(busyRow).toContain('Agent of A');
    expect(busyRow).toContain('<td data-label="Status"><span class="badge" data-tone="bad">Failed: busy</span></td>');
    const completedRow = body.slice(body.indexOf(calls.detail), body.indexOf('</tr>', body.indexOf(calls.detail)));
    expect(completedRow).toContain('<span class="badge" data-tone="ok">Completed</span>');
    expect(completedRow).toMatch(/<td data-label="Duration">\d+ s<\/td>/);
    expect(completedRow).toMatch(/<td class="time" data-label="Created">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/td>/);
    expect(completedRow).toContain(
      '<td data-label="Name">Zoë &lt;script&gt;alert(&quot;name&quot;)&lt;/script&gt;</td>',
    );
    // The number is the row's link; the failure reason is in the badge, not a column of its own.
    expect(body).toContain(
      `<td class="primary" data-label="Number"><a href="/dashboard/calls/${calls.detail}">+14155552671</a></td>`,
    );
    expect(body).toContain('<table class="rows calls"');
    expect(body).not.toContain('Failure reason');
    const cells = [...body.matchAll(/<td( class="(primary|time)")? data-label="[^"]+">/g)].length;
    expect(cells).toBe([...body.matchAll(/<td/g)].length);
  });

  it('filters by status, agent, client, date range, number and call id', async () => {
    const ids = async (visitor: Visitor, query: string) => {
      const res = await visitor.get(`/dashboard/calls?${query}`);
      expect(res.status, res.body).toBe(200);
      return listed(res.body).sort();
    };
    expect(await ids(visitors.A, 'status=failed')).toEqual([calls.busy]);
    expect(await ids(visitors.A, 'status=completed')).toEqual([calls.detail, ...calls.a1].sort());
    expect(await ids(visitors.A, `agent=${tenants.A1.agentId}`)).toEqual([...calls.a1].sort());
    expect(await ids(visitors.A, `client=${tenants.A1.accountId}`)).toEqual([...calls.a1].sort());
    expect(await ids(visitors.A, `client=${tenants.A.accountId}`)).toEqual([calls.detail, calls.busy].sort());
    expect(await ids(visitors.A, `client=${tenants.A1.accountId}&status=failed`)).toEqual([]);

    const created = (await prismaOf(app).call.findUniqueOrThrow({ where: { id: calls.detail } })).createdAt;
    const day = (offset: number) => new Date(created.getTime() + offset * 86_400_000).toISOString().slice(0, 10);
    expect(await ids(visitors.A, `from=${day(0)}&to=${day(0)}`)).toEqual(
      [calls.detail, calls.busy, ...calls.a1].sort(),
    );
    expect(await ids(visitors.A, `from=${day(1)}`)).toEqual([]);
    expect(await ids(visitors.A, `to=${day(-1)}`)).toEqual([]);
    const minute = created.toISOString().slice(0, 16);
    expect(await ids(visitors.A, `from=${minute}&to=${minute}&call=${calls.detail}`)).toEqual([calls.detail]);

    expect(await ids(visitors.A, `number=${encodeURIComponent('+1 (415) 555-0123')}`)).toEqual([calls.a1Numbered]);
    expect(await ids(visitors.A1, 'number=%2B14155550123')).toEqual([calls.a1Numbered]);
    expect(await ids(visitors.B, 'number=%2B14155550123')).toEqual([]);

    expect(await ids(visitors.A, `call=${calls.a1Numbered}`)).toEqual([calls.a1Numbered]);
    expect(await ids(visitors.A, `call=${calls.a1Numbered.toUpperCase()}`)).toEqual([calls.a1Numbered]);
    expect(await ids(visitors.A, `call=${calls.a1Numbered}&status=failed`)).toEqual([]);
    expect(await ids(visitors.A, `call=${calls.b}`)).toEqual([]);
    expect(await ids(visitors.A1, `call=${calls.detail}`)).toEqual([]);
    expect(await ids(visitors.A2, `call=${calls.a1Numbered}`)).toEqual([]);
  });

  it('answers bad filter values with a message and no calls, never a 500', async () => {
    const cases: [Visitor, string, string][] = [
      [visitors.A, 'status=ringing', 'Unknown status &quot;ringing&quot;'],
      [visitors.A, 'agent=not-an-id', 'Unknown agent &quot;not-an-id&quot;'],
      [visitors.A, `agent=${tenants.B.agentId}`, 'Unknown agent'],
      [visitors.A, `client=${tenants.B.accountId}`, 'Unknown client'],
      [visitors.A1, `client=${tenants.A.accountId}`, 'Unknown client'],
      [visitors.A, 'from=2054-02-30', '&quot;2054-02-30&quot; is not a date'],
      [visitors.A, 'to=yesterday', '&quot;yesterday&quot; is not a date'],
      [visitors.A, 'from=2054-05-02&to=2054-05-01', 'The date range ends before it starts.'],
      [visitors.A, 'number=555-CALL', 'is not the start of a phone number'],
      [visitors.A, 'number=%2B0', 'is not the start of a phone number'],
      [visitors.A, 'meta_key=crm_id', 'Give the value of the metadata key &quot;crm_id&quot;'],
      [visitors.A, 'meta_value=123', 'Give the metadata key to search'],
      [visitors.A, `meta_key=${'k'.repeat(41)}&meta_value=1`, 'a key has at most 40 characters'],
      [visitors.A, 'call=12345', '&quot;12345&quot; is not a call id'],
      [visitors.A, 'before=garbage', 'This link to older calls is not valid.'],
      [visitors.A, `status=${'x'.repeat(500)}`, 'A filter is longer than any value it can have.'],
      // PostgreSQL takes no NUL in text: searched for, it was a 500.
      [visitors.A, 'name=Ann%00', 'A filter holds a character that cannot be searched for'],
      [visitors.A, 'meta_key=crm_id&meta_value=%00', 'A filter holds a character that cannot be searched for'],
      [visitors.A, 'client_name=%00', 'A filter holds a character that cannot be searched for'],
      [
        visitors.A,
        'status=%3Cscript%3Ealert(1)%3C%2Fscript%3E',
        'Unknown status &quot;&lt;script&gt;alert(1)&lt;/script&gt;&quot;',
      ],
    ];
    for (const [visitor, query, message] of cases) {
      const res = await visitor.get(`/dashboard/calls?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body, query).toContain(message);
      expect(res.body, query).not.toContain('<script>alert(1)</script>');
      expect(listed(res.body), query).toEqual([]);
      expect(res.body, query).toContain('No calls are shown until the filters are corrected.');
    }
  });

  it('names every refused filter at once (the schema states the rules; validation stops at the first)', async () => {
    const res = await visitors.A.get('/dashboard/calls?status=ringing&agent=not-an-id&to=yesterday&call=12345');
    expect(res.status).toBe(400);
    for (const message of [
      'Unknown status &quot;ringing&quot;',
      'Unknown agent &quot;not-an-id&quot;',
      '&quot;yesterday&quot; is not a date',
      '&quot;12345&quot; is not a call id',
    ])
      expect(res.body).toContain(message);
    expect(res.body).not.toContain('A filter is longer than any value it can have.');
    const blank = await visitors.A.get('/dashboard/calls?status=%20&agent=&from=%20%20&call=');
    expect(blank.status).toBe(200);
  });

  it('pages with "Older" without repeating or skipping calls created at the same instant, keeping the filters', async () => {
    const first = new Date('1998-03-01T12:00:00.000Z');
    const second = new Date('1998-03-01T11:00:00.000Z');
    const made = [
      ...(await insertCalls(prismaOf(app), {
        accountId: tenants.A2.accountId,
        agentId: tenants.A2.agentId,
        count: 60,
        createdAt: first,
      })),
      ...(await insertCalls(prismaOf(app), {
        accountId: tenants.A2.accountId,
        agentId: tenants.A2.agentId,
        count: 60,
        createdAt: second,
      })),
    ];
    // Ten failed calls among them must not show with status=completed.
    await insertCalls(prismaOf(app), {
      accountId: tenants.A2.accountId,
      agentId: tenants.A2.agentId,
      count: 10,
      createdAt: first,
      status: 'failed',
    });
    const newestFirst = (
      await prismaOf(app).call.findMany({
        where: { id: { in: made } },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        select: { id: true },
      })
    ).map((c) => c.id);

    const seen: string[] = [];
    let url: string | undefined = '/dashboard/calls?status=completed';
    let pages = 0;
    while (url && pages < 10) {
      const page = await visitors.A2.get(url);
      expect(page.status).toBe(200);
      const ids = listed(page.body);
      expect(ids.length).toBeLessThanOrEqual(50);
      seen.push(...ids);
      url = olderLink(page.body);
      if (url) expect(url).toContain('status=completed');
      if (pages > 0) expect(page.body).toContain('>Newest</a>');
      pages++;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(newestFirst);
  });
});

describe('the call detail view', () => {
  it('shows number, agent, client, name, email, status, duration, escaped', async () => {
    const res = await visitors.A.get(`/dashboard/calls/${calls.detail}`);
    expect(res.status).toBe(200);
    expect(res.body).toContain('+14155552671');
    expect(res.body).toContain('Agent of A');
    expect(res.body).toContain('Account A');
    expect(res.body).toContain('Zoë &lt;script&gt;alert(&quot;name&quot;)&lt;/script&gt;');
    expect(res.body).toContain('zoe@example.com');
    expect(res.body).toMatch(/<dt>Duration<\/dt><dd>\d+ s<\/dd>/);
    // No script but our own files (the live refresh's), none from the call's data.
    expect(res.body.replace(/<script src="\/dashboard\/assets\/[\w.-]+\.js" defer><\/script>/g, '')).not.toMatch(
      /<script/i,
    );
  });

  it('shows the metadata exactly as sent: key order, strings apart from numbers, true/false and null, escaped, Unicode', async () => {
    const { body } = await visitors.A.get(`/dashboard/calls/${calls.detail}`);
    const json = /<pre class="json"><code>([\s\S]*?)<\/code><\/pre>/.exec(body)?.[1];
    expect(json).toBeDefined();
    expect(decode(json!)).toBe(METADATA_LAID_OUT);
    expect(json).toContain('&quot;html&quot;: &quot;&lt;script&gt;alert(1)&lt;/script&gt;&quot;');
    expect(body).not.toContain('<script>alert(1)</script>');
    expect(body).toContain('Zoë 日本 🎉');

    const rows = [
      ...body.matchAll(
        /<tr><td[^>]*><code>([^<]*)<\/code><\/td><td[^>]*>([\s\S]*?)<\/td><td[^>]*>([^<]*)<\/td><\/tr>/g,
      ),
    ].map((m) => ({
      key: decode(m[1]!),
      value: decode(m[2]!.replace(/<[^>]+>/g, '')),
      kind: m[3],
    }));
    expect(rows).toEqual([
      { key: 'z', value: '1', kind: 'text' },
      { key: '10', value: '1', kind: 'number' },
      { key: 'a', value: 'null', kind: 'null' },
      { key: '2', value: 'true', kind: 'true/false' },
      { key: 'quote', value: 'it\'s "quoted"', kind: 'text' },
      { key: 'html', value: '<script>alert(1)</script>', kind: 'text' },
      { key: 'uni', value: 'Zoë 日本 🎉', kind: 'text' },
      { key: 'n', value: '-1.5e3', kind: 'number' },
    ]);
  });

  it('lays out nested objects and lists without reordering them, and says when there is no metadata', async () => {
    const text = '{"b":{"y":[1,"1",{"deep":null}],"x":{},"3":[]},"a":"<i>x</i>"}';
    const [nested] = await insertCalls(prismaOf(app), {
      accountId: tenants.A2.accountId,
      agentId: tenants.A2.agentId,
      count: 1,
      createdAt: new Date(),
      metadataJson: text,
    });
    const { body } = await visitors.A2.get(`/dashboard/calls/${nested}`);
    const json = decode(/<pre class="json"><code>([\s\S]*?)<\/code><\/pre>/.exec(body)![1]!);
    expect(json).toBe(
      '{\n  "b": {\n    "y": [\n      1,\n      "1",\n      {\n        "deep": null\n      }\n    ],\n    "x": {},\n    "3": []\n  },\n  "a": "<i>x</i>"\n}',
    );
    expect(JSON.stringify(JSON.parse(json))).toBe(JSON.stringify(JSON.parse(text)));
    expect(body).toContain('<td data-label="Type">object</td>');
    expect(body).not.toContain('<i>x</i>');

    const bare = await visitors.B.get(`/dashboard/calls/${calls.b}`);
    expect(bare.body).toContain('No metadata was given with this call.');
  });

  it('shows the timeline in order with times, and the failure reason', async () => {
    const { body } = await visitors.A.get(`/dashboard/calls/${calls.detail}`);
    const steps = ['Accepted', 'Dialling', 'Answered', 'Completed'].map((step) =>
      body.indexOf(`<strong>${step}</strong>`),
    );
    expect(steps.every((at) => at > 0)).toBe(true);
    expect([...steps].sort((a, b) => a - b)).toEqual(steps);
    expect(body).toMatch(/<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/time> <strong>Accepted<\/strong>/);

    const busy = (await visitors.A.get(`/dashboard/calls/${calls.busy}`)).body;
    expect(busy).toContain('<strong>Failed: Busy</strong>');
    expect(busy.indexOf('<strong>Dialling</strong>')).toBeLessThan(busy.indexOf('<strong>Failed: Busy</strong>'));
    expect(busy).toMatch(/<dt>Failure reason<\/dt><dd>Busy<\/dd>/);
    expect(busy).not.toContain('<strong>Answered</strong>');
    // A completed call has no failure reason, not "Failure reason -" (issue 21, point 11).
    expect(body).toContain('<dt>Status</dt>');
    expect(body).not.toContain('Failure reason');
  });

  it('shows a call queued until its window opens as waiting, with the time it opens', async () => {
    const [queued] = await insertCalls(prismaOf(app), {
      accountId: tenants.A2.accountId,
      agentId: tenants.A2.agentId,
      count: 1,
      createdAt: new Date(),
    });
    const opens = new Date(Date.now() + 3_600_000);
    await forceCall(prismaOf(app), queued!, {
      status: 'initiated',
      notBefore: opens,
      startedAt: null,
      answeredAt: null,
      endedAt: null,
      durationSeconds: null,
    });
    await deleteCallEvents(prismaOf(app), { where: { callId: queued, toStatus: { not: 'initiated' } } });
    await forceCallEvents(prismaOf(app), { callId: queued! }, { occurredAt: new Date(Date.now() - 5_000) });
    const { body } = await visitors.A2.get(`/dashboard/calls/${queued}`);
    expect(body).toContain('<strong>Queued until the calling window opens</strong>');
    // One sentence, not "Queued until the calling window opens the window opens ..." (issue 21, point 11).
    expect(body).toContain(
      `<strong>Queued until the calling window opens</strong> <span class="hint">at ${opens
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, ' UTC')}; still waiting`,
    );
    expect(body).not.toContain('the window opens');
    expect(body).toContain('still waiting');
    expect(body).toContain('<span class="badge status initiated" data-tone="wait">Waiting</span>');
    // Not dialled: it is still waiting, and must not be picked up by the dispatcher during this test.
    await forceCall(prismaOf(app), queued!, { status: 'failed', failureReason: 'canceled' });
  });

  it('shows a call waiting for a retry: its attempts and their outcomes, why it waits, its zone and schedule', async () => {
    const [retrying, voicemail] = await insertCalls(prismaOf(app), {
      accountId: tenants.A2.accountId,
      agentId: tenants.A2.agentId,
      count: 2,
      createdAt: new Date(),
    });
    // Wednesday 2058-03-13 13:00 UTC is 09:00 in New York (EDT since March 10).
    const due = new Date('2058-03-13T13:00:00.000Z');
    const scheduled = new Date('2058-03-12T14:30:00.000Z');
    await forceCall(prismaOf(app), retrying!, {
      status: 'initiated',
      startedAt: null,
      answeredAt: null,
      endedAt: null,
      durationSeconds: null,
      failureReason: null,
      attempt: 3,
      nextAttemptAt: due,
      notBefore: due,
      expiresAt: new Date(due.getTime() + 3_600_000),
      scheduledAt: scheduled,
      timezone: 'America/New_York',
      timezoneSource: 'country',
      attemptOutcomes: [
        { attempt: 1, outcome: 'busy', at: '2058-03-12T14:31:00.000Z' },
        { attempt: 2, outcome: 'no_answer', at: '2058-03-12T15:02:00.000Z' },
      ],
    });
    const detail = decode((await visitors.A2.get(`/dashboard/calls/${retrying}`)).body);
    expect(detail).toContain(
      '<dt>Waiting</dt><dd class="waiting">Attempt 3 is due 2058-03-13 13:00:00 UTC (Wed 09:00 America/New_York)</dd>',
    );
    expect(detail).toContain('<dt>Attempts</dt><dd>2 so far; attempt 3 is next</dd>');
    expect(detail).toContain('<dt>Scheduled for</dt><dd>2058-03-12 14:30:00 UTC (Tue 10:30 America/New_York)</dd>');
    expect(detail).toContain(
      "<dt>Calling hours read in</dt><dd>America/New_York (the callee's, from the number's country (it has one time zone))</dd>",
    );
    expect(detail).toMatch(
      /<tr><td[^>]*>1<\/td><td[^>]*>Busy<\/td><td[^>]*>2058-03-12 14:31:00 UTC \(Tue 10:31 America\/New_York\)<\/td><\/tr>/,
    );
    expect(detail).toMatch(/<tr><td[^>]*>2<\/td><td[^>]*>No answer<\/td><td[^>]*>2058-03-12 15:02:00 UTC/);
    expect(detail).toContain('action="/dashboard/calls/' + retrying + '/cancel"');

    const list = decode((await visitors.A2.get('/dashboard/calls')).body);
    const row = list.split('<tr>').find((r) => r.includes(retrying!))!;
    expect(row).toContain('<span class="badge" data-tone="wait">Retrying at 13 Mar, 09:00 America/New_York</span>');
    // Its attempts under the badge: the one it waits for, of the agent's max_attempts (1 now: the list says 3 of 3),
    // and how the ended ones went, with their times in the title.
    expect(row).toContain(
      '<span class="hint call-facts"><span title="Attempt 1: busy, 2058-03-12 14:31:00 UTC (Tue 10:31 America/New_York); ' +
        'Attempt 2: no answer, 2058-03-12 15:02:00 UTC (Tue 11:02 America/New_York)">Attempt 3 of 3: busy, no answer</span></span>',
    );
    await forceAgent(prismaOf(app), tenants.A2.agentId, { maxAttempts: 5 });
    const allowed = decode((await visitors.A2.get('/dashboard/calls')).body);
    expect(allowed.split('<tr>').find((r) => r.includes(retrying!))).toContain(
      '>Attempt 3 of 5: busy, no answer</span>',
    );
    await forceAgent(prismaOf(app), tenants.A2.agentId, { maxAttempts: 1 });

    // Waiting for its window instead: the badge says whose zone the window is read in, and its title why.
    await forceCall(prismaOf(app), retrying!, { nextAttemptAt: null, scheduledAt: null });
    const waiting = decode((await visitors.A2.get('/dashboard/calls')).body);
    expect(waiting.split('<tr>').find((r) => r.includes(retrying!))).toContain(
      `<span class="badge two-part" data-tone="wait" title="Calling hours read in America/New_York: the callee's, from the number's country (it has one time zone)">` +
        `<span>Waiting for the window until 13 Mar, 09:00</span> <span>(callee's zone, America/New_York)</span></span>`,
    );

    // A call that ended on a machine, after a message was left.
    await forceCall(prismaOf(app), voicemail!, {
      status: 'failed',
      failureReason: 'voicemail',
      answeredBy: 'machine',
      voicemailLeft: true,
      attemptOutcomes: [{ attempt: 1, outcome: 'voicemail', at: '2058-03-12T15:00:00.000Z' }],
    });
    const ended = decode((await visitors.A2.get(`/dashboard/calls/${voicemail}`)).body);
    expect(ended).toContain('<dt>Failure reason</dt><dd>Reached voicemail</dd>');
    expect(ended).toContain('<dt>Answered by</dt><dd>A machine (voicemail)</dd>');
    expect(ended).toContain('<dt>Voicemail message left</dt><dd>Yes</dd>');
    expect(ended).toContain('<dt>Attempts</dt><dd>1</dd>');
    expect(ended).not.toContain('<dt>Waiting</dt>');
    // In the list, its badge says voicemail; one attempt of one allowed: no attempts line.
    const endedRow = decode((await visitors.A2.get('/dashboard/calls')).body)
      .split('<tr>')
      .find((r) => r.includes(voicemail!))!;
    expect(endedRow).toContain(
      '<td data-label="Status"><span class="badge" data-tone="bad">Failed: reached voicemail</span></td>',
    );
    // Still on the machine (its message being left), on its second attempt: the list says so under the badge.
    await forceCall(prismaOf(app), voicemail!, {
      status: 'in_progress',
      failureReason: null,
      attempt: 2,
      voicemailLeft: null,
      endedAt: null,
    });
    const onMachine = decode((await visitors.A2.get('/dashboard/calls')).body)
      .split('<tr>')
      .find((r) => r.includes(voicemail!))!;
    expect(onMachine).toContain(
      '<span class="badge" data-tone="info">In progress</span><span class="hint call-facts"><span title="Attempt 1: voicemail, 2058-03-12 15:00:00 UTC">Attempt 2 of 2: voicemail</span> · Voicemail</span>',
    );
    await forceCall(prismaOf(app), voicemail!, { status: 'failed', failureReason: 'voicemail' });
    // Not dialled: it must not be picked up by the dispatcher during this test.
    await forceCall(prismaOf(app), retrying!, { status: 'failed', failureReason: 'canceled' });
  });

  it('shows every webhook delivery with its attempts: time, HTTP status, latency, error', async () => {
    const { body } = await visitors.A.get(`/dashboard/calls/${calls.detail}`);
    expect(body.indexOf('<code>call.started</code>')).toBeGreaterThan(0);
    expect(body.indexOf('<code>call.completed</code>')).toBeGreaterThan(body.indexOf('<code>call.started</code>'));
    expect(body).toMatch(
      /<tr><td[^>]*>1<\/td><td[^>]*>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/td><td[^>]*>200<\/td><td[^>]*>\d+ ms<\/td><td[^>]*><\/td><\/tr>/,
    );
    expect(body.match(/>Resend<\/button>/g)).toHaveLength(2);
    // A delivered event reads "delivered", not "call.completed succeeded" (issue 21, point 11).
    expect(body).toContain(
      '<code>call.completed</code> <span class="badge status succeeded" data-tone="ok">delivered</span>',
    );
    expect(body).not.toMatch(/>succeeded</);

    const [failedCall] = await insertCalls(prismaOf(app), {
      accountId: tenants.A1.accountId,
      agentId: tenants.A1.agentId,
      count: 1,
      createdAt: new Date(),
    });
    await insertFailedDelivery(prismaOf(app), tenants.A1.accountId, failedCall!);
    const failed = (await visitors.A1.get(`/dashboard/calls/${failedCall}`)).body;
    expect(failed).toMatch(/<td[^>]*>500<\/td><td[^>]*>37 ms<\/td>/);
    expect(failed).toMatch(/<td[^>]*>-<\/td><td[^>]*>15000 ms<\/td><td[^>]*>timed out after 15000 ms &lt;b&gt;<\/td>/);
  });

  it("resends a delivery through the delivery log's action of the call's account, with the same webhook-id", async () => {
    const delivery = await prismaOf(app).webhookDelivery.findFirstOrThrow({
      where: { callId: calls.detail, eventType: 'call.completed' },
    });
    const page = `/dashboard/calls/${calls.detail}`;
    const action = `/dashboard/settings/api-webhooks/deliveries/${delivery.id}/resend`;
    expect((await visitors.A.get(page)).body).toContain(`action="${action}"`);
    const before = receiver.received.length;
    const res = await visitors.A.submit(page, action);
    expect(res.status).toBe(303);
    // Back to the call it was resent from, saying so.
    expect(res.location).toBe(page);
    expect((await visitors.A.get(page)).body).toContain('The delivery will be sent again in a moment');
    const again = await receiver.waitFor(before + 1);
    expect(again.at(-1)!.headers['webhook-id']).toBe(delivery.id);
    expect(
      await prismaOf(app).auditEntry.count({ where: { accountId: tenants.A.accountId, action: 'deliveries_resent' } }),
    ).toBe(1);

    // A client's call: its client user resends from their own settings, an agency user from the client's.
    const [call] = await insertCalls(prismaOf(app), {
      accountId: tenants.A1.accountId,
      agentId: tenants.A1.agentId,
      count: 1,
      createdAt: new Date(),
    });
    const failedId = await insertFailedDelivery(prismaOf(app), tenants.A1.accountId, call!);
    expect((await visitors.A1.get(`/dashboard/calls/${call}`)).body).toContain(
      `action="/dashboard/settings/api-webhooks/deliveries/${failedId}/resend"`,
    );
    expect((await visitors.A.get(`/dashboard/calls/${call}`)).body).toContain(
      `action="/dashboard/clients/${tenants.A1.accountId}/api-webhooks/deliveries/${failedId}/resend"`,
    );

    // The endpoint switched off (a 410): nothing changes, and the answer says why.
    await forceEndpoint(
      prismaOf(app),
      { accountId: tenants.A1.accountId },
      { enabled: false, disabledReason: 'it answered 410 Gone' },
    );
    const refused = await visitors.A1.submit(
      `/dashboard/calls/${call}`,
      `/dashboard/settings/api-webhooks/deliveries/${failedId}/resend`,
    );
    expect(refused.status).toBe(303);
    expect(refused.location).toBe(`/dashboard/calls/${call}`);
    expect((await visitors.A1.get(`/dashboard/calls/${call}`)).body).toContain('it answered 410 Gone');
    expect((await prismaOf(app).webhookDelivery.findUniqueOrThrow({ where: { id: failedId } })).status).toBe('failed');
    expect((await visitors.A1.get(`/dashboard/calls/${call}`)).body).toContain(
      'href="/dashboard/settings/api-webhooks/deliveries"',
    );
  });

  it("is a 404 for another tenant's call, an id that is no call, and no id at all", async () => {
    for (const [visitor, id] of [
      [visitors.A1, calls.b],
      [visitors.A2, calls.a1Numbered],
      [visitors.A1, calls.detail],
      [visitors.B, calls.detail],
      [visitors.A, '00000000-0000-4000-8000-000000000000'],
      [visitors.A, 'not-a-uuid'],
      [visitors.A, 'x'.repeat(150)],
    ] as const) {
      const res = await visitor.get(`/dashboard/calls/${id}`);
      expect(res.status, id).toBe(404);
      expect(res.body).toContain('There is no such page.');
    }
    expect((await visitors.A.get(`/dashboard/calls/${calls.a1Numbered}`)).status).toBe(200);
    expect((await visitors.A.get(`/dashboard/calls/${calls.a1Numbered.toUpperCase()}`)).status).toBe(200);
  });
});
