// The voice-agent runtime's result in the dashboard (issue 47, point 6): the call page shows its outcome, summary,
// data (key order kept), the transcript as a conversation and its https links; the Calls list an Outcome column, a
// filter by outcome (alone, with a search, in an agency's whole scope, for one client), each within the viewer's
// scope only. Hostile results (markup, scripts, right-to-left overrides, very long texts, links of other schemes)
// are escaped, isolated and never links. Results come from forceResult: the state the runtime's POST leaves.
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.js';
import { buildTestApp, prismaOf } from '../helpers/app.js';
import { createClientTenant, createTenant, type Tenant } from '../helpers/fixtures.js';
import { forceCall, forceResult, forceResultBody, insertCalls, removeResult } from '../helpers/seed.js';
import { createUserWithPassword, DASHBOARD_ENV, html, Visitor } from './helpers.js';

const AT = new Date('2058-03-11T12:00:00.000Z');
const CALL_LINK = /href="\/dashboard\/calls\/([0-9a-f-]{36})"/g;
const listed = (body: string) => [...body.matchAll(CALL_LINK)].map((m) => m[1]!);

const RLO = '\u202E';
const LONG = 'x'.repeat(4000);
const HOSTILE = {
  outcome: 'appointment_booked',
  summary: `Booked <script>alert("summary")</script> for ${RLO}Tuesday.\n\nSecond paragraph ${LONG}`,
  // As the runtime wrote it: integer-like keys after others (a JavaScript object would move them first).
  dataJson: '{"z":"last-written-first","10":1,"<b>key</b>":"<img src=x onerror=alert(1)>","a":null,"2":true}',
  transcript: [
    { speaker: 'agent' as const, text: 'Hello <b>there</b>', at: '2058-03-11T12:00:05.000Z' },
    { speaker: 'callee' as const, text: `${RLO}evil reversed`, at: '2058-03-11T12:01:17.000Z' },
  ],
  transcript_url: 'https://runtime.example/t/1?a=1&b=2',
  recording_url: 'https://runtime.example/r/1',
  opt_out: true,
};

let app: App;
const tenants = {} as Record<'A' | 'A1' | 'B', Tenant>;
const visitors = {} as Record<keyof typeof tenants, Visitor>;
const calls = {} as { hostile: string; booked: string; a1Booked: string; a1Other: string; plain: string; b: string };

beforeAll(async () => {
  ({ app } = await buildTestApp({ env: { ...DASHBOARD_ENV } }));
  const prisma = prismaOf(app);
  tenants.A = await createTenant(app.storage, { name: 'Agency A' });
  tenants.A1 = await createClientTenant(app.storage, tenants.A.accountId, { name: 'Client A1' });
  tenants.B = await createTenant(app.storage, { name: 'Tenant B' });
  const one = async (t: Tenant, minutes: number, phoneNumber = '+14155552671') =>
    (
      await insertCalls(prisma, {
        accountId: t.accountId,
        agentId: t.agentId,
        count: 1,
        createdAt: new Date(AT.getTime() + minutes * 60_000),
        phoneNumber,
      })
    )[0]!;
  calls.hostile = await one(tenants.A, 1);
  calls.booked = await one(tenants.A, 2, '+14155550199');
  calls.plain = await one(tenants.A, 3);
  calls.a1Booked = await one(tenants.A1, 4);
  calls.a1Other = await one(tenants.A1, 5);
  calls.b = await one(tenants.B, 6);
  await forceCall(prisma, calls.booked, { name: 'Maria Lopez' });
  await forceResult(prisma, calls.hostile, HOSTILE, { inEvent: true });
  await forceResult(prisma, calls.booked, { outcome: 'appointment_booked', summary: 'Fine.' }, { inEvent: false });
  await forceResult(prisma, calls.a1Booked, { outcome: 'appointment_booked' }, { inEvent: true });
  await forceResult(prisma, calls.a1Other, { outcome: 'not_interested', summary: 'No.' }, { inEvent: true });
  await forceResult(prisma, calls.b, { outcome: 'appointment_booked', summary: 'Secret of B' }, { inEvent: true });
  for (const [name, tenant] of Object.entries(tenants) as [keyof typeof tenants, Tenant][]) {
    await createUserWithPassword(app.storage, tenant.accountId, `${name.toLowerCase()}@results.example`);
    visitors[name] = new Visitor(app);
    visitors[name].ip = `10.9.0.${Object.keys(visitors).length}`;
    expect((await visitors[name].signIn(`${name.toLowerCase()}@results.example`)).status).toBe(303);
  }
});

describe("the call page's result", () => {
  it('shows the outcome, summary, data in the order written, the conversation and the links', async () => {
    const res = await visitors.A.get(`/dashboard/calls/${calls.hostile}`);
    expect(res.status).toBe(200);
    const body = res.body;
    expect(body).toContain('<dd class="result-outcome"><code>appointment_booked</code>');
    expect(body).toContain('The callee asked not to be called again.');
    // Two paragraphs, each isolated; the long one whole.
    expect(body).toContain(
      `<p class="result-summary"><bdi>${html(`Booked <script>alert("summary")</script> for ${RLO}Tuesday.`)}</bdi></p>`,
    );
    expect(body).toContain(`Second paragraph ${LONG}</bdi>`);
    // Data: the runtime's key order, integer-like keys where it wrote them.
    const keys = [...body.matchAll(/<dt><code><bdi>([^<]*)<\/bdi><\/code><\/dt>/g)].map((m) => m[1]);
    expect(keys).toEqual(['z', '10', html('<b>key</b>'), 'a', '2']);
    expect(body).toContain(html('<img src=x onerror=alert(1)>'));
    // The conversation in order, with each line's time from the first.
    expect(body).toMatch(
      /<li class="agent"><time datetime="2058-03-11T12:00:05.000Z">0:00<\/time> <strong>Agent:<\/strong> <bdi>Hello &lt;b&gt;there&lt;\/b&gt;<\/bdi><\/li>/,
    );
    expect(body).toContain(
      `<li class="callee"><time datetime="2058-03-11T12:01:17.000Z">1:12</time> <strong>Callee:</strong> <bdi>${RLO}evil reversed</bdi></li>`,
    );
    expect(body).toContain(
      '<a href="https://runtime.example/t/1?a=1&amp;b=2" rel="noopener noreferrer">Transcript</a>',
    );
    expect(body).toContain('<a href="https://runtime.example/r/1" rel="noopener noreferrer">Recording</a>');
    // Nothing of it is markup.
    expect(body).not.toContain('<script>alert');
    expect(body).not.toContain('<img src=x');
    expect(body).not.toContain('<b>there');
    expect(body).not.toContain("after the call's terminal event");
  });

  it('says when the result came after the terminal event, and when none came', async () => {
    expect((await visitors.A.get(`/dashboard/calls/${calls.booked}`)).body).toContain(
      "after the call's terminal event was sent (the webhook did not carry it)",
    );
    const plain = (await visitors.A.get(`/dashboard/calls/${calls.plain}`)).body;
    expect(plain).toContain("The agent's runtime has not reported a result for this call.");
    expect(plain).not.toContain('result-outcome');
  });

  it('refreshes itself for a while after the call completed, until the result comes', async () => {
    const live = async (id: string) => (await visitors.A.get(`/dashboard/calls/${id}`)).body.includes('hx-get=');
    await forceCall(prismaOf(app), calls.plain, { endedAt: new Date(Date.now() - 30_000) });
    expect(await live(calls.plain)).toBe(true);
    await forceCall(prismaOf(app), calls.plain, { endedAt: new Date(Date.now() - 180_000) });
    expect(await live(calls.plain)).toBe(false);
    // With its result, or ended in the tests' future: nothing to wait for.
    expect(await live(calls.booked)).toBe(false);
    expect(await live(calls.hostile)).toBe(false);
  });

  it('never makes a link of another scheme, even in a row written by hand', async () => {
    await forceResult(prismaOf(app), calls.plain, {});
    await forceResultBody(prismaOf(app), calls.plain, {
      outcome: 'x',
      summary: null,
      data: null,
      transcript: [null, 7, { speaker: 'agent', text: 'Only line' }],
      transcript_url: 'javascript:alert(1)',
      recording_url: 'http://plain.example/r',
      opt_out: false,
      received_at: '2058-03-11T12:10:00.000Z',
    });
    const body = (await visitors.A.get(`/dashboard/calls/${calls.plain}`)).body;
    expect(body).toContain('<code>x</code>');
    expect(body).toContain('<strong>Agent:</strong> <bdi>Only line</bdi>');
    expect(body).not.toContain('javascript:');
    expect(body).not.toContain('http://plain.example');
    await removeResult(prismaOf(app), calls.plain);
  });

  it("is never shown to another tenant, nor to a client for its agency's call", async () => {
    for (const [visitor, id] of [
      [visitors.B, calls.hostile],
      [visitors.A1, calls.hostile],
      [visitors.A, calls.b],
    ] as const) {
      const res = await visitor.get(`/dashboard/calls/${id}`);
      expect(res.status).toBe(404);
      expect(res.body).not.toContain('appointment_booked');
      expect(res.body).not.toContain('Secret of B');
    }
    // A1's own call, seen by its agency and by itself.
    for (const visitor of [visitors.A, visitors.A1])
      expect((await visitor.get(`/dashboard/calls/${calls.a1Other}`)).body).toContain('<code>not_interested</code>');
  });
});

describe('the Calls list by outcome', () => {
  it('has an Outcome column', async () => {
    const body = (await visitors.A.get('/dashboard/calls')).body;
    expect(body).toContain('<th scope="col">Outcome</th>');
    expect(body).toContain('<td data-label="Outcome"><code>not_<wbr>interested</code></td>');
    expect(body).toContain('<td data-label="Outcome"></td>');
  });

  it('has none while no call of the page has an outcome', async () => {
    const body = (await visitors.A.get(`/dashboard/calls?call=${calls.plain}`)).body;
    expect(listed(body)).toEqual([calls.plain]);
    expect(body).not.toContain('<th scope="col">Outcome</th>');
  });

  it("filters by outcome within the viewer's scope only", async () => {
    const ofA = listed((await visitors.A.get('/dashboard/calls?outcome=appointment_booked')).body);
    expect(ofA.sort()).toEqual([calls.hostile, calls.booked, calls.a1Booked].sort());
    // In any case; with blanks around it.
    const upper = listed((await visitors.A.get('/dashboard/calls?outcome=%20Appointment_Booked%20')).body);
    expect(upper.sort()).toEqual(ofA.sort());
    expect(listed((await visitors.A1.get('/dashboard/calls?outcome=appointment_booked')).body)).toEqual([
      calls.a1Booked,
    ]);
    expect(listed((await visitors.B.get('/dashboard/calls?outcome=appointment_booked')).body)).toEqual([calls.b]);
    expect(listed((await visitors.B.get('/dashboard/calls?outcome=not_interested')).body)).toEqual([]);
    // An agency choosing one client.
    expect(
      listed((await visitors.A.get(`/dashboard/calls?outcome=appointment_booked&client=${tenants.A1.accountId}`)).body),
    ).toEqual([calls.a1Booked]);
  });

  it('combines with the other filters and searches', async () => {
    const q = (query: string) => visitors.A.get(`/dashboard/calls?outcome=appointment_booked&${query}`);
    expect(listed((await q('name=maria')).body)).toEqual([calls.booked]);
    expect(listed((await q('number=%2B1415555019')).body)).toEqual([calls.booked]);
    expect(listed((await q('status=completed')).body).length).toBe(3);
    expect(listed((await q('status=failed')).body)).toEqual([]);
    expect(listed((await q(`call=${calls.booked}`)).body)).toEqual([calls.booked]);
    expect(listed((await q(`call=${calls.a1Other}`)).body)).toEqual([]);
    expect(listed((await visitors.A.get('/dashboard/calls?outcome=not_interested&name=maria')).body)).toEqual([]);
  });

  it("suggests the outcome labels of the viewer's calls only", async () => {
    const labels = (body: string) =>
      [
        ...(/<datalist id="outcome-labels">([\s\S]*?)<\/datalist>/.exec(body)?.[1] ?? '').matchAll(/value="([^"]*)"/g),
      ].map((m) => m[1]);
    expect(labels((await visitors.A.get('/dashboard/calls')).body)).toEqual(['appointment_booked', 'not_interested']);
    expect(labels((await visitors.B.get('/dashboard/calls')).body)).toEqual(['appointment_booked']);
  });

  it('refuses what is not an outcome, saying so', async () => {
    const res = await visitors.A.get('/dashboard/calls?outcome=%3Cscript%3E');
    expect(res.status).toBe(400);
    expect(res.body).toContain(html('"<script>" is not an outcome'));
    expect(listed(res.body)).toEqual([]);
  });
});
